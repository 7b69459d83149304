package dev.weir.runner.task;

import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.operators.BundleFinalizers;
import dev.weir.runner.state.ContainerState;
import org.apache.beam.sdk.annotations.Internal;

/**
 * A container's commit point, taken at the end of every run-loop iteration in which one of its
 * tasks finished a bundle: (1) the state is committed if an operator wrote any
 * ({@link ContainerState#commitIfRequested()}) or a task took a source checkpoint mark, after
 * which the container's {@code onStateCommitted} callback runs (the container tells its tasks,
 * {@link StageTask#committed()}, which finalize the marks they held), then (2) the metrics the tasks staged when their bundles
 * finished are published as committed values ({@link StepMetrics.Committer#commit()}), then (3) the bundle finalization
 * callbacks of the bundles finished before the commit run ({@link BundleFinalizers#runCommitted()}).
 *
 * <p>What "committed" means here: the bundles finished before the commit point have handed their
 * outputs to the executor's in-process streams (or the task's outbox, which drains in order) and
 * their state is in the container's storage. In a job that takes checkpoints, the state commit
 * waits for the checkpoint ({@code ContainerState#commitIfRequested()} then only bounds the
 * staged writes), and source marks are finalized when a checkpoint completes, not here; what
 * survives a crash is the last complete checkpoint ({@code checkpoint.CheckpointCoordinator}).
 *
 * <p>Monitoring: state commits are counted and timed ({@link #stats()}): one
 * {@link System#nanoTime()} per commit point, opaque writes of plain fields.
 *
 * <p>Threading: confined to the container's thread, except the monitoring reads (any thread).
 */
@Internal
public final class ContainerCommit {
  /**
   * A container's state commits so far, as monitoring reads them.
   *
   * @param commits state commits (object-cache flush and storage commit) so far
   * @param totalNs their cumulative duration, ns
   * @param lastNs the last one's duration, ns; 0 before the first
   */
  public record CommitStats(long commits, long totalNs, long lastNs) {
    /** No commit yet (a container whose state is not open). */
    public static final CommitStats NONE = new CommitStats(0, 0, 0);
  }

  private final ContainerState state;
  private final StepMetrics.Committer metrics;
  private final BundleFinalizers finalizers = new BundleFinalizers();
  /** Runs after each state commit: the container tells its tasks ({@link StageTask#committed()}). */
  private final Runnable onStateCommitted;
  private boolean bundlesFinished;
  /** The latest commit statistics; written by the container thread only, read by any (volatile). */
  private volatile CommitStats stats = CommitStats.NONE;

  /**
   * @param state the container's state
   * @param metrics the committer of the container's step metrics
   * @param onStateCommitted run on the container thread after every state commit (tasks finalize
   *     the source marks the commit covers); never calls back into this commit point
   */
  public ContainerCommit(ContainerState state, StepMetrics.Committer metrics, Runnable onStateCommitted) {
    this.state = state;
    this.metrics = metrics;
    this.onStateCommitted = onStateCommitted;
  }

  /** The bundle finalization of the container's operators. */
  public BundleFinalizers finalizers() {
    return finalizers;
  }

  /** The container's state. */
  public ContainerState state() {
    return state;
  }

  /** The committer of the container's metrics; tasks create their step containers through it. */
  public StepMetrics.Committer metrics() {
    return metrics;
  }

  /** A task finished a bundle; the next {@link #commitIfNeeded()} commits. A field write. */
  public void bundleFinished() {
    bundlesFinished = true;
  }

  /**
   * Commits the state if requested, then, if a bundle finished since the last commit, the metrics,
   * and runs the finished bundles' finalization callbacks.
   */
  public void commitIfNeeded() {
    long startNs = System.nanoTime();
    if (state.commitIfRequested()) {
      long ns = System.nanoTime() - startNs;
      CommitStats before = stats;
      stats = new CommitStats(before.commits() + 1, before.totalNs() + ns, ns); // once per state commit
      onStateCommitted.run();
    }
    if (bundlesFinished || finalizers.waiting() > 0) {
      bundlesFinished = false;
      metrics.commit();
      finalizers.runCommitted();
    }
  }

  /** The state commits so far. Any thread. */
  public CommitStats stats() {
    return stats;
  }

  /**
   * The last commit of a container whose tasks all ended normally and are closed: metrics
   * reported by teardown included, so committed values equal attempted ones.
   */
  public void commitFinal() {
    metrics.commitAll();
  }

  /**
   * For a container whose loop failed, after closing its tasks: the metric updates its steps
   * buffered (open bundles, teardown) join the attempted values; nothing is committed.
   */
  public void flushAttemptedMetrics() {
    metrics.flushAttempted();
  }
}
