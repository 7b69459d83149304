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
 * {@code MetricName} instance, so each step keeps the few cells its DoFns used in a
 * {@link StepCells} (found by comparing name references in a short array, which stays in the CPU
 * cache: a container thread runs many tasks, e.g. 50 tasks x 12 metrics on Nexmark, so one
 * thread-wide table would not), and the switch consults the running step's. Valid because a
 * container hands out one cell per name for its whole life (runners-core resets cells in place,
 * never replaces them). Allocation-free after the first update of each metric.
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
  /** The running step's cells of {@link #current}; null to ask the container every time. */
  private transient StepCells currentCells;

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
    return swap(next, null);
  }

  /**
   * As {@link #swap(MetricsContainer)}, with the cells the step keeps for {@code next} (one
   * {@link StepCells} per step, created with the step, never shared between containers); the
   * caller restores the previous step's container and cells with another call.
   *
   * @param cells {@code next}'s step cells, or null to look cells up in the container each time
   */
  public MetricsContainer swap(MetricsContainer next, StepCells cells) {
    MetricsContainer previous = current;
    current = next == null ? unscoped : next;
    currentCells = cells;
    return previous;
  }

  /** Installs this switch as the calling thread's current Beam metrics container. */
  public void installOnCurrentThread() {
    MetricsEnvironment.setCurrentContainer(this);
  }

  /** The current container's counter cell for {@code metricName}; from the step's cells if kept. */
  @Override
  public Counter getCounter(MetricName metricName) {
    StepCells cells = currentCells;
    if (cells == null) {
      return current.getCounter(metricName);
    }
    Counter cell = cells.counters.find(metricName);
    return cell != null ? cell : cells.counters.keep(metricName, current.getCounter(metricName));
  }

  @Override
  public Counter getPerWorkerCounter(MetricName metricName) {
    return current.getPerWorkerCounter(metricName);
  }

  /** The current container's distribution cell for {@code metricName}; from the step's cells if kept. */
  @Override
  public Distribution getDistribution(MetricName metricName) {
    StepCells cells = currentCells;
    if (cells == null) {
      return current.getDistribution(metricName);
    }
    Distribution cell = cells.distributions.find(metricName);
    return cell != null
        ? cell : cells.distributions.keep(metricName, current.getDistribution(metricName));
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

  /**
   * The counter and distribution cells one step (one PTransform of one task) has used, by the
   * identity of their {@link MetricName}: short arrays scanned with reference comparisons. A step
   * that builds metric names per call would fill them; past {@link #MAX_CELLS} per kind they are
   * emptied and refilled (each such update then costs what it costs without cells).
   *
   * <p>Threading: used only by the thread running the step (its container thread).
   */
  public static final class StepCells {
    /** Most cells kept per kind; Nexmark's busiest step updates six metrics. */
    static final int MAX_CELLS = 32;

    final Kept<Counter> counters = new Kept<>();
    final Kept<Distribution> distributions = new Kept<>();
  }

  /** One kind of cell a step kept: names and cells in parallel arrays, scanned by name identity. */
  static final class Kept<C> {
    private MetricName[] names = new MetricName[4];
    private Object[] cells = new Object[4];
    private int count;

    /** The cell kept for {@code name}, or null. */
    @SuppressWarnings("unchecked")
    C find(MetricName name) {
      MetricName[] kept = names;
      for (int i = 0; i < count; i++) {
        if (kept[i] == name) {
          return (C) cells[i];
        }
      }
      return null;
    }

    /** Keeps {@code cell} for {@code name} (emptying the arrays first when they hold MAX_CELLS); returns it. */
    C keep(MetricName name, C cell) {
      if (count == StepCells.MAX_CELLS) {
        count = 0;
      } else if (count == names.length) {
        names = java.util.Arrays.copyOf(names, count * 2);
        cells = java.util.Arrays.copyOf(cells, count * 2);
      }
      names[count] = name;
      cells[count++] = cell;
      return cell;
    }
  }
}
