package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.metrics.RunLoopMetrics;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.junit.jupiter.api.Test;

/**
 * The run loop's phase timings, read from the job's result: one snapshot per container whose
 * phases add up to no more than the job's wall time, whose utilization is busy over busy plus idle,
 * and in which a DoFn's time lands in the phase that runs it (processing envelopes).
 */
class RunLoopMetricsPipelineTest {
  private static final int SLOW_ELEMENTS = 10;
  private static final long SLEEP_MS = 20;

  @Test
  void eachContainersPhasesAddUpToNoMoreThanTheWallTimeAndUtilizationIsBusyOverTotal() {
    Pipeline p = Pipelines.create(false);
    PCollection<KV<String, Long>> counts = p.apply(Create.of(List.of("a", "b", "a", "c", "a")))
        .apply(MapElements.into(TypeDescriptors.strings()).via((String s) -> s))
        .apply(Count.perElement());
    PAssert.that(counts).containsInAnyOrder(KV.of("a", 3L), KV.of("b", 1L), KV.of("c", 1L));
    long startNs = System.nanoTime();
    PipelineResult result = p.run();
    result.waitUntilFinish();
    long wallNs = System.nanoTime() - startNs;

    List<RunLoopMetrics.Snapshot> loops = ((WeirPipelineResult) result).runLoopMetrics();
    assertThat(loops).as("one per container").hasSize(2);
    for (RunLoopMetrics.Snapshot loop : loops) {
      long sum = 0;
      for (RunLoopMetrics.Phase phase : RunLoopMetrics.Phase.values()) {
        assertThat(loop.phaseNs(phase)).as(phase.name()).isNotNegative();
        sum += loop.phaseNs(phase);
      }
      assertThat(sum).as("busy plus idle is every phase").isEqualTo(loop.busyNs() + loop.idleNs());
      assertThat(sum).as("the phases of one thread add up to no more than the job's wall time")
          .isLessThanOrEqualTo(wallNs);
      assertThat(loop.iterations()).isPositive();
      assertThat(loop.phaseNs(RunLoopMetrics.Phase.PROCESS_ENVELOPES)).isPositive();
      assertThat(loop.utilization()).isBetween(0.0, 1.0)
          .isEqualTo((double) loop.busyNs() / (loop.busyNs() + loop.idleNs()));
    }
  }

  @Test
  void aDoFnsTimeLandsInTheProcessEnvelopesPhase() {
    Pipeline p = Pipelines.create(false);
    p.apply(Create.of(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10))).apply(ParDo.of(new Sleeping()));
    PipelineResult result = p.run();
    result.waitUntilFinish();

    long processNs = 0;
    long busyNs = 0;
    for (RunLoopMetrics.Snapshot loop : ((WeirPipelineResult) result).runLoopMetrics()) {
      processNs += loop.phaseNs(RunLoopMetrics.Phase.PROCESS_ENVELOPES);
      busyNs += loop.busyNs();
    }
    assertThat(processNs).as("the DoFn's sleeps are processing time")
        .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(SLOW_ELEMENTS * SLEEP_MS));
    assertThat(processNs).isLessThanOrEqualTo(busyNs);
  }

  /** Sleeps {@value #SLEEP_MS} ms per element, in {@code @ProcessElement}. */
  static final class Sleeping extends DoFn<Integer, Integer> {
    @ProcessElement
    public void process(@Element Integer x, OutputReceiver<Integer> out) throws InterruptedException {
      Thread.sleep(SLEEP_MS);
      out.output(x);
    }
  }
}
