package dev.weir.samza;

import dev.weir.runner.ExecutionEnvironment;
import dev.weir.runner.ExecutionEnvironmentProvider;
import dev.weir.runner.WeirPipelineResult;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.task.WeirTaskFactory;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.samza.WeirJobs;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.SourceSpec;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.beam.sdk.metrics.MetricResults;
import org.apache.samza.config.MapConfig;
import org.apache.samza.context.ExternalContext;
import org.apache.samza.job.ApplicationStatus;
import org.apache.samza.runtime.LocalApplicationRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Weir's Samza execution environments, found by the runner through {@link java.util.ServiceLoader}
 * ({@link ExecutionEnvironmentProvider}). {@link ExecutionEnvironment#SAMZA_LOCAL}: the translated
 * job runs on samza-core's {@link LocalApplicationRunner} (passthrough coordinator, one processor
 * in this JVM) as a {@link SamzaTaskApplication}, each Samza task hosting the embedded executor's
 * task of the same name ({@link SamzaStageTaskFactory}); the intermediate streams are Kafka topics
 * that this run creates (partitions = the consuming stage's partitions) and, after a normal end,
 * deletes; Beam sources are read in this JVM. {@link ExecutionEnvironment#SAMZA_STANDALONE}:
 * every process runs the same main with its own {@code processor.id}; samza-core's passthrough
 * coordinator gives it its share of the tasks ({@link SamzaJobConfig}); every process creates the
 * (same) topics if missing, and none deletes them or its directories at the end, so a process
 * started again with the same {@code processor.id} finds its changelog, checkpoints and store
 * directories. Each process translates the pipeline itself, but its source stages read the splits
 * of the job's one split plan ({@link SourceSplitPlan}), which the first process publishes on the
 * job's plan topic (or a plan file the user names) and every process, a restarted one too, reads;
 * a process whose sources split into other numbers of splits runs a second translation made with
 * the plan's splits ({@link #run(JobPlan, WeirSettings, Retranslation)}), so its task layout is the
 * plan's.
 *
 * <p>State with {@code --stateBackend=rocksdb}: Samza stores with Kafka changelogs
 * ({@link SamzaStageTaskFactory}). At start the final Samza config is logged (INFO). Source splits
 * resume at their checkpointed positions (runner's BeamSourceSystemFactory) and what a source
 * stage sends again after a restart is dropped downstream by sequence number
 * ({@link MessageSequences}). With {@code job.coordinator.zk.connect}, SAMZA_STANDALONE runs
 * samza-core's ZooKeeper coordinator ({@link SamzaJobConfig}): the processes alive share the tasks
 * and take over a dead process's tasks (their stores restored from the changelogs, their inputs
 * from the checkpoints); a ZooKeeper that cannot be reached fails the start naming its address.
 * Not yet (issue 15): deduplication of what other stages send again.
 *
 * <p>Threading: stateless; {@link #run} may be called from any thread, once per job.
 */
public final class SamzaExecutionEnvironment implements ExecutionEnvironmentProvider {
  private static final Logger LOG = LoggerFactory.getLogger(SamzaExecutionEnvironment.class);
  private static final AtomicLong JOB_IDS = new AtomicLong();

  @Override
  public boolean provides(ExecutionEnvironment environment) {
    return environment == ExecutionEnvironment.SAMZA_LOCAL || environment == ExecutionEnvironment.SAMZA_STANDALONE;
  }

  /**
   * Rejects a TestStream (only the embedded executor
   * replays one) and a stream whose element coder the translation does not know.
   */
  @Override
  public void check(JobPlan plan, WeirSettings settings) {
    for (StagePlan stage : plan.stages()) {
      if (stage.source() instanceof SourceSpec.Test) {
        throw new UnsupportedOperationException(stage.nodes().get(0).stepName() + " is a TestStream, which only "
            + "--executionEnvironment=EMBEDDED replays (it waits for the job to be quiescent before each event)");
      }
    }
    for (StreamPlan stream : plan.streams()) {
      if (stream.elementCoder() == null) {
        throw new UnsupportedOperationException("stream " + stream.name() + " (from " + stream.producer().name()
            + " to " + stream.consumer().name() + ") has no known element coder, so it cannot be carried on Kafka");
      }
    }
  }

  /** Runs {@code plan}; a shared split plan with other split counts fails the start (no way to translate again). */
  @Override
  public WeirPipelineResult run(JobPlan plan, WeirSettings settings) {
    return run(plan, settings, null);
  }

  /**
   * Runs {@code plan}; with a shared split plan ({@link SourceSplitPlan}) whose split counts differ
   * from this translation's, the job runs {@code retranslate}'s plan made with the shared plan's
   * splits instead, so every process agrees with the first plan on each source stage's partitions.
   *
   * @param retranslate translates the pipeline again with given splits, or null (then other counts fail the start)
   */
  @Override
  public WeirPipelineResult run(JobPlan plan, WeirSettings settings, Retranslation retranslate) {
    check(plan, settings);
    StepMetrics metrics = new StepMetrics();
    if (settings.metricsEnabled()) {
      plan.translationMetrics().forEach(metrics::register);
    }
    String jobId = "weir-samza-" + ProcessHandle.current().pid() + "-" + JOB_IDS.incrementAndGet();
    WeirJobs.Binding binding = null;
    WeirKafkaAdmin admin = null;
    try {
      SamzaJobConfig config = new SamzaJobConfig(plan, settings, jobId);
      KafkaSettings kafka = KafkaSettings.of(SamzaJobConfig.KAFKA_SYSTEM, new MapConfig(config.config()));
      admin = new WeirKafkaAdmin(SamzaJobConfig.KAFKA_SYSTEM, kafka);
      SharedPlan shared = splitPlan(plan, config, kafka, admin);
      SourceSplitPlan.Adoption adoption = shared.plan().adopt(plan, config.jobName(), shared.where());
      if (adoption.changesCounts() && retranslate != null) {
        for (String line : adoption.adopted()) {
          LOG.info("Weir job {}: {}", config.jobName(), line);
        }
        plan = retranslate.translate(adoption.planned());
        LOG.info("Weir job {}: translated again with the split plan's splits:\n{}", config.jobName(), plan.describe());
        check(plan, settings);
        config = new SamzaJobConfig(plan, settings, jobId); // the same names; built from the plan that runs
      }
      Map<Integer, SourceSpec> sources = shared.plan().sourcesFor(plan, config.jobName(), shared.where());
      binding = WeirJobs.bind(jobId, plan,
          new WeirTaskFactory(plan, sources, Map.of(), settings, metrics, JobClock.SYSTEM, null));
      Map<String, Integer> partitions = new LinkedHashMap<>();
      for (StreamPlan stream : plan.streams()) {
        partitions.put(config.topics().get(stream.name()), stream.partitions());
      }
      admin.createTopics(partitions, config.replication());
      admin.awaitTopics(partitions);
      if (config.checkpointDirectory() != null) {
        Files.createDirectories(Path.of(config.checkpointDirectory()));
      }
      SamzaStageTaskFactory tasks = new SamzaStageTaskFactory(plan, settings, metrics, config.topics(), null,
          config.samzaStores(), config.commitMs(), config.watermarkIntervalMs(), config.transactionalIdPrefix());
      LOG.info("Weir job {}: processing guarantee {}", config.jobName(), config.guarantee());
      SamzaTaskApplication app = new SamzaTaskApplication(plan, jobId, config.topics(), tasks);
      LOG.info("Weir job {} on Samza ({}, run {}): {} stage(s), {} task(s), topics {}; Samza config:\n{}",
          config.jobName(), settings.executionEnvironment(), config.runId(), plan.stages().size(), plan.taskCount(), config.topics().values(),
          config.config().entrySet().stream().map(e -> "  " + e.getKey() + "=" + e.getValue())
              .collect(Collectors.joining("\n")));
      LocalApplicationRunner runner = new LocalApplicationRunner(app, new MapConfig(config.config()));
      Job job = new Job(runner, binding, admin, config, config.runDirectory(), metrics);
      try {
        runner.run((ExternalContext) null);
      } catch (RuntimeException e) {
        if (config.zookeeper() != null) {
          throw new IllegalStateException("Weir job " + config.jobName() + " could not start on samza-core's ZooKeeper "
              + "coordinator with ZooKeeper at " + config.zookeeper() + " (" + SamzaJobConfig.ZK_CONNECT + "; "
              + SamzaJobConfig.ZK_CONNECTION_TIMEOUT_MS + "=" + config.config().get(SamzaJobConfig.ZK_CONNECTION_TIMEOUT_MS)
              + "): " + rootCause(e), e);
        }
        throw e;
      }
      job.watch();
      return WeirPipelineResult.of(job);
    } catch (IOException e) {
      if (binding != null) {
        binding.close();
      }
      if (admin != null) {
        admin.stop();
      }
      throw new IllegalStateException("cannot create the checkpoint directory of the Samza job: " + e, e);
    } catch (RuntimeException | Error e) {
      if (binding != null) {
        binding.close();
      }
      if (admin != null) {
        admin.stop(); // a run that did not start keeps its topics, as a failed run does
      }
      throw e;
    }
  }

  /** The split plan this process uses and where it came from (for errors). */
  private record SharedPlan(SourceSplitPlan plan, String where) {}

  /**
   * The split plan this process reads its sources' splits from ({@link SourceSplitPlan}): with a
   * plan file ({@value SourceSplitPlan#PLAN_FILE_CONFIG}) or SAMZA_STANDALONE's plan topic, the
   * first plan there (this process's own if there was none); otherwise (SAMZA_LOCAL, one process)
   * this translation's own splits, through the same check.
   */
  private static SharedPlan splitPlan(JobPlan plan, SamzaJobConfig config, KafkaSettings kafka,
      WeirKafkaAdmin admin) {
    String me = config.standalone() ? "processor " + (config.processorId() == null ? "(generated)" : config.processorId())
        : "SAMZA_LOCAL";
    SourceSplitPlan mine = SourceSplitPlan.of(plan, config.jobName(),
        me + " (pid " + ProcessHandle.current().pid() + " on " + hostName() + ")");
    SplitPlanStore store;
    if (config.planFile() != null) {
      store = new FileSplitPlanStore(Path.of(config.planFile()));
    } else if (config.planTopic() != null) {
      KafkaSplitPlanStore topic = new KafkaSplitPlanStore(config.planTopic(), kafka, config.replication(),
          config.checkpointTopic(), me.replace(' ', '-'));
      topic.create(admin);
      store = topic;
    } else {
      return new SharedPlan(mine, "this process's translation");
    }
    return new SharedPlan(SourceSplitPlan.resolve(store, mine), store.describe());
  }

  private static String rootCause(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getClass().getName() + ": " + root.getMessage();
  }

  private static String hostName() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.io.IOException | SecurityException e) {
      return "unknown host";
    }
  }

  /** A running Samza job: waits for samza-core to finish, then cleans up. */
  private static final class Job implements WeirPipelineResult.Handle {
    private final LocalApplicationRunner runner;
    private final WeirJobs.Binding binding;
    private final WeirKafkaAdmin admin;
    private final SamzaJobConfig config;
    private final Path stateDirectory;
    private final StepMetrics metrics;
    private final CompletableFuture<Void> completion = new CompletableFuture<>();
    private final Thread watcher;
    private volatile boolean cancelled;

    Job(LocalApplicationRunner runner, WeirJobs.Binding binding, WeirKafkaAdmin admin, SamzaJobConfig config,
        Path stateDirectory, StepMetrics metrics) {
      this.runner = runner;
      this.binding = binding;
      this.admin = admin;
      this.config = config;
      this.stateDirectory = stateDirectory;
      this.metrics = metrics;
      this.watcher = new Thread(this::awaitFinish, "weir-samza-watch-" + config.jobName());
      this.watcher.setDaemon(true);
    }

    void watch() {
      watcher.start();
    }

    private void awaitFinish() {
      Throwable failure = null;
      try {
        runner.waitForFinish();
        ApplicationStatus status = runner.status();
        if (status.getStatusCode() != ApplicationStatus.StatusCode.SuccessfulFinish) {
          failure = status.getThrowable() != null ? status.getThrowable()
              : new IllegalStateException("Samza job " + config.jobName() + " ended with status " + status);
        }
      } catch (Throwable t) {
        failure = t;
      }
      boolean normal = failure == null && !cancelled;
      try {
        binding.close();
        if (normal && config.deleteTopics() && !config.standalone()) {
          try {
            List<String> topics = new ArrayList<>(config.topics().values());
            if (config.changelogTopic() != null) {
              topics.add(config.changelogTopic());
            }
            admin.deleteTopics(topics);
          } catch (RuntimeException e) {
            LOG.warn("Weir job {}: could not delete its topics {}", config.jobName(), config.topics().values(), e);
          }
        }
        admin.stop();
        if (stateDirectory != null && !config.standalone()) {
          deleteRecursively(stateDirectory);
        }
      } finally {
        if (cancelled) {
          completion.completeExceptionally(new CancellationException("cancelled"));
        } else if (failure != null) {
          completion.completeExceptionally(failure);
        } else {
          completion.complete(null);
        }
      }
    }

    @Override
    public CompletableFuture<Void> completion() {
      return completion;
    }

    @Override
    public MetricResults metrics() {
      return metrics.results();
    }

    @Override
    public void cancel() {
      if (completion.isDone()) {
        return;
      }
      cancelled = true;
      runner.kill();
      awaitThreads(10_000L);
    }

    @Override
    public void awaitThreads(long millis) {
      try {
        watcher.join(millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private static void deleteRecursively(Path directory) {
      if (!Files.exists(directory)) {
        return;
      }
      try (Stream<Path> paths = Files.walk(directory)) {
        for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
          Files.deleteIfExists(p);
        }
      } catch (IOException e) {
        LOG.warn("Could not delete the state directory {}", directory, e);
      }
    }
  }
}
