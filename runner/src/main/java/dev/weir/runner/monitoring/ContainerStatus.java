package dev.weir.runner.monitoring;

import dev.weir.runner.metrics.RunLoopMetrics;
import dev.weir.runner.task.ContainerCommit;
import dev.weir.runner.task.TaskStats;
import dev.weir.state.cache.ObjectCacheStats;
import java.util.List;
import org.apache.beam.sdk.annotations.Internal;

/**
 * What monitoring reads of one running container: read-only views of counters its run loop keeps
 * anyway, so that monitoring never reaches into the loop or its tasks (Samza's
 * {@code MetricsRegistry} feeding its {@code JmxReporter} is the model). Implemented by the
 * executor's container.
 *
 * <p>Threading: every method from any thread, while the container runs and after; no locks.
 */
@Internal
public interface ContainerStatus {
  /** The container's id, from 0. */
  int id();

  /** The container's tasks, in the order it runs them; a fixed list. */
  List<TaskStatus> tasks();

  /** Where the run loop spent its time so far (ns per phase, iterations, utilization). */
  RunLoopMetrics.Snapshot runLoop();

  /** The container's state commits so far ({@link ContainerCommit.CommitStats#NONE} before its state opened). */
  ContainerCommit.CommitStats commits();

  /** Its object cache's counters, or null before its state opened. */
  ObjectCacheStats cache();

  /**
   * One task as monitoring reads it.
   *
   * @param name the task's name, e.g. {@code stage-2-p0}
   * @param stats its live counters (events, bundles, watermarks)
   */
  record TaskStatus(String name, TaskStats stats) {}
}
