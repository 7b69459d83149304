package dev.weir.samza;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A due commit waits for a source envelope with a position, then is taken once. */
class SourceCommitGateTest {
  @Test
  void dueCommitWaitsAfterANullOffsetEnvelopeAndIsTakenAtTheNextPosition() {
    SourceCommitGate gate = new SourceCommitGate();
    assertThat(gate.takeCommit()).as("nothing due").isFalse();
    gate.sourceEnvelope(null); // inside a batch
    gate.commitDue();
    assertThat(gate.takeCommit()).as("after a null-offset source envelope").isFalse();
    gate.sourceEnvelope(null);
    assertThat(gate.takeCommit()).isFalse();
    gate.sourceEnvelope("w1.pos");
    assertThat(gate.takeCommit()).as("right after the envelope with a position").isTrue();
    assertThat(gate.takeCommit()).as("taken once").isFalse();
  }

  @Test
  void commitIsTakenAtOnceWhenTheLastSourceEnvelopeHadAPositionOrNoneCameYet() {
    SourceCommitGate gate = new SourceCommitGate();
    gate.commitDue();
    assertThat(gate.takeCommit()).as("no source envelope since start: the restored checkpoint's position").isTrue();
    gate.sourceEnvelope("w1.pos");
    gate.commitDue();
    assertThat(gate.takeCommit()).isTrue();
  }
}
