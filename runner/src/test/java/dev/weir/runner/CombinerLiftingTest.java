package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.WithTimestamps;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Sessions;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Combine.perKey is lifted for non-merging windows (and only then), with the same results. */
class CombinerLiftingTest {

  private static PCollection<KV<String, Integer>> input(Pipeline p) {
    List<KV<String, Integer>> values = new ArrayList<>();
    for (int i = 0; i < 600; i++) {
      values.add(KV.of("k" + (i % 3), i));
    }
    return p.apply(Create.of(values))
        .apply(WithTimestamps.of(kv -> new Instant((long) kv.getValue())));
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void liftedWindowedSumIsExact(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PCollection<KV<String, Integer>> sums = input(p)
        .apply(Window.into(FixedWindows.of(Duration.millis(300))))
        .apply(Sum.integersPerKey());
    List<KV<String, Integer>> expected = new ArrayList<>();
    for (int k = 0; k < 3; k++) {
      int first = 0;
      int second = 0;
      for (int i = k; i < 600; i += 3) {
        if (i < 300) {
          first += i;
        } else {
          second += i;
        }
      }
      expected.add(KV.of("k" + k, first));
      expected.add(KV.of("k" + k, second));
    }
    PAssert.that(sums).containsInAnyOrder(expected);
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void combiningGroupByKeyOverMergingSessionsIsExact(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    // every key has a value every 3 ms: with a 5 ms gap its sessions merge into one
    PCollection<KV<String, Integer>> sums = input(p)
        .apply(Window.into(Sessions.withGapDuration(Duration.millis(5))))
        .apply(Sum.integersPerKey());
    List<KV<String, Integer>> expected = new ArrayList<>();
    for (int k = 0; k < 3; k++) {
      int sum = 0;
      for (int i = k; i < 600; i += 3) {
        sum += i;
      }
      expected.add(KV.of("k" + k, sum));
    }
    PAssert.that(sums).containsInAnyOrder(expected);
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
  }

  @Test
  void planHasAPartialCombineBeforeTheShuffleForFixedWindows_andACombiningGroupByKeyForSessions() {
    Pipeline fixed = Pipelines.create(false);
    input(fixed).apply(Window.into(FixedWindows.of(Duration.millis(300)))).apply(Sum.integersPerKey());
    JobPlan lifted = WeirRunner.translate(fixed, Pipelines.options(false));
    assertThat(kinds(lifted)).as("default windowing: the merge takes the one-pane path")
        .contains("PartialCombine", "CombineMerge/OnePane").doesNotContain("GroupByKey");

    Pipeline sessions = Pipelines.create(false);
    input(sessions).apply(Window.into(Sessions.withGapDuration(Duration.millis(5)))).apply(Sum.integersPerKey());
    JobPlan notLifted = WeirRunner.translate(sessions, Pipelines.options(false));
    assertThat(kinds(notLifted)).as("sessions: combined in the GroupByKey, on the merging one-pane path")
        .contains("CombiningGroupByKey/OnePane").doesNotContain("PartialCombine", "GroupByKey");
  }

  @Test
  void planDoesNotLiftUnderADataDrivenTrigger_butCombinesInTheGroupByKey() {
    // Nexmark Q6's shape: one pane per element in the global window; lifting would fire fewer.
    Pipeline perElement = Pipelines.create(false);
    input(perElement)
        .apply(Window.<KV<String, Integer>>into(new GlobalWindows())
            .triggering(Repeatedly.forever(AfterPane.elementCountAtLeast(1)))
            .discardingFiredPanes())
        .apply(Sum.integersPerKey());
    JobPlan plan = WeirRunner.translate(perElement, Pipelines.options(false));
    assertThat(kinds(plan)).contains("CombiningGroupByKey").doesNotContain("PartialCombine", "GroupByKey");
  }

  private static List<String> kinds(JobPlan plan) {
    List<String> kinds = new ArrayList<>();
    plan.stages().forEach(s -> s.nodes().stream().map(NodeSpec::kind).forEach(kinds::add));
    return kinds;
  }
}
