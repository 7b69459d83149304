package dev.weir.runner.executor;

import dev.weir.runner.WeirSettings;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.StagePlan;
import dev.weir.state.cache.ObjectCacheStats;
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
import org.joda.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running job's live metrics, off the run loop: registers the job's MBeans on the platform MBean
 * server at start (names and attributes: {@link WeirMXBeans}) and, with
 * {@code --metricsLogIntervalMs} above 0, logs a summary at INFO every interval on a daemon thread
 * of its own ({@code weir-metrics-log}), plus once more when the job ends. {@link #close()}
 * unregisters everything and stops the log. Samza's {@code JmxReporter} and its
 * {@code MetricsSnapshotReporter} (periodic) are the model; nothing here opens a socket.
 *
 * <p>Failures to register (another MBean under the same name despite the suffix, a security
 * manager) are logged as warnings and never fail the job.
 *
 * <p>Threading: {@link #start} and {@link #close} from the executor (any thread, once each, in that
 * order); the MBeans and {@link #report()} read from any thread.
 */
final class JobMonitoring implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(JobMonitoring.class);
  /** Guards the choice of unique job names in the JVM's MBean server. */
  private static final Object NAMES = new Object();

  private final JobPlan plan;
  private final WeirSettings settings;
  private final List<Container> containers;
  private final StepMetrics metrics;
  private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
  private final List<ObjectName> registered = new ArrayList<>();
  private final List<StageView> stages = new ArrayList<>();
  private final List<TransformMetricsMBean> transforms = new ArrayList<>();
  private final List<String> transformNames = new ArrayList<>();
  private final long startTimeMs = System.currentTimeMillis();
  private String jobName;
  /** The job's checkpoint statistics (null: no checkpoints); any thread. */
  private final Supplier<long[]> checkpointStats;
  private ScheduledExecutorService logger;
  private boolean closed;
  /** Summaries logged so far (for tests). */
  private final AtomicLong reportsLogged = new AtomicLong();

  JobMonitoring(JobPlan plan, WeirSettings settings, List<Container> containers, StepMetrics metrics) {
    this(plan, settings, containers, metrics, () -> null);
  }

  /** @param checkpointStats the job's checkpoint statistics, or a supplier of null if it takes none */
  JobMonitoring(JobPlan plan, WeirSettings settings, List<Container> containers, StepMetrics metrics,
      Supplier<long[]> checkpointStats) {
    this.checkpointStats = checkpointStats;
    this.plan = plan;
    this.settings = settings;
    this.containers = containers;
    this.metrics = metrics;
    Map<String, TaskView> byName = new HashMap<>();
    for (Container container : containers) {
      for (StageTask task : container.tasks()) {
        byName.put(task.name().getTaskName(), new TaskView(task, container.id()));
      }
    }
    for (StagePlan stage : plan.stages()) {
      List<TaskView> tasks = new ArrayList<>();
      for (int p = 0; p < stage.partitions(); p++) {
        TaskView task = byName.get(JobPlan.taskName(stage, p));
        if (task != null) {
          tasks.add(task);
        }
      }
      stages.add(new StageView(stage.name(), tasks));
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
  synchronized String jobName() {
    return jobName;
  }

  /** Registers the MBeans and starts the periodic log if asked for. */
  synchronized void start() {
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
      for (Container container : containers) {
        register(name("Container", jobName, "container", Integer.toString(container.id())),
            described(new ContainerView(container), WeirMXBeans.ContainerMXBean.class,
                "A Weir container (one run-loop thread): phase times, commits, object cache, checkpoints",
                Map.of("Checkpoints", "Checkpoints of the job completed (0 without checkpoints)",
                    "LastCheckpointNs", "The last checkpoint's pause in ns")));
      }
      for (StageView stage : stages) {
        register(name("Stage", jobName, "stage", stage.name()), described(stage, WeirMXBeans.StageMXBean.class,
            "A stage of the plan: events and watermarks over its tasks (watermarks in epoch ms)", Map.of()));
        for (int p = 0; p < stage.tasks().size(); p++) {
          TaskView task = stage.tasks().get(p);
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
  }

  /** Unregisters the MBeans and stops the periodic log (after a last report). Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (logger != null) {
      logger.shutdownNow();
      logReport();
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
  synchronized List<ObjectName> registeredNames() {
    return List.copyOf(registered);
  }

  /** Summaries the periodic log wrote so far (for tests). Any thread. */
  long reportsLogged() {
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
  String report() {
    StringBuilder b = new StringBuilder("Weir metrics of job ").append(jobName).append(':');
    for (Container container : containers) {
      ContainerView c = new ContainerView(container);
      b.append(String.format(Locale.ROOT, "%n  container-%d: iterations=%d utilization=%.3f commits=%d "
              + "lastCommitMs=%.3f cache hits=%d misses=%d evictions=%d entries=%d bytes=%d dirty=%d",
          container.id(), c.getIterations(), c.getUtilization(), c.getCommits(), c.getLastCommitNs() / 1e6,
          c.getCacheHits(), c.getCacheMisses(), c.getCacheEvictions(), c.getCacheEntries(), c.getCacheEstimatedBytes(),
          c.getCacheDirtyEntries()));
    }
    for (StageView s : stages) {
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
  static String watermark(long ms) {
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

  /** Value {@code i} of the job's checkpoint statistics ({@code CheckpointCoordinator#pauseStats()}), 0 without. */
  private long checkpointStat(int i) {
    long[] stats = checkpointStats.get();
    return stats == null ? 0 : stats[i];
  }

  private final class JobView implements WeirMXBeans.JobMXBean {
    @Override
    public long getCheckpointsCompleted() {
      return checkpointStat(0);
    }

    @Override
    public long getCheckpointsSkipped() {
      return checkpointStat(1);
    }

    @Override
    public long getLastCheckpointId() {
      return checkpointStat(6);
    }

    @Override
    public long getLastCheckpointPauseMs() {
      return checkpointStat(4) / 1_000_000L;
    }

    @Override
    public long getMaxCheckpointPauseMs() {
      return checkpointStat(3) / 1_000_000L;
    }

    @Override
    public long getLastCheckpointBytes() {
      return checkpointStat(5);
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

  private final class ContainerView implements WeirMXBeans.ContainerMXBean {
    private static final ObjectCacheStats NO_CACHE = new ObjectCacheStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1);
    private final Container container;

    ContainerView(Container container) {
      this.container = container;
    }

    private RunLoopMetrics.Snapshot loop() {
      return container.runLoopMetrics().snapshot();
    }

    private ObjectCacheStats cache() {
      ContainerCommit commit = container.commitPoint();
      return commit == null ? NO_CACHE : commit.state().cache().stats();
    }

    private long commitValue(int which) {
      ContainerCommit commit = container.commitPoint();
      if (commit == null) {
        return 0;
      }
      return which == 0 ? commit.commits() : which == 1 ? commit.commitNs() : commit.lastCommitNs();
    }

    @Override
    public int getTasks() {
      return container.tasks().size();
    }

    @Override
    public long getIterations() {
      return loop().iterations();
    }

    @Override
    public double getUtilization() {
      return loop().utilization();
    }

    @Override
    public long getDrainOutboxesNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.DRAIN_OUTBOXES);
    }

    @Override
    public long getFireTimersNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.FIRE_TIMERS);
    }

    @Override
    public long getProcessEnvelopesNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.PROCESS_ENVELOPES);
    }

    @Override
    public long getTickNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.TICK);
    }

    @Override
    public long getCommitPhaseNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.COMMIT);
    }

    @Override
    public long getIdleNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.IDLE);
    }

    @Override
    public long getCommits() {
      return commitValue(0);
    }

    @Override
    public long getCommitNs() {
      return commitValue(1);
    }

    @Override
    public long getLastCommitNs() {
      return commitValue(2);
    }

    @Override
    public long getCheckpoints() {
      return checkpointStat(0);
    }

    @Override
    public long getLastCheckpointNs() {
      return checkpointStat(4);
    }

    @Override
    public long getCacheHits() {
      return cache().hits();
    }

    @Override
    public long getCacheMisses() {
      return cache().misses();
    }

    @Override
    public double getCacheHitRate() {
      return cache().hitRate();
    }

    @Override
    public long getCacheEvictions() {
      return cache().evictions();
    }

    @Override
    public long getCacheDirtyWriteBacks() {
      return cache().dirtyWriteBacks();
    }

    @Override
    public long getCacheEntries() {
      return cache().entries();
    }

    @Override
    public long getCacheEstimatedBytes() {
      return cache().estimatedBytes();
    }

    @Override
    public long getCacheDirtyEntries() {
      return cache().dirtyEntries();
    }

    @Override
    public long getCacheFlushes() {
      return cache().flushes();
    }

    @Override
    public long getCacheFlushNs() {
      return cache().flushNanos();
    }

    @Override
    public long getCacheBytesEncoded() {
      return cache().bytesEncoded();
    }

    @Override
    public long getCacheBytesDecoded() {
      return cache().bytesDecoded();
    }
  }

  private record StageView(String name, List<TaskView> tasks) implements WeirMXBeans.StageMXBean {
    @Override
    public int getPartitions() {
      return tasks.size();
    }

    @Override
    public long getEventsIn() {
      return tasks.stream().mapToLong(TaskView::getEventsIn).sum();
    }

    @Override
    public long getEventsOut() {
      return tasks.stream().mapToLong(TaskView::getEventsOut).sum();
    }

    @Override
    public long getBundles() {
      return tasks.stream().mapToLong(TaskView::getBundles).sum();
    }

    @Override
    public double getMeanBundleSize() {
      long bundles = getBundles();
      return bundles == 0 ? 0 : (double) getEventsIn() / bundles;
    }

    @Override
    public long getMaxBundleSize() {
      return tasks.stream().mapToLong(TaskView::getMaxBundleSize).max().orElse(0);
    }

    @Override
    public long getInputWatermarkMs() {
      return tasks.stream().mapToLong(TaskView::getInputWatermarkMs).min().orElse(StageWatermarks.MIN_WATERMARK_MS);
    }

    @Override
    public long getOutputWatermarkMs() {
      return tasks.stream().mapToLong(TaskView::getOutputWatermarkMs).min().orElse(StageWatermarks.MIN_WATERMARK_MS);
    }
  }

  private static final class TaskView implements WeirMXBeans.TaskMXBean {
    final StageTask task;
    private final int container;

    TaskView(StageTask task, int container) {
      this.task = task;
      this.container = container;
    }

    @Override
    public String getTaskName() {
      return task.name().getTaskName();
    }

    @Override
    public int getContainer() {
      return container;
    }

    @Override
    public long getEventsIn() {
      return task.stats.eventsIn();
    }

    @Override
    public long getEventsOut() {
      return task.stats.eventsOut();
    }

    @Override
    public long getBundles() {
      return task.stats.bundles();
    }

    @Override
    public long getLastBundleSize() {
      return task.stats.lastBundleSize();
    }

    @Override
    public long getMaxBundleSize() {
      return task.stats.maxBundleSize();
    }

    @Override
    public double getMeanBundleSize() {
      long bundles = getBundles();
      return bundles == 0 ? 0 : (double) getEventsIn() / bundles;
    }

    @Override
    public long getInputWatermarkMs() {
      return task.stats.inputWatermarkMs();
    }

    @Override
    public long getOutputWatermarkMs() {
      return task.stats.outputWatermarkMs();
    }
  }
}
