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
 * <p>Single-writer cells: runners-core's cells are safe for many writers, so every update is a
 * locked instruction or two (a counter's {@code AtomicLong.addAndGet}, a distribution's
 * compare-and-set of a new immutable value) plus a volatile write of the cell's dirty flag. With
 * six metric updates per element in Nexmark's monitors that was 10% of the CPU samples of Q2 at
 * 20,000,000 events. Yet only the step's own container thread ever writes a step's cells. So a
 * step whose cells are {@linkplain StepCells#buffered() buffered} (those of a task, whose
 * {@link StepMetrics} flushes them when the task's bundle finishes) hands out
 * {@link BufferedCounter}s and {@link BufferedDistribution}s: plain fields, added to the
 * container's cells by {@link StepCells#flush()}. Attempted values read from other threads
 * therefore lag by at most the open bundle (they are cumulative and read while the job runs, so
 * only their freshness changes; committed values are taken at bundle end, after the flush, and
 * are unchanged). The same split of a thread-confined hot-path counter from a periodically
 * published one is what Flink's {@code SimpleCounter} and Agrona's counters rely on.
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

  /**
   * The current container's counter cell for {@code metricName}, from the step's cells if kept;
   * a single-writer {@link BufferedCounter} in front of it when the step's cells are buffered.
   */
  @Override
  public Counter getCounter(MetricName metricName) {
    StepCells cells = currentCells;
    if (cells == null) {
      return current.getCounter(metricName);
    }
    Counter cell = cells.counters.find(metricName);
    if (cell != null) {
      return cell;
    }
    Counter target = current.getCounter(metricName);
    return cells.counters.keep(metricName,
        cells.buffered && !cells.counters.full() ? new BufferedCounter(target) : target);
  }

  @Override
  public Counter getPerWorkerCounter(MetricName metricName) {
    return current.getPerWorkerCounter(metricName);
  }

  /** As {@link #getCounter}, for a distribution ({@link BufferedDistribution} when buffered). */
  @Override
  public Distribution getDistribution(MetricName metricName) {
    StepCells cells = currentCells;
    if (cells == null) {
      return current.getDistribution(metricName);
    }
    Distribution cell = cells.distributions.find(metricName);
    if (cell != null) {
      return cell;
    }
    Distribution target = current.getDistribution(metricName);
    return cells.distributions.keep(metricName,
        cells.buffered && !cells.distributions.full() ? new BufferedDistribution(target) : target);
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
   * keeps at most {@link #MAX_CELLS} per kind; past that (a step that builds metric names per call
   * fills them) further names get the container's own cell on every call, as without step cells.
   *
   * <p>Threading: used only by the thread running the step (its container thread), including
   * {@link #flush()}.
   */
  public static final class StepCells {
    /** Most cells kept per kind; Nexmark's busiest step updates six metrics. */
    static final int MAX_CELLS = 32;

    final Kept<Counter> counters = new Kept<>();
    final Kept<Distribution> distributions = new Kept<>();
    /** Whether updates are buffered in single-writer cells until {@link #flush()}. */
    final boolean buffered;

    /**
     * @param buffered true to hand out single-writer cells whose updates reach the container
     *     only at {@link #flush()} (the owner must flush before the container's values are read
     *     as final: a finished bundle, a closed task); false to hand out the container's own
     *     cells, every update visible at once (write-through)
     */
    public StepCells(boolean buffered) {
      this.buffered = buffered;
    }

    /** Whether updates wait for {@link #flush()}. */
    public boolean buffered() {
      return buffered;
    }

    /**
     * Adds every buffered update to the container's cells and clears the buffers; nothing when
     * the cells write through. Cost: one pass over the kept cells, touching only those updated.
     */
    public void flush() {
      if (!buffered) {
        return;
      }
      for (int i = 0; i < counters.count; i++) {
        ((BufferedCounter) counters.cells[i]).flush();
      }
      for (int i = 0; i < distributions.count; i++) {
        ((BufferedDistribution) distributions.cells[i]).flush();
      }
    }
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

    /**
     * Keeps {@code cell} for {@code name} and returns it; when {@link StepCells#MAX_CELLS} are
     * kept already, returns {@code cell} without keeping it (the caller passes the container's
     * own cell then: see {@link MetricsSwitch#getCounter}).
     */
    C keep(MetricName name, C cell) {
      if (count == StepCells.MAX_CELLS) {
        return cell;
      }
      if (count == names.length) {
        names = java.util.Arrays.copyOf(names, count * 2);
        cells = java.util.Arrays.copyOf(cells, count * 2);
      }
      names[count] = name;
      cells[count++] = cell;
      return cell;
    }

    /** Whether no more cells can be kept. */
    boolean full() {
      return count == StepCells.MAX_CELLS;
    }
  }

  /**
   * A counter of one step written by its container thread only: {@link #inc(long)} adds to a
   * plain field, {@link #flush()} adds the sum to the container's cell. Not thread-safe.
   */
  static final class BufferedCounter implements Counter {
    private final Counter target;
    private long pending;

    BufferedCounter(Counter target) {
      this.target = target;
    }

    @Override
    public void inc() {
      pending++;
    }

    @Override
    public void inc(long n) {
      pending += n;
    }

    @Override
    public void dec() {
      pending--;
    }

    @Override
    public void dec(long n) {
      pending -= n;
    }

    @Override
    public MetricName getName() {
      return target.getName();
    }

    void flush() {
      if (pending != 0) {
        target.inc(pending);
        pending = 0;
      }
    }
  }

  /**
   * A distribution of one step written by its container thread only: count, sum, min and max in
   * plain fields, merged into the container's cell by {@link #flush()}. Not thread-safe.
   */
  static final class BufferedDistribution implements Distribution {
    private final Distribution target;
    private long count;
    private long sum;
    private long min = Long.MAX_VALUE;
    private long max = Long.MIN_VALUE;

    BufferedDistribution(Distribution target) {
      this.target = target;
    }

    @Override
    public void update(long value) {
      count++;
      sum += value;
      if (value < min) {
        min = value;
      }
      if (value > max) {
        max = value;
      }
    }

    @Override
    public void update(long sum, long count, long min, long max) {
      this.count += count;
      this.sum += sum;
      if (min < this.min) {
        this.min = min;
      }
      if (max > this.max) {
        this.max = max;
      }
    }

    @Override
    public MetricName getName() {
      return target.getName();
    }

    void flush() {
      if (count != 0) {
        target.update(sum, count, min, max);
        count = 0;
        sum = 0;
        min = Long.MAX_VALUE;
        max = Long.MIN_VALUE;
      }
    }
  }
}
