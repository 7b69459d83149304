package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipelineOptions;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.Values;
import org.apache.beam.sdk.transforms.Watch;
import org.apache.beam.sdk.transforms.Watch.Growth.PollFn;
import org.apache.beam.sdk.transforms.Watch.Growth.PollResult;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Beam's {@code Watch} on Weir (issue 17): a polling transform ends when its termination condition
 * or its poll says so, in batch and streaming (a splittable DoFn resumed by processing-time
 * timers), and one that never ends can be run without blocking and cancelled, as Beam's own
 * tests of KafkaIO's partition watch do. Each run polls for about half a second.
 */
class WatchPipelineTest {

  /** Always the same three outputs, never complete: only the termination condition ends the watch. */
  static final class SameThree extends PollFn<String, Integer> {
    @Override
    public PollResult<Integer> apply(String element, Context c) {
      Instant now = Instant.now();
      return PollResult.incomplete(now, List.of(1, 2, 3)).withWatermark(now);
    }
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void aWatchEndsWhenItsTerminationConditionSays(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PCollection<Integer> outputs = p.apply(Create.of("a"))
        .apply(Watch.growthOf(new SameThree())
            .withPollInterval(Duration.millis(100))
            .withTerminationPerInput(Watch.Growth.afterTotalOf(Duration.millis(500))))
        .apply(Values.create());
    PAssert.that(outputs).containsInAnyOrder(1, 2, 3);
    PipelineResult.State state = p.run().waitUntilFinish(Duration.standardSeconds(60));
    assertThat(state).isEqualTo(PipelineResult.State.DONE);
  }

  /** Poll n returns outputs 1..min(n, 5); complete at the fifth poll. Counts polls in a static (one JVM, one test at a time). */
  static final class GrowsThenCompletes extends PollFn<String, Integer> {
    @Override
    public PollResult<Integer> apply(String element, Context c) {
      int n = POLLS.incrementAndGet();
      List<Integer> out = new ArrayList<>();
      for (int i = 1; i <= Math.min(n, 5); i++) {
        out.add(i);
      }
      Instant now = Instant.now();
      return n >= 5 ? PollResult.complete(now, out) : PollResult.incomplete(now, out).withWatermark(now);
    }
  }

  static final AtomicInteger POLLS = new AtomicInteger();

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void aWatchWithNeverEndsWhenThePollCompletes(boolean streaming) {
    POLLS.set(0);
    Pipeline p = Pipelines.create(streaming);
    PCollection<Integer> outputs = p.apply(Create.of("a"))
        .apply(Watch.growthOf(new GrowsThenCompletes())
            .withPollInterval(Duration.millis(100))
            .withTerminationPerInput(Watch.Growth.never()))
        .apply(Values.create());
    PAssert.that(outputs).containsInAnyOrder(1, 2, 3, 4, 5);
    PipelineResult.State state = p.run().waitUntilFinish(Duration.standardSeconds(60));
    assertThat(state).isEqualTo(PipelineResult.State.DONE);
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void aWatchEndsAfterNoNewOutput(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PCollection<Integer> outputs = p.apply(Create.of("a"))
        .apply(Watch.growthOf(new SameThree())
            .withPollInterval(Duration.millis(100))
            .withTerminationPerInput(Watch.Growth.afterTimeSinceNewOutput(Duration.millis(500))))
        .apply(Values.create());
    PAssert.that(outputs).containsInAnyOrder(1, 2, 3);
    PipelineResult.State state = p.run().waitUntilFinish(Duration.standardSeconds(60));
    assertThat(state).isEqualTo(PipelineResult.State.DONE);
  }

  /**
   * Beam's pattern for a pipeline that never ends (KafkaIO's WatchForKafkaTopicPartitionsTest):
   * TestPipelineOptions#blockOnRun=false, run, wait a little, cancel. Before the fix
   * TestWeirRunner waited for the job to finish whatever blockOnRun said, so run() never returned.
   */
  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  @Timeout(value = 120) // a hang guard: the run is expected to return at once
  void aWatchThatNeverEndsRunsWithoutBlockingWhenAskedTo(boolean streaming) throws Exception {
    WeirPipelineOptions options = Pipelines.options(streaming);
    options.as(TestPipelineOptions.class).setBlockOnRun(false);
    Pipeline p = Pipeline.create(options);
    p.apply(Create.of("a"))
        .apply(Watch.growthOf(new SameThree())
            .withPollInterval(Duration.millis(100))
            .withTerminationPerInput(Watch.Growth.never()));
    PipelineResult result = p.run();
    assertThat(result.waitUntilFinish(Duration.millis(200))).isEqualTo(PipelineResult.State.RUNNING);
    assertThat(result.cancel()).isEqualTo(PipelineResult.State.CANCELLED);
  }
}
