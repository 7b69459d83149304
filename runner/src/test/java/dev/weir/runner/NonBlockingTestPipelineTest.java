package dev.weir.runner;

import static org.junit.Assert.assertEquals;

import java.util.List;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestPipelineOptions;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.Values;
import org.apache.beam.sdk.transforms.Watch;
import org.apache.beam.sdk.transforms.Watch.Growth.PollFn;
import org.apache.beam.sdk.transforms.Watch.Growth.PollResult;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;

/**
 * Beam's TestPipeline (a JUnit 4 rule) with {@code blockOnRun=false} on Weir, the shape of KafkaIO's
 * WatchForKafkaTopicPartitionsTest: a Watch that never ends, a PAssert on it, run, wait 10 ms,
 * cancel. Before issue 17's fix {@code run()} never returned; then TestPipeline counted the
 * PAssert's successes of a job that had not run it yet ("Expected 1 successful assertions, but
 * found 0"), which Beam's Direct runner avoids by marking metrics unsupported after a run.
 */
public class NonBlockingTestPipelineTest {
  private static TestPipelineOptions options() {
    TestPipelineOptions options = Pipelines.options(true).as(TestPipelineOptions.class);
    options.setBlockOnRun(false);
    return options;
  }

  @Rule public final transient TestPipeline p = TestPipeline.fromOptions(options());

  /** Always the same outputs, never complete. */
  static final class SameTwo extends PollFn<String, Integer> {
    @Override
    public PollResult<Integer> apply(String element, Context c) {
      Instant now = Instant.now();
      return PollResult.incomplete(now, List.of(1, 2)).withWatermark(now);
    }
  }

  @Test(timeout = 120_000) // a hang guard: run() returns at once
  public void aPipelineThatNeverEndsRunsWithoutBlocking() throws Exception {
    PCollection<Integer> outputs = p.apply(Create.of("a"))
        .apply(Watch.growthOf(new SameTwo()).withPollInterval(Duration.millis(100))
            .withTerminationPerInput(Watch.Growth.never()))
        .apply(Values.create());
    PAssert.that(outputs).containsInAnyOrder(1, 2);
    PipelineResult result = p.run();
    assertEquals(PipelineResult.State.RUNNING, result.waitUntilFinish(Duration.millis(10)));
    assertEquals(PipelineResult.State.CANCELLED, result.cancel());
  }
}
