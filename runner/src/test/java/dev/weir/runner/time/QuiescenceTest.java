package dev.weir.runner.time;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The quiescence probe a test stream waits on before each event. */
class QuiescenceTest {

  @Test
  void quiescentOnlyAfterNothingInFlightAndAFurtherTickOfEveryContainerAtTheClock() {
    Quiescence q = new Quiescence(2);
    Quiescence.Probe probe = q.probe();
    assertThat(probe.isQuiescent(100)).as("no container ticked at the clock yet").isFalse();
    q.ticked(0, 100);
    q.ticked(1, 100);
    assertThat(probe.isQuiescent(100)).as("first observation only arms").isFalse();
    assertThat(probe.isQuiescent(100)).as("no further tick yet").isFalse();
    q.ticked(0, 100);
    assertThat(probe.isQuiescent(100)).as("container 1 has not ticked again").isFalse();
    q.ticked(1, 100);
    assertThat(probe.isQuiescent(100)).isTrue();

    q.sent(); // an envelope in flight
    q.ticked(0, 100);
    q.ticked(1, 100);
    assertThat(probe.isQuiescent(100)).isFalse();
    q.processed();
    assertThat(probe.isQuiescent(100)).as("re-armed after the envelope").isFalse();
    q.ticked(0, 100);
    q.ticked(1, 100);
    assertThat(probe.isQuiescent(100)).isTrue();

    assertThat(probe.isQuiescent(200)).as("the clock moved: containers must tick at it").isFalse();
    q.exited(1); // an exited container no longer holds anything back
    q.ticked(0, 200);
    assertThat(probe.isQuiescent(200)).isFalse();
    q.ticked(0, 200);
    assertThat(probe.isQuiescent(200)).isTrue();
  }

  @Test
  void aProbeWaitingOnlyForTicksAsksContainersToTickAtOnceUntilItFires() {
    Quiescence q = new Quiescence(1);
    Quiescence.Probe probe = q.probe();
    q.sent();
    assertThat(probe.isQuiescent(100)).isFalse();
    assertThat(q.awaited()).as("an envelope in flight: ticks would not help yet").isFalse();
    q.processed();
    assertThat(probe.isQuiescent(100)).isFalse();
    assertThat(q.awaited()).as("nothing in flight: only ticks are missing").isTrue();
    q.ticked(0, 100);
    assertThat(probe.isQuiescent(100)).as("arms").isFalse();
    assertThat(q.awaited()).isTrue();
    q.ticked(0, 100);
    assertThat(probe.isQuiescent(100)).isTrue();
    assertThat(q.awaited()).as("fired: containers go back to their tick period").isFalse();
  }

  @Test
  void settledOnlyWhileAProbeWaitsAndNothingIsInFlight() {
    Quiescence q = new Quiescence(1);
    Quiescence.Probe probe = q.probe();
    assertThat(q.settled()).as("no probe waits yet").isFalse();
    assertThat(probe.isQuiescent(100)).isFalse();
    assertThat(q.settled()).as("a probe waits, nothing in flight: bundles may close").isTrue();
    q.sent(); // e.g. what a closed bundle emitted
    assertThat(q.settled()).as("its receiver's bundle waits for it").isFalse();
    q.processed();
    assertThat(q.settled()).isTrue();
  }

  @Test
  void replayingFromTheFirstProbeUntilEveryProbeFinished() {
    Quiescence q = new Quiescence(1);
    assertThat(q.replaying()).isFalse();
    Quiescence.Probe first = q.probe();
    Quiescence.Probe second = q.probe();
    assertThat(q.replaying()).isTrue();
    first.finish();
    first.finish(); // idempotent
    assertThat(q.replaying()).as("the second source still replays").isTrue();
    second.finish();
    assertThat(q.replaying()).isFalse();
  }
}
