package dev.weir.runner.metrics;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BinaryOperator;
import java.util.function.Function;
import org.apache.beam.runners.core.metrics.BoundedTrieData;
import org.apache.beam.runners.core.metrics.DefaultMetricResults;
import org.apache.beam.runners.core.metrics.DistributionData;
import org.apache.beam.runners.core.metrics.GaugeData;
import org.apache.beam.runners.core.metrics.MetricUpdates;
import org.apache.beam.runners.core.metrics.MetricUpdates.MetricUpdate;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.runners.core.metrics.StringSetData;
import org.apache.beam.sdk.metrics.MetricKey;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricResults;

/**
 * The job's Beam metrics: one {@link MetricsContainerImpl} per (task, PTransform) holding the
 * <em>attempted</em> values, created at task set-up, plus the snapshot of those values taken at
 * the task's container's last commit (the <em>committed</em> values); both are merged into one
 * result per (step, metric) when read.
 *
 * <p>Why per task and not per step: tasks of one step run on different container threads;
 * separate containers keep their cells uncontended on the hot path. Reading merges them, which
 * costs O(tasks x metrics) per {@link #results()} call, off the hot path.
 *
 * <p>Committed values: a container thread calls {@link Committer#commit()} after each of its
 * commits (state flushed, finished bundles' outputs handed downstream); every (task, step) whose
 * cells changed since the previous commit gets a fresh copy of its cells, published through a
 * volatile field. The hot path is unchanged: a commit costs one scan of the cells' dirty flags per
 * (task, step), plus a copy of the changed ones, once per commit, never per element. After the
 * job finished normally the container commits once more after closing its tasks, so committed
 * equals attempted. A metric updated but not committed yet reads as committed zero (an empty
 * distribution, gauge, string set or bounded trie). Counters, distributions, gauges, string sets
 * and bounded tries are reported; histograms are not (as in runners-core's own results).
 *
 * <p>Threading: {@link Committer#containerFor} and {@link #register} are called while tasks are
 * being opened (any thread, guarded by this object's lock); a {@link Committer} belongs to one
 * container thread; {@link #results()} may be called from any thread at any time, also while the
 * job runs (cells are thread-safe, values cumulative, snapshots immutable once published).
 */
public final class StepMetrics {
  private final List<Entry> entries = new ArrayList<>();

  /** One task's instance of one step: attempted cells and the last committed snapshot. */
  private static final class Entry {
    final String stepName;
    final MetricsContainerImpl attempted;
    /** Written by the owning container thread only; null until the first commit. */
    volatile MetricsContainerImpl committed;

    Entry(String stepName, MetricsContainerImpl attempted, MetricsContainerImpl committed) {
      this.stepName = stepName;
      this.attempted = attempted;
      this.committed = committed;
    }

    /** Snapshots the attempted cells if any changed since the last commit. Owning thread only. */
    void commit() {
      MetricUpdates changed = attempted.getUpdates(); // marks the dirty cells as committing
      if (changed.isEmpty() && committed != null) {
        return;
      }
      MetricsContainerImpl snapshot = new MetricsContainerImpl(stepName);
      snapshot.update(attempted);
      attempted.commitUpdates(); // cells modified since getUpdates() stay dirty
      committed = snapshot;
    }
  }

  /**
   * The metrics of the tasks of one container: creates their step containers and commits them.
   * Confined to that container's thread (except {@link #containerFor}, also safe elsewhere).
   */
  public final class Committer {
    private final List<Entry> own = new ArrayList<>();

    private Committer() {}

    /**
     * Creates the attempted-values container of one task's instance of {@code stepName}.
     *
     * @param stepName the PTransform's full name
     */
    public MetricsContainerImpl containerFor(String stepName) {
      Entry entry = new Entry(stepName, new MetricsContainerImpl(stepName), null);
      synchronized (StepMetrics.this) {
        entries.add(entry);
      }
      own.add(entry);
      return entry.attempted;
    }

    /**
     * Publishes the current values of this container's steps as their committed values. Call
     * after the container committed (state durable, finished bundles' outputs handed downstream).
     */
    public void commit() {
      for (int i = 0; i < own.size(); i++) { // indexed: no iterator per commit
        own.get(i).commit();
      }
    }
  }

  /** A committer for the tasks of one container thread. */
  public Committer newCommitter() {
    return new Committer();
  }

  /**
   * Adds a container filled outside any task (e.g. by a source's {@code split} at translation);
   * its values are final, so they count as committed.
   *
   * @param stepName the PTransform's full name
   */
  public synchronized void register(String stepName, MetricsContainerImpl container) {
    entries.add(new Entry(stepName, container, container));
  }

  /**
   * Attempted and committed values, one result per (step, metric), each merged over all tasks
   * (counters summed, distributions combined, the latest gauge, string sets and tries united).
   */
  public MetricResults results() {
    List<Entry> snapshot;
    synchronized (this) {
      snapshot = new ArrayList<>(entries);
    }
    // Committed first: cells are only ever added, so every committed key is also attempted.
    List<MetricUpdates> committed = new ArrayList<>(snapshot.size());
    for (Entry entry : snapshot) {
      MetricsContainerImpl c = entry.committed;
      if (c != null) {
        committed.add(c.getCumulative());
      }
    }
    List<MetricUpdates> attempted = new ArrayList<>(snapshot.size());
    for (Entry entry : snapshot) {
      attempted.add(entry.attempted.getCumulative());
    }
    return new DefaultMetricResults(
        merge(attempted, committed, MetricUpdates::counterUpdates, Long::sum, 0L, Function.identity()),
        merge(attempted, committed, MetricUpdates::distributionUpdates, DistributionData::combine,
            DistributionData.EMPTY, DistributionData::extractResult),
        merge(attempted, committed, MetricUpdates::gaugeUpdates, GaugeData::combine, GaugeData.empty(),
            GaugeData::extractResult),
        merge(attempted, committed, MetricUpdates::stringSetUpdates, StringSetData::combine, StringSetData.empty(),
            StringSetData::extractResult),
        merge(attempted, committed, MetricUpdates::boundedTrieUpdates, BoundedTrieData::combine,
            new BoundedTrieData(), BoundedTrieData::extractResult),
        List.of());
  }

  private static <T, R> List<MetricResult<R>> merge(List<MetricUpdates> attempted, List<MetricUpdates> committed,
      Function<MetricUpdates, Iterable<MetricUpdate<T>>> kind, BinaryOperator<T> combine, T zero,
      Function<T, R> extract) {
    Map<MetricKey, T> attemptedByKey = sum(attempted, kind, combine);
    Map<MetricKey, T> committedByKey = sum(committed, kind, combine);
    List<MetricResult<R>> results = new ArrayList<>(attemptedByKey.size());
    for (Map.Entry<MetricKey, T> e : attemptedByKey.entrySet()) {
      T c = committedByKey.getOrDefault(e.getKey(), zero);
      results.add(MetricResult.create(e.getKey(), extract.apply(c), extract.apply(e.getValue())));
    }
    return results;
  }

  private static <T> Map<MetricKey, T> sum(List<MetricUpdates> all,
      Function<MetricUpdates, Iterable<MetricUpdate<T>>> kind, BinaryOperator<T> combine) {
    Map<MetricKey, T> byKey = new HashMap<>();
    for (MetricUpdates updates : all) {
      for (MetricUpdate<T> update : kind.apply(updates)) {
        byKey.merge(update.getKey(), update.getUpdate(), combine);
      }
    }
    return byKey;
  }
}
