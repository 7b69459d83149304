package dev.weir.runner.metrics;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.metrics.BoundedTrie;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Distribution;
import org.apache.beam.sdk.metrics.Gauge;
import org.apache.beam.sdk.metrics.Histogram;
import org.apache.beam.sdk.metrics.MetricName;
import org.apache.beam.sdk.metrics.MetricsContainer;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.beam.sdk.metrics.StringSet;
import org.apache.beam.sdk.util.HistogramData;

/**
 * The metrics container a container thread installs once in Beam's {@link MetricsEnvironment};
 * it forwards every call to the container of the PTransform currently running on that thread.
 *
 * <p>Why: Beam's {@code Metrics.counter(...).inc()} resolves the thread's current container on
 * every call. Installing a per-step container through {@code MetricsEnvironment} around each
 * DoFn call would cost a thread-local write per call; here the thread-local is written once per
 * thread and switching steps is a plain field write ({@link #swap}), done by the executor's
 * {@code StepScope} around every call into an operator (the same bracket that switches the
 * profiling span). Nothing here builds strings or looks anything up by name.
 *
 * <p>Threading: one instance per container thread, used only by that thread. The step containers
 * it points to are read by other threads through {@link StepMetrics}.
 */
@Internal
public final class MetricsSwitch implements MetricsContainer {
  private static final long serialVersionUID = 1L;

  /** Receives metrics reported while no step is current (e.g. executor code); never read. */
  private final MetricsContainer unscoped;
  private MetricsContainer current;

  /** Creates a switch whose current container is {@code unscoped}. */
  public MetricsSwitch(MetricsContainer unscoped) {
    this.unscoped = unscoped;
    this.current = unscoped;
  }

  /**
   * Makes {@code next} the current container and returns the previous one, which the caller
   * must restore with another swap when its user-code call returns (calls nest when fused
   * operators call each other).
   *
   * @param next the step's container, or null for the unscoped one
   */
  public MetricsContainer swap(MetricsContainer next) {
    MetricsContainer previous = current;
    current = next == null ? unscoped : next;
    return previous;
  }

  /** Installs this switch as the calling thread's current Beam metrics container. */
  public void installOnCurrentThread() {
    MetricsEnvironment.setCurrentContainer(this);
  }

  @Override
  public Counter getCounter(MetricName metricName) {
    return current.getCounter(metricName);
  }

  @Override
  public Counter getPerWorkerCounter(MetricName metricName) {
    return current.getPerWorkerCounter(metricName);
  }

  @Override
  public Distribution getDistribution(MetricName metricName) {
    return current.getDistribution(metricName);
  }

  @Override
  public Gauge getGauge(MetricName metricName) {
    return current.getGauge(metricName);
  }

  @Override
  public StringSet getStringSet(MetricName metricName) {
    return current.getStringSet(metricName);
  }

  @Override
  public BoundedTrie getBoundedTrie(MetricName metricName) {
    return current.getBoundedTrie(metricName);
  }

  @Override
  public Histogram getHistogram(MetricName metricName, HistogramData.BucketType bucketType) {
    return current.getHistogram(metricName, bucketType);
  }
}
