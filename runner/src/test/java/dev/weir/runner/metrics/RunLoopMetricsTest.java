package dev.weir.runner.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.metrics.RunLoopMetrics.Phase;
import org.junit.jupiter.api.Test;

/** The run loop's phase timings: cumulative per phase, iterations, utilization. */
class RunLoopMetricsTest {

  @Test
  void phasesAccumulateAndUtilizationIsBusyOverBusyPlusIdle() {
    RunLoopMetrics metrics = new RunLoopMetrics();
    assertThat(metrics.snapshot().utilization()).isZero();

    metrics.add(Phase.PROCESS_ENVELOPES, 300);
    metrics.add(Phase.FIRE_TIMERS, 100);
    metrics.add(Phase.IDLE, 400);
    metrics.iterationDone();
    metrics.add(Phase.PROCESS_ENVELOPES, 200);
    metrics.iterationDone();

    RunLoopMetrics.Snapshot snapshot = metrics.snapshot();
    assertThat(snapshot.iterations()).isEqualTo(2);
    assertThat(snapshot.phaseNs(Phase.PROCESS_ENVELOPES)).isEqualTo(500);
    assertThat(snapshot.phaseNs(Phase.TICK)).isZero();
    assertThat(snapshot.busyNs()).isEqualTo(600);
    assertThat(snapshot.idleNs()).isEqualTo(400);
    assertThat(snapshot.utilization()).isEqualTo(0.6);
    assertThat(snapshot.toString()).contains("iterations=2", "PROCESS_ENVELOPESNs=500");
  }

  @Test
  void aSnapshotDoesNotChangeAfterwards() {
    RunLoopMetrics metrics = new RunLoopMetrics();
    metrics.add(Phase.COMMIT, 5);
    RunLoopMetrics.Snapshot before = metrics.snapshot();
    metrics.add(Phase.COMMIT, 5);
    assertThat(before.phaseNs(Phase.COMMIT)).isEqualTo(5);
    assertThat(metrics.snapshot().phaseNs(Phase.COMMIT)).isEqualTo(10);
  }
}
