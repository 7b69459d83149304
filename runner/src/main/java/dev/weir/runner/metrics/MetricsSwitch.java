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
 * profiling span). Nothing here builds strings.
 *
 * <p>Counters and distributions are also found without a lookup by name: Beam's
 * {@code DelegatingCounter}/{@code DelegatingDistribution} ask the current container for their cell
 * on every update ({@code getCounter(name).inc()}), which in runners-core's container is a
 * {@code ConcurrentHashMap} lookup hashing and comparing the {@link MetricName} (about 4% of CPU
 * samples on Nexmark Q0, whose monitors update six metrics per element). A metric object keeps one
 * {@code MetricName} instance, so a small direct-mapped cache keyed by the identity of (container,
 * name) answers repeated calls with two reference comparisons; a miss asks the container and fills
 * the slot. Valid because a container hands out one cell per name for its whole life (runners-core
 * resets cells in place, never replaces them). Allocation-free after the first call per metric.
 *
 * <p>Threading: one instance per container thread, used only by that thread. The step containers
 * it points to are read by other threads through {@link StepMetrics}.
 */
@Internal
public final class MetricsSwitch implements MetricsContainer {
  private static final long serialVersionUID = 1L;

  /** Slots of each cell cache; a power of two. Distinct metrics updated per thread are few. */
  static final int CACHE_SLOTS = 64;
  private static final int SLOT_MASK = CACHE_SLOTS - 1;

  /** Receives metrics reported while no step is current (e.g. executor code); never read. */
  private final MetricsContainer unscoped;
  private MetricsContainer current;

  // Direct-mapped cell caches, slot = identity hash of the MetricName; a slot holds the container,
  // the name and the cell it returned. Owner thread only (transient: the switch is never shipped).
  private final transient MetricsContainer[] counterOwners = new MetricsContainer[CACHE_SLOTS];
  private final transient MetricName[] counterNames = new MetricName[CACHE_SLOTS];
  private final transient Counter[] counters = new Counter[CACHE_SLOTS];
  private final transient MetricsContainer[] distributionOwners = new MetricsContainer[CACHE_SLOTS];
  private final transient MetricName[] distributionNames = new MetricName[CACHE_SLOTS];
  private final transient Distribution[] distributions = new Distribution[CACHE_SLOTS];

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

  /** The current container's counter cell for {@code metricName}; cached by identity (see above). */
  @Override
  public Counter getCounter(MetricName metricName) {
    int slot = System.identityHashCode(metricName) & SLOT_MASK;
    MetricsContainer container = current;
    if (counterNames[slot] == metricName && counterOwners[slot] == container) {
      return counters[slot];
    }
    Counter cell = container.getCounter(metricName);
    counterOwners[slot] = container;
    counterNames[slot] = metricName;
    counters[slot] = cell;
    return cell;
  }

  @Override
  public Counter getPerWorkerCounter(MetricName metricName) {
    return current.getPerWorkerCounter(metricName);
  }

  /** The current container's distribution cell for {@code metricName}; cached by identity. */
  @Override
  public Distribution getDistribution(MetricName metricName) {
    int slot = System.identityHashCode(metricName) & SLOT_MASK;
    MetricsContainer container = current;
    if (distributionNames[slot] == metricName && distributionOwners[slot] == container) {
      return distributions[slot];
    }
    Distribution cell = container.getDistribution(metricName);
    distributionOwners[slot] = container;
    distributionNames[slot] = metricName;
    distributions[slot] = cell;
    return cell;
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
