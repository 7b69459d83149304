package dev.weir.runner.monitoring;

import dev.weir.runner.checkpoint.CheckpointStats;
import dev.weir.runner.metrics.RunLoopMetrics;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.task.ContainerCommit;
import dev.weir.runner.task.StageWatermarks;
import dev.weir.state.cache.ObjectCacheStats;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import io.prometheus.metrics.model.snapshots.SummarySnapshot.SummaryDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Unit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.metrics.DistributionResult;
import org.apache.beam.sdk.metrics.GaugeResult;
import org.apache.beam.sdk.metrics.MetricKey;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;

/**
 * A running job's metrics as Prometheus metric families: a client_java {@link MultiCollector}
 * that, on each scrape, reads the same counters the job's MBeans show and builds client_java
 * snapshots from them; client_java writes the exposition format (Prometheus text, OpenMetrics or
 * protobuf, as the scraper asks), escapes label values and appends {@code _total} to counters.
 *
 * <h2>Names</h2>
 *
 * Prometheus' conventions: a {@code weir_} prefix, base units in the name ({@code _seconds},
 * {@code _bytes}; nanosecond counters are exported as seconds), counters as {@code _total}, one
 * family per quantity with labels for where it was measured:
 * <ul>
 *   <li>job ({@code job}): {@code weir_job_info} (state backend), {@code weir_job_start_time_seconds},
 *       checkpoints ({@code weir_checkpoints_completed_total}, {@code _skipped_total},
 *       {@code weir_checkpoint_pause_seconds_total}, {@code weir_checkpoint_last_pause_seconds},
 *       {@code weir_checkpoint_max_pause_seconds}, {@code weir_checkpoint_last_size_bytes},
 *       {@code weir_checkpoint_last_id}, {@code weir_checkpoint_last_completion_timestamp_seconds});
 *   <li>container ({@code job}, {@code container}): run loop ({@code weir_run_loop_iterations_total},
 *       {@code weir_run_loop_phase_seconds_total} with label {@code phase}, {@code weir_run_loop_utilization_ratio}),
 *       state commits outside checkpoints ({@code weir_state_commits_total},
 *       {@code weir_state_commit_seconds_total}, {@code weir_state_last_commit_seconds}) and the object
 *       cache ({@code weir_object_cache_*});
 *   <li>task ({@code job}, {@code stage}, {@code task}, {@code container}): events in and out,
 *       bundles, bundle sizes, input and output watermarks (epoch seconds) and the input
 *       watermark's lag behind wall time (seconds; a task without a watermark yet, or past the end
 *       of time, reports none);
 *   <li>stream ({@code job}, {@code stream}, {@code partition}): {@code weir_stream_queued_messages}
 *       and {@code weir_stream_capacity_messages}, the back-pressure signal ({@link StreamStatus});
 *   <li>PTransform ({@code job}, {@code transform}): {@code weir_transform_elements_in_total} and
 *       {@code _out_total}, and every Beam user metric with labels {@code namespace} and
 *       {@code name}: counters as {@code weir_user_metric_total}, distributions as the summary
 *       {@code weir_user_distribution} (count and sum) plus gauges {@code weir_user_distribution_min}
 *       and {@code _max}, gauges as {@code weir_user_value} (names that do not repeat their type, as
 *       {@code promtool check metrics} asks). Values are Beam's <em>attempted</em>
 *       values, as {@code PipelineResult.metrics()} reports them while the job runs. String sets and
 *       bounded tries have no number and are left out.
 * </ul>
 *
 * <p>Cost: nothing on the run loop. A scrape reads opaque counters the loops keep anyway and merges
 * the job's Beam metrics ({@link StepMetrics#results()}, O(tasks x metrics)) on the scraping thread.
 * The label sets of containers, tasks, streams, PTransforms and Beam metrics never change during a
 * job, so each is built once (client_java checks label names and sorts them when a set is built),
 * not per scrape.
 *
 * <p>Threading: {@link #collect()} from any thread, concurrently; no state of its own.
 */
