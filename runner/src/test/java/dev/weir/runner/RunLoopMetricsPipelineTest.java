package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.metrics.RunLoopMetrics;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.junit.jupiter.api.Test;

/** The run loop's phase timings are reachable from the job's result and move as the job runs. */
class RunLoopMetricsPipelineTest {

  @Test
  void eachContainersRunLoopReportsIterationsPhaseTimesAndUtilization() {
    Pipeline p = Pipelines.create(false);
    PCollection<KV<String, Long>> counts = p.apply(Create.of(List.of("a", "b", "a", "c", "a")))
        .apply(MapElements.into(TypeDescriptors.strings()).via((String s) -> s))
        .apply(Count.perElement());
    PAssert.that(counts).containsInAnyOrder(KV.of("a", 3L), KV.of("b", 1L), KV.of("c", 1L));
    PipelineResult result = p.run();
    result.waitUntilFinish();

    List<RunLoopMetrics.Snapshot> loops = ((WeirPipelineResult) result).runLoopMetrics();
    assertThat(loops).as("one per container").hasSize(2);
    for (RunLoopMetrics.Snapshot loop : loops) {
      assertThat(loop.iterations()).isPositive();
      assertThat(loop.phaseNs(RunLoopMetrics.Phase.PROCESS_ENVELOPES)).isPositive();
      assertThat(loop.busyNs()).isPositive();
      assertThat(loop.utilization()).isBetween(0.0, 1.0).isPositive();
    }
  }
}
