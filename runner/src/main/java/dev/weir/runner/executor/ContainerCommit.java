package dev.weir.runner.executor;

import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.operators.BundleFinalizers;
import dev.weir.runner.state.ContainerState;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A container's commit point, taken at the end of every run-loop iteration in which one of its
 * tasks finished a bundle: (1) the state is committed if an operator wrote any
 * ({@link ContainerState#commitIfRequested()}) or a task took a source checkpoint mark, after
 * which every task hears of the commit ({@link StageTask#committed()}: it finalizes the marks it
 * held), then (2) the metrics the tasks staged when their bundles
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
 * <p>Monitoring: state commits are counted and timed ({@link #commits()}, {@link #commitNs()},
 * {@link #lastCommitNs()}): one {@link System#nanoTime()} per commit point, opaque writes.
 *
 * <p>Threading: confined to the container's thread, except the monitoring reads (any thread).
 */
final class ContainerCommit {
  private final ContainerState state;
  private final StepMetrics.Committer metrics;
  private final BundleFinalizers finalizers = new BundleFinalizers();
  private final List<StageTask> tasks;
  private boolean bundlesFinished;
  /** State commits, their cumulative ns, the last one's ns; written by the container thread (opaque). */
  private final AtomicLongArray commitStats = new AtomicLongArray(3);

  ContainerCommit(ContainerState state, StepMetrics.Committer metrics, List<StageTask> tasks) {
    this.state = state;
    this.metrics = metrics;
    this.tasks = tasks;
  }

  /** The bundle finalization of the container's operators. */
  BundleFinalizers finalizers() {
    return finalizers;
  }

  /** The container's state. */
  ContainerState state() {
    return state;
  }

  /** The committer of the container's metrics; tasks create their step containers through it. */
  StepMetrics.Committer metrics() {
    return metrics;
  }

  /** A task finished a bundle; the next {@link #commitIfNeeded()} commits. A field write. */
  void bundleFinished() {
    bundlesFinished = true;
  }

  /**
   * Commits the state if requested, then, if a bundle finished since the last commit, the metrics,
   * and runs the finished bundles' finalization callbacks.
   */
  void commitIfNeeded() {
    long startNs = System.nanoTime();
    if (state.commitIfRequested()) {
      long ns = System.nanoTime() - startNs;
      commitStats.setOpaque(0, commitStats.getPlain(0) + 1);
      commitStats.setOpaque(1, commitStats.getPlain(1) + ns);
      commitStats.setOpaque(2, ns);
      for (StageTask task : tasks) {
        task.committed();
      }
    }
    if (bundlesFinished || finalizers.waiting() > 0) {
      bundlesFinished = false;
      metrics.commit();
      finalizers.runCommitted();
    }
  }

  /** State commits so far. Any thread. */
  long commits() {
    return commitStats.getOpaque(0);
  }

  /** Cumulative ns spent in state commits (object-cache flush and storage commit). Any thread. */
  long commitNs() {
    return commitStats.getOpaque(1);
  }

  /** Duration of the last state commit in ns, 0 before the first. Any thread. */
  long lastCommitNs() {
    return commitStats.getOpaque(2);
  }

  /**
   * The last commit of a container whose tasks all ended normally and are closed: metrics
   * reported by teardown included, so committed values equal attempted ones.
   */
  void commitFinal() {
    metrics.commitAll();
  }

  /**
   * For a container whose loop failed, after closing its tasks: the metric updates its steps
   * buffered (open bundles, teardown) join the attempted values; nothing is committed.
   */
  void flushAttemptedMetrics() {
    metrics.flushAttempted();
  }
}