@Internal
final class PrometheusMetrics implements MultiCollector {
  private final String job;
  /** Labels that stay the same for the job's life, built once (label names checked, values sorted). */
  private final Labels jobLabels;
  private final Labels[] containerLabels;
  /** Per stage, per task (as {@code stages} lists them). */
  private final Labels[][] taskLabels;
  /** Per stream, per partition. */
  private final Labels[][] streamLabels;
  /** Per PTransform full name, and per Beam metric; filled as they first appear. */
  private final Map<String, Labels> transformLabels = new ConcurrentHashMap<>();
  private final Map<MetricKey, Labels> userLabels = new ConcurrentHashMap<>();
  private final String stateBackend;
  private final long startTimeMs;
  private final List<? extends ContainerStatus> containers;
  private final List<MBeanViews.StageView> stages;
  private final List<? extends StreamStatus> streams;
  private final StepMetrics metrics;
  private final boolean metricsEnabled;
  private final Supplier<CheckpointStats> checkpoints;

  /** @param monitored the job; its name is the {@code job} label of every series */
  PrometheusMetrics(MonitoredJob monitored) {
    String job = monitored.name();
    List<? extends ContainerStatus> containers = monitored.containers();
    List<MBeanViews.StageView> stages = monitored.stages();
    List<? extends StreamStatus> streams = monitored.streams();
    this.job = job;
    this.jobLabels = Labels.of("job", job);
    this.containerLabels = new Labels[containers.size()];
    for (int c = 0; c < containerLabels.length; c++) {
      containerLabels[c] = Labels.of("job", job, "container", Integer.toString(containers.get(c).id()));
    }
    this.taskLabels = new Labels[stages.size()][];
    for (int s = 0; s < taskLabels.length; s++) {
      MBeanViews.StageView stage = stages.get(s);
      taskLabels[s] = new Labels[stage.tasks().size()];
      for (int t = 0; t < taskLabels[s].length; t++) {
        MBeanViews.TaskView task = stage.tasks().get(t);
        taskLabels[s][t] = Labels.of("job", job, "stage", stage.name(), "task", task.getTaskName(), "container",
            Integer.toString(task.getContainer()));
      }
    }
    this.streamLabels = new Labels[streams.size()][];
    for (int i = 0; i < streamLabels.length; i++) {
      StreamStatus stream = streams.get(i);
      streamLabels[i] = new Labels[stream.partitions()];
      for (int p = 0; p < streamLabels[i].length; p++) {
        streamLabels[i][p] = Labels.of("job", job, "stream", stream.name(), "from_stage", stream.producerStage(),
            "to_stage", stream.consumerStage(), "partition", Integer.toString(p));
      }
    }
    this.stateBackend = monitored.stateBackend();
    this.startTimeMs = monitored.startTimeMs();
    this.containers = containers;
    this.stages = stages;
    this.streams = streams;
    this.metrics = monitored.metrics();
    this.metricsEnabled = monitored.metricsEnabled();
    this.checkpoints = monitored.checkpoints();
  }

  @Override
  public MetricSnapshots collect() {
    MetricSnapshots.Builder out = MetricSnapshots.builder();
    long nowMs = System.currentTimeMillis();
    jobFamilies(out);
    containerFamilies(out);
    taskFamilies(out, nowMs);
    streamFamilies(out);
    if (metricsEnabled) {
      transformFamilies(out);
    }
    return out.build();
  }

  private void jobFamilies(MetricSnapshots.Builder out) {
    Labels labels = jobLabels;
    out.metricSnapshot(InfoSnapshot.builder().name("weir_job").help("A Weir job; its state backend as a label")
        .dataPoint(InfoSnapshot.InfoDataPointSnapshot.builder()
            .labels(labels.add("state_backend", stateBackend)).build()).build());
    gauge(out, "weir_job_start_time", Unit.SECONDS, "When the job started, epoch seconds",
        List.of(labels), l -> l, l -> Unit.millisToSeconds(startTimeMs));
    CheckpointStats c = checkpoints.get();
    List<Labels> one = List.of(labels);
    counter(out, "weir_checkpoints_completed", null, "Checkpoints completed by this run of the job",
        one, l -> l, l -> c.completed());
    counter(out, "weir_checkpoints_skipped", null,
        "Checkpoint attempts given up because the job did not become quiescent in time", one, l -> l, l -> c.skipped());
    counter(out, "weir_checkpoint_pause", Unit.SECONDS, "Time the job paused for its completed checkpoints",
        one, l -> l, l -> Unit.nanosToSeconds(c.totalPauseNs()));
    gauge(out, "weir_checkpoint_last_pause", Unit.SECONDS, "The last completed checkpoint's pause",
        one, l -> l, l -> Unit.nanosToSeconds(c.lastPauseNs()));
    gauge(out, "weir_checkpoint_max_pause", Unit.SECONDS, "The longest checkpoint pause of this run",
        one, l -> l, l -> Unit.nanosToSeconds(c.maxPauseNs()));
    gauge(out, "weir_checkpoint_last_size", Unit.BYTES, "The last completed checkpoint's size on disk",
        one, l -> l, l -> c.lastSizeBytes());
    gauge(out, "weir_checkpoint_last_id", null,
        "The id of the last completed checkpoint (the restored one's before the first of this run; 0: none)",
        one, l -> l, l -> c.lastCompletedId());
    if (c.lastCompletedAtMs() > 0) {
      gauge(out, "weir_checkpoint_last_completion_timestamp", Unit.SECONDS,
          "When the last checkpoint of this run completed, epoch seconds", one, l -> l,
          l -> Unit.millisToSeconds(c.lastCompletedAtMs()));
    }
  }

