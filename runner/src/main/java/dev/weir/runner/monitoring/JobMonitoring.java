package dev.weir.runner.monitoring;

import dev.weir.runner.WeirSettings;
import dev.weir.runner.checkpoint.CheckpointStats;
import dev.weir.runner.task.StageWatermarks;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.StagePlan;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.StandardMBean;
import org.apache.beam.sdk.annotations.Internal;
import org.joda.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running job's live metrics, off the run loop. At start it
 * <ul>
 *   <li>registers the job's MBeans on the platform MBean server (names and attributes:
 *       {@link WeirMXBeans}; Samza's {@code JmxReporter} is the model);
 *   <li>with {@code --metricsLogIntervalMs} above 0, logs a summary at INFO every interval on a
 *       daemon thread of its own ({@code weir-metrics-log}), plus once more when the job ends
 *       (Samza's periodic {@code MetricsSnapshotReporter} is the model);
 *   <li>with {@code --metricsHttpPort}, serves {@code /metrics} for Prometheus and the live job
 *       page ({@link MonitoringServer}); nothing listens otherwise;
 *   <li>with Beam's {@code --metricsSink}, pushes the job's Beam metrics to it ({@link MetricsPush}).
 * </ul>
 * {@link #close()} stops all of them (after a last log and a last push).
 *
 * <p>Failures to register (another MBean under the same name despite the suffix, a security
 * manager) are logged as warnings and never fail the job.
 *
 * <p>What it reads: the containers through {@link ContainerStatus} (read-only views of counters
 * their loops keep anyway), the job's checkpoint statistics through a supplier, and the job's Beam
 * metrics; it never calls into a run loop. The MBean classes are {@link MBeanViews}.
 *
 * <p>Threading: {@link #start} and {@link #close} from the executor (any thread, once each, in that
 * order); the MBeans and {@link #report()} read from any thread.
 */
@Internal
public final class JobMonitoring implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(JobMonitoring.class);
  /** Guards the choice of unique job names in the JVM's MBean server. */
  private static final Object NAMES = new Object();

  private final JobPlan plan;
  private final WeirSettings settings;
  private final List<? extends ContainerStatus> containers;
  private final List<? extends StreamStatus> streams;
  private final StepMetrics metrics;
  private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
  private final List<ObjectName> registered = new ArrayList<>();
  private final List<MBeanViews.StageView> stages = new ArrayList<>();
  private final List<TransformMetricsMBean> transforms = new ArrayList<>();
  private final List<String> transformNames = new ArrayList<>();
  private final long startTimeMs = System.currentTimeMillis();
  private String jobName;
  /** The job's checkpoint statistics ({@link CheckpointStats#NONE}: no checkpoints); any thread. */
  private final Supplier<CheckpointStats> checkpointStats;
  private ScheduledExecutorService logger;
  /** The monitoring HTTP server, or null without {@code --metricsHttpPort}. */
  private MonitoringServer http;
  /** The push to Beam's {@code --metricsSink}, or null without one. */
  private MetricsPush push;
  private boolean closed;
  /** Summaries logged so far (for tests). */
  private final AtomicLong reportsLogged = new AtomicLong();

  /**
   * @param containers the job's containers, in container order
   * @param streams the job's streams between stages (back-pressure), in plan order
   * @param metrics the job's Beam metrics (one MBean per PTransform with user metrics on)
   * @param checkpointStats the job's checkpoint statistics ({@link CheckpointStats#NONE} if it takes none)
   * @param stopper stops or drains the job (the job MBean's operations)
   */
  public JobMonitoring(JobPlan plan, WeirSettings settings, List<? extends ContainerStatus> containers,
      List<? extends StreamStatus> streams, StepMetrics metrics, Supplier<CheckpointStats> checkpointStats,
      Stopper stopper) {
    this.stopper = stopper;
    this.checkpointStats = checkpointStats;
    this.plan = plan;
    this.settings = settings;
    this.containers = containers;
    this.streams = streams;
    this.metrics = metrics;
    Map<String, MBeanViews.TaskView> byName = new HashMap<>();
    for (ContainerStatus container : containers) {
      for (ContainerStatus.TaskStatus task : container.tasks()) {
        byName.put(task.name(), new MBeanViews.TaskView(task, container.id()));
      }
    }
    for (StagePlan stage : plan.stages()) {
      List<MBeanViews.TaskView> tasks = new ArrayList<>();
      for (int p = 0; p < stage.partitions(); p++) {
        MBeanViews.TaskView task = byName.get(JobPlan.taskName(stage, p));
        if (task != null) {
          tasks.add(task);
        }
      }
      stages.add(new MBeanViews.StageView(stage.name(), tasks));
    }
    if (settings.metricsEnabled()) {
      Set<String> steps = new LinkedHashSet<>();
      for (StagePlan stage : plan.stages()) {
        for (NodeSpec node : stage.nodes()) {
          if (node.writesTo() == null) {
            steps.add(node.stepName());
          }
        }
      }
      for (String step : steps) {
        transforms.add(new TransformMetricsMBean(metrics, step));
        transformNames.add(step);
      }
    }
  }

  /** The job's name in the MBean names ({@code --jobName}, made unique in the JVM); null before {@link #start}. */
  public synchronized String jobName() {
    return jobName;
  }

  /**
   * Registers the MBeans and starts what the options ask for: the periodic log, the HTTP server,
   * the push to a Beam metrics sink.
   *
   * @throws IllegalStateException if the HTTP server cannot listen (the port is in use), naming the
   *     port and {@code --metricsHttpPort}; everything started is stopped again
   * @throws IllegalArgumentException if {@code --metricsSink} cannot be built
   */
  public synchronized void start() {
    String base = settings.pipelineOptions().getJobName();
    if (base == null || base.isBlank()) {
      base = "weir-job";
    }
    try {
      synchronized (NAMES) {
        String name = base;
        for (int n = 2; server.isRegistered(name("Job", name)); n++) {
          name = base + "-" + n;
        }
        jobName = name;
        register(name("Job", name), described(new JobView(), WeirMXBeans.JobMXBean.class,
            "A Weir job: its plan, state backend and start time", Map.of()));
      }
      for (ContainerStatus container : containers) {
        register(name("Container", jobName, "container", Integer.toString(container.id())),
            described(new MBeanViews.ContainerView(container, checkpointStats), WeirMXBeans.ContainerMXBean.class,
                "A Weir container (one run-loop thread): phase times, commits, object cache, checkpoints",
                Map.of("Checkpoints", "Checkpoints of the job completed (0 without checkpoints)",
                    "LastCheckpointNs", "The last checkpoint's pause in ns",
                    "Commits", "State commits at commit points (object-cache flush and storage commit); stays 0 "
                        + "in a job that takes checkpoints, whose state is committed by its checkpoints")));
      }
      for (MBeanViews.StageView stage : stages) {
        register(name("Stage", jobName, "stage", stage.name()), described(stage, WeirMXBeans.StageMXBean.class,
            "A stage of the plan: events and watermarks over its tasks (watermarks in epoch ms)", Map.of()));
        for (int p = 0; p < stage.tasks().size(); p++) {
          MBeanViews.TaskView task = stage.tasks().get(p);
          register(name("Task", jobName, "stage", stage.name(), "partition", Integer.toString(p)),
              described(task, WeirMXBeans.TaskMXBean.class,
                  "A task (one partition of a stage): events, bundles, watermarks (epoch ms)", Map.of()));
        }
      }
      for (int i = 0; i < transforms.size(); i++) {
        register(name("Transform", jobName, "transform", transformNames.get(i)), transforms.get(i));
      }
    } catch (JMException | RuntimeException e) {
      LOG.warn("Cannot register the JMX MBeans of Weir job {}; the job runs without them", jobName, e);
    }
    long intervalMs = settings.metricsLogIntervalMs();
    if (intervalMs > 0) {
      logger = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "weir-metrics-log");
        thread.setDaemon(true);
        return thread;
      });
      logger.scheduleAtFixedRate(this::logReport, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
    }
    try {
      WeirSettings.MetricsHttp address = settings.metricsHttp();
      if (address != null) {
        MonitoredJob monitored = new MonitoredJob(jobName, settings.stateBackend().optionValue(), startTimeMs,
            containers, stages, streams, metrics, settings.metricsEnabled(), checkpointStats);
        http = MonitoringServer.start(address.host(), address.port(), new PrometheusMetrics(monitored),
            new JobPageData(plan, monitored)::json);
        LOG.info("Weir job {}: job page at {} and Prometheus metrics at {}metrics", jobName, http.url(), http.url());
      }
      push = MetricsPush.start(jobName, settings.pipelineOptions(), metrics);
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** The monitoring HTTP server's address, e.g. {@code http://127.0.0.1:9464/}; null if none runs. */
  public synchronized String httpUrl() {
    return http == null ? null : http.url();
  }

  /** Unregisters the MBeans and stops the periodic log (after a last report). Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (http != null) {
      http.close();
    }
    if (logger != null) {
      logger.shutdownNow();
      logReport();
    }
    if (push != null) {
      push.close();
    }
    for (ObjectName name : registered) {
      try {
        server.unregisterMBean(name);
      } catch (JMException | RuntimeException e) {
        LOG.debug("Cannot unregister {}", name, e);
      }
    }
    registered.clear();
  }

  /** The names of the MBeans registered now (for tests). */
  public synchronized List<ObjectName> registeredNames() {
    return List.copyOf(registered);
  }

  /** Pushes to Beam's {@code --metricsSink} so far; 0 without a sink (for tests). */
  public synchronized long metricsPushes() {
    return push == null ? 0 : push.pushes();
  }

  /** Summaries the periodic log wrote so far (for tests). Any thread. */
  public long reportsLogged() {
    return reportsLogged.get();
  }

  private void logReport() {
    try {
      LOG.info("{}", report());
      reportsLogged.incrementAndGet();
    } catch (RuntimeException e) {
      LOG.warn("Cannot report the metrics of Weir job {}", jobName, e);
    }
  }

  /**
   * A multi-line summary: per container its loop, commits and cache; per stage its events,
   * bundles and watermarks; per PTransform its user metrics. Any thread.
   */
  public String report() {
    StringBuilder b = new StringBuilder("Weir metrics of job ").append(jobName).append(':');
    for (ContainerStatus container : containers) {
      MBeanViews.ContainerView c = new MBeanViews.ContainerView(container, checkpointStats);
      b.append(String.format(Locale.ROOT, "%n  container-%d: iterations=%d utilization=%.3f commits=%d%s "
              + "lastCommitMs=%.3f cache hits=%d misses=%d evictions=%d entries=%d bytes=%d dirty=%d",
          container.id(), c.getIterations(), c.getUtilization(), c.getCommits(),
          checkpointStats.get() == CheckpointStats.NONE ? "" : " (state is committed by checkpoints)",
          c.getLastCommitNs() / 1e6,
          c.getCacheHits(), c.getCacheMisses(), c.getCacheEvictions(), c.getCacheEntries(), c.getCacheEstimatedBytes(),
          c.getCacheDirtyEntries()));
    }
    for (MBeanViews.StageView s : stages) {
      b.append(String.format(Locale.ROOT, "%n  %s [%d partition(s)]: in=%d out=%d bundles=%d meanBundle=%.1f "
              + "maxBundle=%d inputWatermark=%s outputWatermark=%s", s.name(), s.getPartitions(), s.getEventsIn(),
          s.getEventsOut(), s.getBundles(), s.getMeanBundleSize(), s.getMaxBundleSize(),
          watermark(s.getInputWatermarkMs()), watermark(s.getOutputWatermarkMs())));
    }
    for (int i = 0; i < transforms.size(); i++) {
      Map<String, Object> values = transforms.get(i).values();
      if (!values.isEmpty()) {
        b.append("\n  '").append(transformNames.get(i)).append("': ").append(values);
      }
    }
    return b.toString();
  }

  /** A watermark for the log: an ISO instant, or "none" / "end" at Beam's bounds. */
  public static String watermark(long ms) {
    if (ms <= StageWatermarks.MIN_WATERMARK_MS) {
      return "none";
    }
    if (ms >= StageWatermarks.MAX_WATERMARK_MS) {
      return "end";
    }
    return new Instant(ms).toString();
  }

  private void register(ObjectName name, Object bean) throws JMException {
    server.registerMBean(bean, name);
    registered.add(name);
  }

  /** {@code dev.weir:type=<type>,job=<job>[,key=value...]}, values quoted where JMX needs it. */
  static ObjectName name(String type, String job, String... keyValues) throws JMException {
    StringBuilder b = new StringBuilder(WeirMXBeans.DOMAIN).append(":type=").append(type)
        .append(",job=").append(value(job));
    for (int i = 0; i < keyValues.length; i += 2) {
      b.append(',').append(keyValues[i]).append('=').append(value(keyValues[i + 1]));
    }
    return new ObjectName(b.toString());
  }

  /** {@code value} as is, or quoted if it holds a character JMX reserves in values. */
  private static String value(String value) {
    for (int i = 0; i < value.length(); i++) {
      if (",=:\"*?\\\n".indexOf(value.charAt(i)) >= 0) {
        return ObjectName.quote(value);
      }
    }
    return value;
  }

  private static <T> StandardMBean described(T bean, Class<T> type, String description,
      Map<String, String> attributes) {
    return new StandardMBean(bean, type, true) {
      @Override
      protected String getDescription(MBeanInfo info) {
        return description;
      }

      @Override
      protected String getDescription(MBeanAttributeInfo info) {
        return attributes.getOrDefault(info.getName(), info.getDescription());
      }
    };
  }


  /** Ends the job on an operator's request: the job MBean's operations. */
  public interface Stopper {
    /**
     * @param timeoutMs how long to wait for the savepoint, ms
     * @return the savepoint's directory
     */
    java.nio.file.Path stopWithSavepoint(long timeoutMs) throws Exception;

    /** Drains the job ({@code executor.JobExecutor#drain}); returns at once. */
    void drain();
  }

  private final Stopper stopper;

  private final class JobView implements WeirMXBeans.JobMXBean {
    @Override
    public String stopWithSavepoint(long timeoutMs) throws Exception {
      return stopper.stopWithSavepoint(timeoutMs).toString();
    }

    @Override
    public void drain() {
      stopper.drain();
    }

    @Override
    public long getCheckpointsCompleted() {
      return checkpointStats.get().completed();
    }

    @Override
    public long getCheckpointsSkipped() {
      return checkpointStats.get().skipped();
    }

    @Override
    public long getLastCheckpointId() {
      return checkpointStats.get().lastCompletedId();
    }

    @Override
    public long getLastCheckpointPauseMs() {
      return checkpointStats.get().lastPauseNs() / 1_000_000L;
    }

    @Override
    public long getMaxCheckpointPauseMs() {
      return checkpointStats.get().maxPauseNs() / 1_000_000L;
    }

    @Override
    public long getLastCheckpointBytes() {
      return checkpointStats.get().lastSizeBytes();
    }

    @Override
    public String getJobName() {
      return jobName();
    }

    @Override
    public int getStages() {
      return plan.stages().size();
    }

    @Override
    public int getTasks() {
      return plan.taskCount();
    }

    @Override
    public int getContainers() {
      return containers.size();
    }

    @Override
    public String getStateBackend() {
      return settings.stateBackend().optionValue();
    }

    @Override
    public String getStateDirectory() {
      return String.valueOf(settings.stateDirectory());
    }

    @Override
    public long getStartTimeMs() {
      return startTimeMs;
    }

    @Override
    public String getPlan() {
      return plan.describe();
    }
  }
}
