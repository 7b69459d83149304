package dev.weir.runner.source;

import dev.weir.runner.metrics.StepScope;
import java.util.List;
import org.apache.beam.sdk.annotations.Internal;

/**
 * The checkpoint marks of a task's unbounded source splits: taken when the task finishes a bundle
 * that read elements ({@link #afterBundle()}, which asks the container for a commit), and
 * finalized after a commit at which the task's outbox is empty ({@link #committed}), because
 * only then are the marked elements' outputs all downstream. If the outbox was blocked at that
 * commit, the marks wait for a commit after it drained ({@link #afterDrain}).
 *
 * <p>Threading: confined to the task's container thread.
 */
@Internal
public final class SourceCheckpoints {
  private final SourcePartition[] sources;
  /** Whether some split holds checkpoint marks waiting for a commit. */
  private boolean marksHeld;
  /** Asks the container's state for a commit at its next commit point; set at {@link #open}. */
  private Runnable requestCommit;
  private boolean disabled;

  /** @param sources the task's unbounded source splits, usually none or one */
  public SourceCheckpoints(List<SourcePartition> sources) {
    this.sources = sources.toArray(new SourcePartition[0]);
  }

  /**
   * Takes no marks per bundle: the job takes checkpoints, which take and finalize the marks
   * themselves ({@code SourcePartition#position()}, {@code SourcePartition#checkpointCompleted()}).
   */
  public void disable() {
    disabled = true;
  }

  /**
   * Sets, at the task's open, how to ask for a commit: {@code requestCommit} asks the container's
   * state to commit at its next commit point (a field write, e.g. {@code ContainerState::requestCommit}).
   */
  public void open(Runnable requestCommit) {
    this.requestCommit = requestCommit;
  }

  /** A bundle finished (its outputs left the operators): each split takes its marks. */
  public void afterBundle() {
    if (disabled) {
      return;
    }
    for (SourcePartition source : sources) {
      if (source.checkpoint()) {
        marksHeld = true;
        requestCommit.run();
      }
    }
  }

  /** The outbox drained some envelopes: once it is empty, held marks need a commit. */
  public void afterDrain(boolean outboxBlocked) {
    if (marksHeld && !outboxBlocked) {
      requestCommit.run(); // the held marks' outputs are all downstream now
    }
  }

  /**
   * The container committed: unless the outbox still holds output, the held marks are covered
   * by the commit and are finalized now, each in the source transform's step (metrics and span).
   */
  public void committed(boolean outboxBlocked, StepScope scope, StepScope.Step sourceStep) {
    if (!marksHeld || outboxBlocked) {
      return;
    }
    marksHeld = false;
    for (SourcePartition source : sources) {
      StepScope.Step previous = scope.enter(sourceStep);
      try {
        source.finalizeCheckpoints();
      } finally {
        scope.exit(previous);
      }
    }
  }
}