  /** One container's values, read once per scrape. */
  private record ContainerRead(Labels labels, RunLoopMetrics.Snapshot loop, ContainerCommit.CommitStats commits,
      ObjectCacheStats cache) {}

  private void containerFamilies(MetricSnapshots.Builder out) {
    List<ContainerRead> reads = new ArrayList<>(containers.size());
    for (int c = 0; c < containers.size(); c++) {
      ContainerStatus container = containers.get(c);
      reads.add(new ContainerRead(containerLabels[c], container.runLoop(), container.commits(), container.cache()));
    }
    counter(out, "weir_run_loop_iterations", null, "Run-loop iterations of the container", reads,
        ContainerRead::labels, r -> r.loop().iterations());
    CounterSnapshot.Builder phases = CounterSnapshot.builder().name("weir_run_loop_phase_seconds").unit(Unit.SECONDS)
        .help("Time the container's run loop spent in each phase (idle: no work)");
    for (ContainerRead r : reads) {
      for (RunLoopMetrics.Phase phase : RunLoopMetrics.Phase.values()) {
        phases.dataPoint(CounterDataPointSnapshot.builder()
            .labels(r.labels().add("phase", phase.name().toLowerCase(Locale.ROOT)))
            .value(Unit.nanosToSeconds(r.loop().phaseNs(phase))).build());
      }
    }
    out.metricSnapshot(phases.build());
    gauge(out, "weir_run_loop_utilization", Unit.RATIO,
        "Busy time over busy plus idle time of the container's run loop since it started", reads,
        ContainerRead::labels, r -> r.loop().utilization());
    String commitsHelp = " (state commits at commit points; in a job that takes checkpoints its state is "
        + "committed by the checkpoints instead, and these stay 0)";
    counter(out, "weir_state_commits", null, "State commits of the container" + commitsHelp, reads,
        ContainerRead::labels, r -> r.commits().commits());
    counter(out, "weir_state_commit", Unit.SECONDS, "Time the container spent in state commits" + commitsHelp,
        reads, ContainerRead::labels, r -> Unit.nanosToSeconds(r.commits().totalNs()));
    gauge(out, "weir_state_last_commit", Unit.SECONDS, "The container's last state commit's duration", reads,
        ContainerRead::labels, r -> Unit.nanosToSeconds(r.commits().lastNs()));
    List<ContainerRead> cached = reads.stream().filter(r -> r.cache() != null).toList();
    counter(out, "weir_object_cache_hits", null, "Object cache lookups that found a decoded value", cached,
        ContainerRead::labels, r -> r.cache().hits());
    counter(out, "weir_object_cache_misses", null, "Object cache lookups that went to the store", cached,
        ContainerRead::labels, r -> r.cache().misses());
    counter(out, "weir_object_cache_evictions", null, "Values the object cache evicted", cached,
        ContainerRead::labels, r -> r.cache().evictions());
    counter(out, "weir_object_cache_dirty_write_backs", null,
        "Dirty values written to the store because they were evicted", cached, ContainerRead::labels,
        r -> r.cache().dirtyWriteBacks());
    gauge(out, "weir_object_cache_entries", null, "Values in the object cache now", cached,
        ContainerRead::labels, r -> r.cache().entries());
    gauge(out, "weir_object_cache_estimated_size", Unit.BYTES, "Estimated size of the object cache's values now",
        cached, ContainerRead::labels, r -> r.cache().estimatedBytes());
    gauge(out, "weir_object_cache_dirty_entries", null, "Values in the object cache not yet written to the store",
        cached, ContainerRead::labels, r -> r.cache().dirtyEntries());
    counter(out, "weir_object_cache_flushes", null, "Flushes of the object cache's dirty values to the store",
        cached, ContainerRead::labels, r -> r.cache().flushes());
    counter(out, "weir_object_cache_flush", Unit.SECONDS, "Time spent flushing the object cache", cached,
        ContainerRead::labels, r -> Unit.nanosToSeconds(r.cache().flushNanos()));
    counter(out, "weir_object_cache_encoded", Unit.BYTES, "Bytes the object cache encoded with Beam coders",
        cached, ContainerRead::labels, r -> r.cache().bytesEncoded());
    counter(out, "weir_object_cache_decoded", Unit.BYTES, "Bytes the object cache decoded with Beam coders",
        cached, ContainerRead::labels, r -> r.cache().bytesDecoded());
  }

