package dev.weir.runner.metrics;

import java.util.ArrayList;
import java.util.List;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.runners.core.metrics.MetricsContainerStepMap;
import org.apache.beam.sdk.metrics.MetricResults;

/**
 * The job's Beam metrics: one {@link MetricsContainerImpl} per (task, PTransform), created at
 * task set-up, merged into one result per (step, metric) when read.
 *
 * <p>Why per task and not per step: tasks of one step run on different container threads;
 * separate containers keep their cells uncontended on the hot path. Reading merges them, which
 * costs O(tasks x metrics) per {@link #results()} call, off the hot path.
 *
 * <p>Threading: {@link #containerFor} is called while tasks are being built (any thread, guarded
 * by this object's lock); {@link #results()} may be called from any thread at any time, also while
 * the job runs (the cells are thread-safe and values are cumulative).
 */
public final class StepMetrics {
  private final List<Scoped> containers = new ArrayList<>();

  private record Scoped(String stepName, MetricsContainerImpl container) {}

  /**
   * Creates the container for one task's instance of {@code stepName}.
   *
   * @param stepName the PTransform's full name
   */
  public synchronized MetricsContainerImpl containerFor(String stepName) {
    MetricsContainerImpl container = new MetricsContainerImpl(stepName);
    containers.add(new Scoped(stepName, container));
    return container;
  }

  /**
   * Adds a container filled outside any task (e.g. by a source's {@code split} at translation).
   *
   * @param stepName the PTransform's full name
   */
  public synchronized void register(String stepName, MetricsContainerImpl container) {
    containers.add(new Scoped(stepName, container));
  }

  /**
   * Attempted values, one result per (step, metric), merged over all tasks. Committed values are
   * not supported (asking for them throws {@link UnsupportedOperationException}).
   */
  public MetricResults results() {
    MetricsContainerStepMap merged = new MetricsContainerStepMap();
    List<Scoped> snapshot;
    synchronized (this) {
      snapshot = new ArrayList<>(containers);
    }
    for (Scoped scoped : snapshot) {
      merged.update(scoped.stepName(), scoped.container());
    }
    return MetricsContainerStepMap.asAttemptedOnlyMetricResults(merged);
  }
}
