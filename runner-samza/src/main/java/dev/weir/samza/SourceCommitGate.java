package dev.weir.samza;

/**
 * When a hosted task may commit, given that its Beam source envelopes carry a position only at
 * the end of each drained batch (runner's {@code BeamSourceSystemFactory}; the others carry a null
 * offset). samza-core 1.8 checkpoints each input's offset of the last processed envelope that had
 * one ({@code OffsetManager.update} skips null offsets), so a commit right after a null-offset
 * source envelope would checkpoint an earlier position while the task's state already holds the
 * later elements: after a restart they would be read and counted again. A due commit therefore
 * waits until the last source envelope processed carried a position. Every batch ends with one, at
 * most {@code PartitionConsumer.MAX_ENVELOPES_PER_POLL} (1024) envelopes apart, so the delay is
 * bounded by one batch; intermediate-topic envelopes always have offsets and never hold a commit.
 *
 * <p>Threading: one task's thread (samza-core calls a task serially).
 */
final class SourceCommitGate {
  private boolean atPosition = true;
  private boolean due;

  /** A source envelope with offset {@code offset} (null: inside a batch) was processed. */
  void sourceEnvelope(String offset) {
    atPosition = offset != null;
  }

  /** The commit interval passed: commit as soon as {@link #mayCommit()}. */
  void commitDue() {
    due = true;
  }

  /** Whether a commit is due and the task is at a position; if so the commit is taken (no longer due). */
  boolean takeCommit() {
    if (due && atPosition) {
      due = false;
      return true;
    }
    return false;
  }

  /** Whether the last source envelope processed carried a position (true before any). */
  boolean mayCommit() {
    return atPosition;
  }

  /** Whether a commit waits for a position. */
  boolean isDue() {
    return due;
  }
}