  /** One task's values, read once per scrape. */
  private record TaskRead(Labels labels, long in, long out, long bundles, long lastBundle, long maxBundle,
      long inputWatermarkMs, long outputWatermarkMs) {}

  private void taskFamilies(MetricSnapshots.Builder out, long nowMs) {
    List<TaskRead> reads = new ArrayList<>();
    for (int s = 0; s < stages.size(); s++) {
      List<MBeanViews.TaskView> tasks = stages.get(s).tasks();
      for (int t = 0; t < tasks.size(); t++) {
        MBeanViews.TaskView task = tasks.get(t);
        reads.add(new TaskRead(taskLabels[s][t], task.getEventsIn(), task.getEventsOut(),
            task.getBundles(), task.getLastBundleSize(), task.getMaxBundleSize(), task.getInputWatermarkMs(),
            task.getOutputWatermarkMs()));
      }
    }
    counter(out, "weir_task_events_in", null, "Input elements of the task's finished bundles", reads,
        TaskRead::labels, TaskRead::in);
    counter(out, "weir_task_events_out", null, "Elements the task sent to the next stage (a broadcast counts once)",
        reads, TaskRead::labels, TaskRead::out);
    counter(out, "weir_task_bundles", null, "Finished bundles that held at least one input element", reads,
        TaskRead::labels, TaskRead::bundles);
    gauge(out, "weir_task_last_bundle_size", null, "Input elements of the task's last finished bundle", reads,
        TaskRead::labels, TaskRead::lastBundle);
    gauge(out, "weir_task_max_bundle_size", null, "The most input elements any finished bundle of the task held",
        reads, TaskRead::labels, TaskRead::maxBundle);
    List<TaskRead> withInput = reads.stream().filter(r -> inRange(r.inputWatermarkMs())).toList();
    gauge(out, "weir_task_input_watermark", Unit.SECONDS, "The task's input watermark, epoch seconds", withInput,
        TaskRead::labels, r -> Unit.millisToSeconds(r.inputWatermarkMs()));
    gauge(out, "weir_task_input_watermark_lag", Unit.SECONDS,
        "How far the task's input watermark is behind wall time", withInput, TaskRead::labels,
        r -> Unit.millisToSeconds(nowMs - r.inputWatermarkMs()));
    gauge(out, "weir_task_output_watermark", Unit.SECONDS, "The task's output watermark, epoch seconds",
        reads.stream().filter(r -> inRange(r.outputWatermarkMs())).toList(), TaskRead::labels,
        r -> Unit.millisToSeconds(r.outputWatermarkMs()));
  }

  /** Whether a watermark is a time, not Beam's "none yet" or "end of time". */
  static boolean inRange(long watermarkMs) {
    return watermarkMs > StageWatermarks.MIN_WATERMARK_MS && watermarkMs < StageWatermarks.MAX_WATERMARK_MS;
  }

  private void streamFamilies(MetricSnapshots.Builder out) {
    GaugeSnapshot.Builder queued = GaugeSnapshot.builder().name("weir_stream_queued_messages")
        .help("Messages queued in a partition of a stream between two stages; near capacity, its producers "
            + "are back-pressured");
    GaugeSnapshot.Builder capacity = GaugeSnapshot.builder().name("weir_stream_capacity_messages")
        .help("The most messages a partition of the stream holds before its producers wait");
    for (int i = 0; i < streams.size(); i++) {
      StreamStatus stream = streams.get(i);
      for (int p = 0; p < streamLabels[i].length; p++) {
        Labels labels = streamLabels[i][p];
        queued.dataPoint(GaugeDataPointSnapshot.builder().labels(labels).value(stream.queued(p)).build());
        capacity.dataPoint(GaugeDataPointSnapshot.builder().labels(labels).value(stream.capacity()).build());
      }
    }
    out.metricSnapshot(queued.build());
    out.metricSnapshot(capacity.build());
  }

