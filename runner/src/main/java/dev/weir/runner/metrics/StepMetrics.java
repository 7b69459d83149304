package dev.weir.runner.metrics;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
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
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.metrics.MetricKey;
import org.apache.beam.sdk.metrics.MetricName;
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
 * <p>Committed values are those of finished bundles whose outputs and state the container has
 * committed: when a task finishes a bundle (none of its operators has an open bundle then), each
 * of its (task, step) containers whose cells changed is copied ({@link Task#bundleFinished()});
 * the container's next commit (state flushed, finished bundles' outputs handed downstream)
 * publishes the copies through a volatile field ({@link Committer#commit()}). Updates made by a
 * bundle still open are therefore never committed early. The hot path is unchanged: a finished
 * bundle costs one scan of its steps' dirty flags plus a copy of the changed containers, never
 * anything per element. After the job finished normally the container commits once more after
 * closing its tasks ({@link Committer#commitAll()}), so committed equals attempted. A metric updated but not committed yet reads as committed zero (an empty
 * distribution, gauge, string set or bounded trie). Counters, distributions, gauges, string sets
 * and bounded tries are reported; histograms are not (as in runners-core's own results).
 *
 * <p>A task's steps update their attempted cells through single-writer buffered cells
 * ({@link MetricsSwitch.StepCells}, handed out with the container by {@link Task#containerFor}):
 * plain field updates on the hot path, added to the attempted cells when the task's bundle
 * finishes, just before they are staged. Attempted values read while the job runs therefore leave
 * out the updates of bundles still open; committed values and the values after the job are
 * unchanged by it.
 *
 * <p>Threading: {@link Task#containerFor} and {@link #register} are called while tasks are
 * being opened (the list of all containers is guarded by this object's lock); a {@link Committer}
 * and its {@link Task}s belong to one container thread; {@link #results()} may be called from any thread at any time, also while the
 * job runs (cells are thread-safe, values cumulative, snapshots immutable once published).
 */
@Internal
public final class StepMetrics {
  private final List<Entry> entries = new ArrayList<>();

  /** One task's instance of one step: attempted cells and the last committed snapshot. */
  private static final class Entry {
    final String stepName;
    final MetricsContainerImpl attempted;
    /** The step's buffered cells in front of {@link #attempted}, or null; owning thread only. */
    final MetricsSwitch.StepCells cells;
    /** The step's elements in and out in this task; null for a container filled outside any task. */
    final ElementCounter elements;
    /** Taken when the task's bundle finished, published at the next commit; owning thread only. */
    MetricsContainerImpl staged;
    /** Written by the owning container thread only; null until the first commit. */
    volatile MetricsContainerImpl committed;

    Entry(String stepName, MetricsContainerImpl attempted, MetricsSwitch.StepCells cells,
        ElementCounter elements, MetricsContainerImpl committed) {
      this.stepName = stepName;
      this.attempted = attempted;
      this.cells = cells;
      this.elements = elements;
      this.committed = committed;
    }

    /**
     * Flushes the buffered cells into the attempted ones, then copies the attempted cells if any
     * changed since the last copy. Owning thread only.
     */
    void stage() {
      flushCells();
      MetricUpdates changed = attempted.getUpdates(); // marks the dirty cells as committing
      if (changed.isEmpty() && (staged != null || committed != null)) {
        return;
      }
      MetricsContainerImpl snapshot = new MetricsContainerImpl(stepName);
      snapshot.update(attempted);
      attempted.commitUpdates(); // cells modified since getUpdates() stay dirty
      staged = snapshot;
    }

    /** Adds the step's buffered updates, if it has buffered cells, to the attempted cells. Owning thread only. */
    void flushCells() {
      if (cells != null) {
        cells.flush();
      }
    }

    /** Makes the staged copy, if any, the committed values. Owning thread only. */
    void publish() {
      if (staged != null) {
        committed = staged;
        staged = null;
      }
    }
  }

  /** The step containers of one task, staged together when the task's bundle finished. */
  public final class Task {
    private final Committer committer;
    private final List<Entry> own = new ArrayList<>();

    private Task(Committer committer) {
      this.committer = committer;
    }

    /**
     * Creates the attempted-values container of this task's instance of {@code stepName}, with
     * buffered cells in front of it that this task flushes when its bundle finishes
     * ({@link #bundleFinished()}) and its committer when the tasks close
     * ({@link Committer#commitAll()}).
     *
     * @param stepName the PTransform's full name
     */
    public StepContainer containerFor(String stepName) {
      Entry entry = new Entry(stepName, new MetricsContainerImpl(stepName), new MetricsSwitch.StepCells(true),
          new ElementCounter(), null);
      synchronized (StepMetrics.this) {
        entries.add(entry);
      }
      own.add(entry);
      committer.all.add(entry);
      return new StepContainer(entry.attempted, entry.cells, entry.elements);
    }

    /**
     * The task finished its bundle (no operator of it has an open bundle): copies the values of
     * its steps that changed, to be published as committed by the container's next
     * {@link Committer#commit()}. Costs one scan of each step's dirty flags.
     */
    public void bundleFinished() {
      for (int i = 0; i < own.size(); i++) { // indexed: no iterator per bundle
        own.get(i).stage();
      }
    }

    /**
     * The values of this task's steps for a checkpoint (taken with no bundle open, so they are the
     * committed ones): per step its name, then its counters, distributions, gauges and string sets,
     * each as namespace, name and value; null if no step has any.
     *
     * @throws IllegalStateException if the bytes cannot be written
     */
    public byte[] snapshot() {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      int written = 0;
      try (DataOutputStream out = new DataOutputStream(bytes)) {
        out.writeInt(own.size());
        for (Entry entry : own) {
          MetricUpdates values = entry.attempted.getCumulative();
          out.writeUTF(entry.stepName);
          written += writeAll(out, values.counterUpdates(), (o, v) -> o.writeLong(v));
          written += writeAll(out, values.distributionUpdates(), (o, d) -> {
            o.writeLong(d.sum());
            o.writeLong(d.count());
            o.writeLong(d.min());
            o.writeLong(d.max());
          });
          written += writeAll(out, values.gaugeUpdates(), (o, g) -> o.writeLong(g.value()));
          written += writeAll(out, values.stringSetUpdates(), (o, set) -> {
            o.writeInt(set.stringSet().size());
            for (String value : set.stringSet()) {
              o.writeUTF(value);
            }
          });
        }
      } catch (IOException e) {
        throw new IllegalStateException("cannot write metrics into a checkpoint", e);
      }
      return written == 0 ? null : bytes.toByteArray();
    }

    /**
     * Adds the values of a {@link #snapshot()} to this task's steps (at restore, after their
     * containers were created): the restored job's metrics go on from the checkpoint's, as
     * attempted and, from the container's next commit, as committed values (a gauge takes the
     * checkpoint's value). Steps the snapshot names that this task lacks are ignored (the plan
     * fingerprint guarantees the same steps).
     *
     * @throws IllegalStateException if the bytes cannot be read
     */
    public void restore(byte[] snapshot) {
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(snapshot))) {
        int steps = in.readInt();
        for (int s = 0; s < steps; s++) {
          String stepName = in.readUTF();
          MetricsContainerImpl target = new MetricsContainerImpl(stepName);
          for (Entry entry : own) {
            if (entry.stepName.equals(stepName)) {
              target = entry.attempted;
              break;
            }
          }
          MetricsContainerImpl container = target;
          readAll(in, (i, name) -> container.getCounter(name).inc(i.readLong()));
          readAll(in, (i, name) -> container.getDistribution(name).update(i.readLong(), i.readLong(), i.readLong(),
              i.readLong()));
          readAll(in, (i, name) -> container.getGauge(name).set(i.readLong()));
          readAll(in, (i, name) -> {
            int n = i.readInt();
            for (int k = 0; k < n; k++) {
              container.getStringSet(name).add(i.readUTF());
            }
          });
        }
      } catch (IOException e) {
        throw new IllegalStateException("cannot restore metrics from the checkpoint (" + e + ")", e);
      }
      bundleFinished();
    }
  }

  /**
   * One task's instance of one step: the container of its attempted values and the buffered
   * cells through which the step's code updates it (pass both to the step's
   * {@code StepScope.step}). Values updated through {@code cells} reach {@code attempted} when the
   * task's bundle finishes. {@code elements} counts the step's elements in and out in this task
   * (pass it to the step too).
   */
  public record StepContainer(MetricsContainerImpl attempted, MetricsSwitch.StepCells cells, ElementCounter elements) {}

  /**
   * Elements into and out of one PTransform, summed over its tasks.
   *
   * @param in elements the transform received
   * @param out elements it emitted to consumers in its stage (each once, however many consumers)
   */
  public record ElementCount(long in, long out) {}

  /** Writes one value. */
  private interface ValueWriter<T> {
    void write(DataOutputStream out, T value) throws IOException;
  }

  /** Reads one value of metric {@code name} into its cell. */
  private interface ValueReader {
    void read(DataInputStream in, MetricName name) throws IOException;
  }

  private static <T> int writeAll(DataOutputStream out, Iterable<MetricUpdates.MetricUpdate<T>> updates,
      ValueWriter<T> writer) throws IOException {
    List<MetricUpdates.MetricUpdate<T>> all = new ArrayList<>();
    updates.forEach(all::add);
    out.writeInt(all.size());
    for (MetricUpdates.MetricUpdate<T> update : all) {
      out.writeUTF(update.getKey().metricName().getNamespace());
      out.writeUTF(update.getKey().metricName().getName());
      writer.write(out, update.getUpdate());
    }
    return all.size();
  }

  private static void readAll(DataInputStream in, ValueReader reader) throws IOException {
    int n = in.readInt();
    for (int i = 0; i < n; i++) {
      reader.read(in, MetricName.named(in.readUTF(), in.readUTF()));
    }
  }

  /**
   * The metrics of the tasks of one container: creates their step containers and commits them.
   * Confined to that container's thread.
   */
  public final class Committer {
    private final List<Entry> all = new ArrayList<>();

    private Committer() {}

    /** A group of step containers for one task of this container. */
    public Task newTask() {
      return new Task(this);
    }

    /**
     * Publishes the values staged when the tasks' bundles finished as committed values. Call
     * after the container committed (state durable, finished bundles' outputs handed downstream).
     */
    public void commit() {
      for (int i = 0; i < all.size(); i++) {
        all.get(i).publish();
      }
    }

    /**
     * Stages and publishes the current values of every step: the last commit of a container
     * whose tasks all ended normally and are closed (teardown's metrics included).
     */
    public void commitAll() {
      for (int i = 0; i < all.size(); i++) {
        all.get(i).stage();
        all.get(i).publish();
      }
    }

    /**
     * Adds every buffered update to the attempted values without committing anything: for a
     * container whose loop failed, so that the attempted values of the failed job still count
     * what its open bundles and teardown did.
     */
    public void flushAttempted() {
      for (int i = 0; i < all.size(); i++) {
        all.get(i).flushCells();
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
    entries.add(new Entry(stepName, container, null, null, container));
  }

  /**
   * Elements in and out per PTransform (full name), summed over the tasks opened so far, in the
   * order their tasks opened. Any thread, also while the job runs (each count is some recent
   * value: see {@link ElementCounter}); O(tasks x steps).
   */
  public Map<String, ElementCount> elementCounts() {
    List<Entry> snapshot;
    synchronized (this) {
      snapshot = new ArrayList<>(entries);
    }
    Map<String, long[]> sums = new LinkedHashMap<>();
    for (Entry entry : snapshot) {
      if (entry.elements != null) {
        long[] sum = sums.computeIfAbsent(entry.stepName, k -> new long[2]);
        sum[0] += entry.elements.elementsIn();
        sum[1] += entry.elements.elementsOut();
      }
    }
    Map<String, ElementCount> result = new LinkedHashMap<>();
    sums.forEach((step, sum) -> result.put(step, new ElementCount(sum[0], sum[1])));
    return result;
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