  private void transformFamilies(MetricSnapshots.Builder out) {
    List<Map.Entry<String, StepMetrics.ElementCount>> elements = List.copyOf(metrics.elementCounts().entrySet());
    Function<Map.Entry<String, StepMetrics.ElementCount>, Labels> byTransform =
        e -> transformLabels.computeIfAbsent(e.getKey(), name -> Labels.of("job", job, "transform", name));
    counter(out, "weir_transform_elements_in", null, "Elements into the PTransform, over its tasks", elements,
        byTransform, e -> e.getValue().in());
    counter(out, "weir_transform_elements_out", null,
        "Elements the PTransform emitted to its consumers, over its tasks", elements, byTransform,
        e -> e.getValue().out());

    MetricQueryResults user = metrics.results().allMetrics();
    List<MetricResult<Long>> counters = new ArrayList<>();
    user.getCounters().forEach(counters::add);
    counter(out, "weir_user_metric", null, "A Beam counter (attempted value)", counters,
        r -> userLabels(r), MetricResult::getAttempted);
    List<MetricResult<DistributionResult>> distributions = new ArrayList<>();
    user.getDistributions().forEach(distributions::add);
    SummarySnapshot.Builder summary = SummarySnapshot.builder().name("weir_user_distribution")
        .help("A Beam distribution's count and sum (attempted values)");
    for (MetricResult<DistributionResult> d : distributions) {
      summary.dataPoint(SummaryDataPointSnapshot.builder().labels(userLabels(d))
          .count(d.getAttempted().getCount()).sum(d.getAttempted().getSum()).build());
    }
    out.metricSnapshot(summary.build());
    List<MetricResult<DistributionResult>> seen = distributions.stream()
        .filter(d -> d.getAttempted().getCount() > 0).toList();
    gauge(out, "weir_user_distribution_min", null, "A Beam distribution's minimum (attempted)", seen,
        d -> userLabels(d), d -> d.getAttempted().getMin());
    gauge(out, "weir_user_distribution_max", null, "A Beam distribution's maximum (attempted)", seen,
        d -> userLabels(d), d -> d.getAttempted().getMax());
    List<MetricResult<GaugeResult>> gauges = new ArrayList<>();
    user.getGauges().forEach(gauges::add);
    gauge(out, "weir_user_value", null, "A Beam gauge's latest value (attempted)", gauges,
        g -> userLabels(g), g -> g.getAttempted().getValue());
  }

  private Labels userLabels(MetricResult<?> result) {
    return userLabels.computeIfAbsent(result.getKey(), key -> Labels.of("job", job, "transform", key.stepName(),
        "namespace", key.metricName().getNamespace(), "name", key.metricName().getName()));
  }

  /** A counter family {@code name[_unit]} (client_java appends {@code _total}), one data point per item. */
  private static <T> void counter(MetricSnapshots.Builder out, String name, Unit unit, String help, List<T> items,
      Function<T, Labels> labels, ToDoubleFunction<T> value) {
    CounterSnapshot.Builder family = CounterSnapshot.builder().name(unit == null ? name : name + "_" + unit).help(help);
    if (unit != null) {
      family.unit(unit);
    }
    for (T item : items) {
      family.dataPoint(CounterDataPointSnapshot.builder().labels(labels.apply(item))
          .value(value.applyAsDouble(item)).build());
    }
    out.metricSnapshot(family.build());
  }

  /** A gauge family {@code name[_unit]}, one data point per item. */
  private static <T> void gauge(MetricSnapshots.Builder out, String name, Unit unit, String help, List<T> items,
      Function<T, Labels> labels, ToDoubleFunction<T> value) {
    GaugeSnapshot.Builder family = GaugeSnapshot.builder().name(unit == null ? name : name + "_" + unit).help(help);
    if (unit != null) {
      family.unit(unit);
    }
    for (T item : items) {
      family.dataPoint(GaugeDataPointSnapshot.builder().labels(labels.apply(item))
          .value(value.applyAsDouble(item)).build());
    }
    out.metricSnapshot(family.build());
  }
}
