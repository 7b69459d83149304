package dev.weir.runner.executor;

import dev.weir.runner.WeirSettings;
import dev.weir.runner.checkpoint.CheckpointCoordinator;
import dev.weir.runner.checkpoint.CheckpointStats;
import dev.weir.runner.checkpoint.JobRestore;
import dev.weir.runner.metrics.RunLoopMetrics;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.monitoring.JobMonitoring;
import dev.weir.runner.monitoring.StreamStatus;
import dev.weir.runner.stream.InProcessStream;
import dev.weir.runner.task.RescaledTaskParts;
import dev.weir.runner.task.StageTask;
import dev.weir.runner.task.WeirTaskFactory;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.time.ManualJobClock;
import dev.weir.runner.time.Quiescence;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StreamPlan;
import dev.weir.state.cache.ObjectCacheStats;
import dev.weir.state.cache.SealerQueue;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.metrics.MetricResults;
import org.apache.samza.container.TaskName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded executor of one job: builds the in-process streams, creates one {@link StageTask}
 * per partition of every stage of the plan through the job's {@link WeirTaskFactory}, spreads the
 * tasks over {@code --containers} {@link Container}s (round-robin in plan order, so a stage's
 * partitions land on different threads) and runs each container on its own daemon thread. Each
 * container gets a {@link ContainerContext} and never calls back here.
 *
 * <p>Completion: {@link #completion()} completes normally when every container ran all its tasks
 * to end of stream, exceptionally with the first failure of any task (the other containers are
 * then stopped: {@link FailureCoordinator}), or with a {@link CancellationException} after
 * {@link #cancel()}.
 *
 * <p>State and checkpoints: {@link JobRestore} decides at {@link #start()} where the job's state
 * lives ({@code --stateBackend}, {@code --stateDirectory}), whether the job takes checkpoints and
 * what it restores, and logs one line saying so; each container opens its own storage there
 * ({@link ContainerStates}). A streaming job on RocksDB with {@code --checkpointingIntervalMs}
 * above 0 takes checkpoints ({@link CheckpointCoordinator}) and resumes from the newest complete
 * one when started again under the same {@code --jobName}.
 *
 * <p>Time: processing time comes from the system clock, except in a job that reads a
 * {@code TestStream}, which runs on a {@link ManualJobClock} that the stream's processing-time
 * events advance once the job is quiescent ({@link Quiescence}).
 *
 * <p>Monitoring: {@link #start()} logs one INFO line (job name, stages x partitions, tasks,
 * containers, state backend and directory) and starts the job's {@link JobMonitoring}: its JMX
 * MBeans, and as the options ask a periodic metrics log, the monitoring HTTP server (Prometheus,
 * the job page; a port in use fails the start, before any container thread runs) and the push to
 * a Beam metrics sink. It reads the containers and the in-process streams through read-only
 * views ({@link StreamStatus} for back-pressure). The last container to exit stops all of it,
 * before the job completes.
 *
 * <p>Threading: {@link #start()} once from the submitting thread; {@link #cancel()},
 * {@link #metrics()} and {@link #completion()} from any thread.
 */
@Internal
public final class JobExecutor {
  private static final Logger LOG = LoggerFactory.getLogger(JobExecutor.class);
  /** Capacity of each in-process stream partition, in envelopes. */
  public static final int STREAM_PARTITION_CAPACITY = 1024;

  private final JobPlan plan;
  private final WeirSettings settings;
  private final StepMetrics metrics = new StepMetrics();
  /** The merged metrics of a job that ended normally (final values); null before. Any thread. */
  private volatile MetricResults finalMetrics;
  private final CompletableFuture<Void> completion = new CompletableFuture<>();
  private final FailureCoordinator failures;
  private final List<Container> containers = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final List<StageTask> tasks = new ArrayList<>();
  /** The job's state directory and checkpoints; set by {@link #start()}. */
  private JobRestore restore;
  /** Takes the job's checkpoints; null if it takes none. */
  private volatile CheckpointCoordinator checkpoints;
  /** The job's MBeans and periodic metrics log; set by {@link #start()}. */
  private JobMonitoring monitoring;
  /**
   * Encodes the state values containers seal ({@code --backgroundSealing}), taken by idle run loops
   * ({@link Container}) and by one thread per core no container uses ({@link #dedicatedSealers});
   * null when sealing is inline. Set in {@link #start()}, closed when the last container exited.
   */
  private volatile SealerQueue sealers;

  /**
   * Prepares (but does not start) the execution of {@code plan}.
   *
   * @param settings the run's validated settings (containers, bundles, state, metrics)
   */
  public JobExecutor(JobPlan plan, WeirSettings settings) {
    this.plan = plan;
    this.settings = settings;
    this.failures = new FailureCoordinator(settings.pipelineOptions().getJobName(), completion, this::jobEnded);
  }

  /**
   * Builds streams, tasks and containers and starts the container threads.
   *
   * @throws IllegalStateException if the job's state directory is held by a running job, or its
   *     checkpoint cannot be restored (see {@link JobRestore#open})
   */
  public synchronized void start() {
    if (settings.metricsEnabled()) {
      plan.translationMetrics().forEach(metrics::register);
    }
    int containerCount = Math.max(1, Math.min(settings.containers(), plan.taskCount()));
    if (settings.backgroundSealing()) {
      sealers = new SealerQueue();
      sealers.startThreads(dedicatedSealers(Runtime.getRuntime().availableProcessors(), containerCount),
          "weir-state-sealer");
    }
    restore = JobRestore.open(plan, settings, containerCount, new RescaledTaskParts(plan));
    List<StreamStatus> streamStatuses = new ArrayList<>();
    try {
      // A test stream controls time: a manual clock, and quiescence tracking so that it can wait
      // for the job to settle before each event. Other jobs pay nothing for either.
      JobClock clock = plan.hasTestStream() ? new ManualJobClock() : JobClock.SYSTEM;
      Quiescence quiescence = plan.hasTestStream() ? new Quiescence(containerCount) : null;
      Map<Integer, InProcessStream> streams = new HashMap<>();
      for (StreamPlan stream : plan.streams()) {
        InProcessStream inProcess = new InProcessStream(stream, STREAM_PARTITION_CAPACITY);
        streams.put(stream.id(), inProcess);
        streamStatuses.add(streamStatus(inProcess));
      }
      WeirTaskFactory factory = new WeirTaskFactory(plan, streams, settings, metrics, clock, quiescence);
      for (TaskName name : factory.taskNames()) {
        tasks.add(factory.createTask(name));
      }
      if (restore.checkpointed()) {
        checkpoints = new CheckpointCoordinator(containerCount, settings.checkpointing().intervalMs(),
            restore.restoredId(), () -> streamsEmpty(streams),
            restore::complete);
      }
      ContainerContext context = new ContainerContext(clock, quiescence, new ContainerStates(settings, restore, sealers),
          metrics, sealers, checkpoints, restore, failures, settings.concurrency());
      for (int c = 0; c < containerCount; c++) {
        List<StageTask> assigned = new ArrayList<>();
        for (int i = c; i < tasks.size(); i += containerCount) {
          assigned.add(tasks.get(i));
        }
        Container container = new Container(c, assigned, context);
        containers.add(container);
        Thread thread = new Thread(container, container.threadName());
        thread.setDaemon(true);
        threads.add(thread);
      }
    } catch (RuntimeException | Error e) {
      restore.close(false);
      throw e;
    }
    failures.setContainers(containers);
    monitoring = new JobMonitoring(plan, settings, List.copyOf(containers), List.copyOf(streamStatuses), metrics,
        this::checkpointStats, new JobMonitoring.Stopper() {
          @Override
          public Path stopWithSavepoint(long timeoutMs) throws Exception {
            return JobExecutor.this.stopWithSavepoint(timeoutMs);
          }

          @Override
          public void drain() {
            JobExecutor.this.drain();
          }
        });
    try {
      monitoring.start();
    } catch (RuntimeException e) {
      // No container thread started: release what start() took, as if the job never ran.
      SealerQueue s = sealers;
      if (s != null) {
        s.close();
      }
      restore.close(false);
      throw e;
    }
    Path directory = restore.directory() == null ? null : restore.directory().directory();
    LOG.info("Weir job {} starting: {} stage(s) x partitions [{}], {} task(s) on {} container(s), "
            + "state backend {}{}", monitoring.jobName(), plan.stages().size(),
        plan.stages().stream().map(s -> s.name() + " x " + s.partitions()).collect(Collectors.joining(", ")),
        tasks.size(), containers.size(), settings.stateBackend().optionValue(),
        directory != null ? " in " + directory.toAbsolutePath() : " (no directory)");
    if (checkpoints != null) {
      StopSignals.register(this); // SIGTERM and Ctrl-C stop the job with a savepoint; unregistered at its end
    }
    for (Thread thread : threads) {
      thread.start();
    }
  }

  /** Completes when the job ends; see the class comment. */
  public CompletableFuture<Void> completion() {
    return completion;
  }

  /**
   * Beam metrics of the job so far; one result per (step, metric), attempted and committed values
   * (see {@link StepMetrics}). Any thread, also while running.
   *
   * <p>Once the job ended normally its values are final (every container committed all of them
   * before the last one exited and completed the job), so they are merged once and that result is
   * returned to every later call: a caller that reads metric after metric through
   * {@code PipelineResult.metrics()} (Nexmark reads about ten after each run) no longer merges all
   * (task, step) containers for each. While the job runs, and after a failure or a cancel (when
   * stopped containers may still be exiting), every call merges afresh.
   */
  public MetricResults metrics() {
    MetricResults done = finalMetrics;
    if (done != null) {
      return done;
    }
    boolean ended = completion.isDone() && !completion.isCompletedExceptionally(); // read before merging
    MetricResults now = metrics.results();
    if (ended) {
      finalMetrics = now;
    }
    return now;
  }

  /**
   * Per container, in container order, where its run loop spends its time so far (see
   * {@link RunLoopMetrics}); empty before {@link #start()}. Any thread, also while running.
   */
  private synchronized ObjectCacheStats cacheStats(int container) {
    return container < containers.size() ? containers.get(container).cache() : null;
  }

  public synchronized List<RunLoopMetrics.Snapshot> runLoopMetrics() {
    List<RunLoopMetrics.Snapshot> result = new ArrayList<>(containers.size());
    for (Container container : containers) {
      result.add(container.runLoop());
    }
    return result;
  }

  /**
   * Drains the job, as Beam defines it: its sources read nothing more and end, watermarks advance to
   * the end of time, every window and timer fires, and the job then ends normally ({@code DONE},
   * its state directory deleted). Returns at once; {@link #completion()} completes when the drain is
   * done. A splittable DoFn that never ends (an unbounded read through a splittable DoFn) keeps a
   * drained job running. Any thread; idempotent.
   */
  public void drain() {
    LOG.info("Weir job {}: draining: sources stop, watermarks advance to the end of time, every window and timer "
        + "fires, then the job ends", jobName());
    for (Container container : containers) {
      container.drain();
    }
  }

  /** The job's name ({@code --jobName}). */
  String jobName() {
    return settings.pipelineOptions().getJobName();
  }

  /** {@code --checkpointingIntervalMs}. */
  long checkpointIntervalMs() {
    return settings.checkpointing().intervalMs();
  }

  /**
   * Stops the job with a savepoint: a checkpoint taken now, after which the job ends as cancelled
   * ({@link CheckpointCoordinator#requestStop()}); started again under the same {@code --jobName} and
   * {@code --stateDirectory}, it resumes exactly there. Any thread.
   *
   * @param timeoutMs how long to wait for the checkpoint, ms
   * @return the savepoint's directory ({@code <stateDirectory>/<jobName>/checkpoints/chk-<id>})
   * @throws IllegalStateException if the job takes no checkpoints, or ended before the checkpoint
   * @throws TimeoutException if no checkpoint completed within {@code timeoutMs}; the stop stays
   *     requested (the job stops at the next checkpoint that completes)
   */
  public Path stopWithSavepoint(long timeoutMs) throws TimeoutException, InterruptedException {
    CheckpointCoordinator coordinator = checkpoints;
    if (coordinator == null) {
      throw new IllegalStateException("Weir job " + settings.pipelineOptions().getJobName() + " takes no "
          + "checkpoints (a batch job, --stateBackend=MEMORY, --checkpointingIntervalMs=0 or a TestStream), so it "
          + "cannot stop with a savepoint; cancel it instead");
    }
    long id;
    try {
      id = coordinator.requestStop().get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException("Weir job " + settings.pipelineOptions().getJobName()
          + " could not stop with a savepoint: " + e.getCause().getMessage(), e.getCause());
    }
    Path savepoint = restore.store().directory(id);
    LOG.info("Weir job {} stopped with a savepoint, checkpoint {} ({}): started again with the same --jobName and "
        + "--stateDirectory, it resumes there", settings.pipelineOptions().getJobName(), id, savepoint);
    completion.completeExceptionally(new CancellationException("stopped with a savepoint: " + savepoint));
    failures.stopAll();
    awaitThreads(TimeUnit.SECONDS.toMillis(1));
    return savepoint;
  }

  /**
   * Stops every container and waits up to one second for their threads to close their tasks.
   * Idempotent; no effect on a finished job.
   */
  public void cancel() {
    completion.completeExceptionally(new CancellationException("cancelled"));
    failures.stopAll();
    awaitThreads(TimeUnit.SECONDS.toMillis(1));
  }

  /** Waits up to {@code millis} for all container threads to exit. */
  public void awaitThreads(long millis) {
    long deadline = System.currentTimeMillis() + millis;
    List<Thread> snapshot;
    synchronized (this) {
      snapshot = new ArrayList<>(threads);
    }
    for (Thread thread : snapshot) {
      long left = deadline - System.currentTimeMillis();
      if (left <= 0) {
        return;
      }
      try {
        thread.join(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Number of tasks (for tests). */
  public synchronized int taskCount() {
    return tasks.size();
  }

  /** How monitoring reads {@code stream}: its partitions' queue sizes (back-pressure). */
  private static StreamStatus streamStatus(InProcessStream stream) {
    StreamPlan plan = stream.plan();
    return new StreamStatus() {
      @Override
      public String name() {
        return plan.name();
      }

      @Override
      public String kind() {
        return plan.kind().name();
      }

      @Override
      public String producerStage() {
        return plan.producer().name();
      }

      @Override
      public String consumerStage() {
        return plan.consumer().name();
      }

      @Override
      public int partitions() {
        return stream.partitionCount();
      }

      @Override
      public int queued(int partition) {
        return stream.partition(partition).size();
      }

      @Override
      public int capacity() {
        return STREAM_PARTITION_CAPACITY;
      }
    };
  }

  /** Whether every partition of every in-process stream is empty (all containers wait meanwhile). */
  private static boolean streamsEmpty(Map<Integer, InProcessStream> streams) {
    for (InProcessStream stream : streams.values()) {
      for (int p = 0; p < stream.partitionCount(); p++) {
        if (stream.partition(p).size() > 0) {
          return false;
        }
      }
    }
    return true;
  }

  /** The job's checkpoints so far; {@link CheckpointStats#NONE} if it takes none. Any thread. */
  public CheckpointStats checkpointStats() {
    CheckpointCoordinator c = checkpoints;
    return c == null ? CheckpointStats.NONE : c.stats();
  }

  /**
   * Sealer threads of their own for a job of {@code containers} containers on {@code cores} cores:
   * one per core no container uses, at most one per container (sealing is a part of a container's
   * work, so more threads than containers would only wait).
   */
  static int dedicatedSealers(int cores, int containers) {
    return Math.max(0, Math.min(cores - containers, containers));
  }

  /** The job's live metrics (MBeans, metrics log); null before {@link #start()}. For tests. */
  public synchronized JobMonitoring monitoring() {
    return monitoring;
  }

  /** The job's state directory, if the RocksDB backend uses one (for tests). */
  public synchronized Path jobStateDirectory() {
    return restore == null || restore.directory() == null ? null : restore.directory().directory();
  }

  /**
   * The job's end, run by {@link FailureCoordinator} on the last container thread to exit, before
   * the job completes: logs the checkpoint and run-loop summaries and each container's
   * object-cache counters, unregisters the MBeans (once {@code waitUntilFinish} returns they are
   * gone), closes the sealers (every cache is closed: queued encodings have nowhere to go) and
   * releases the state directory.
   */
  private void jobEnded(boolean normalEnd) {
    String jobName = settings.pipelineOptions().getJobName();
    CheckpointCoordinator c = checkpoints;
    if (c != null) {
      StopSignals.unregister(this);
      LOG.info("Weir job {} checkpoints: {}", jobName, c.summary());
    }
    List<RunLoopMetrics.Snapshot> loops = runLoopMetrics();
    if (loops.stream().allMatch(loop -> loop.iterations() == 0)) {
      // A job that failed while its containers opened (e.g. a restore that failed): no loop ran.
      LOG.info("Weir job {}: no container ran its loop ({} container(s))", jobName, loops.size());
    } else {
      for (int i = 0; i < loops.size(); i++) {
        LOG.info("Weir job {} container {} run loop: {}", jobName, i, loops.get(i));
        ObjectCacheStats cache = cacheStats(i);
        if (cache != null) {
          LOG.info("Weir job {} container {} object cache: {}", jobName, i, cache.summary());
        }
      }
    }
    JobMonitoring m;
    synchronized (this) {
      m = monitoring;
    }
    if (m != null) {
      m.close();
    }
    SealerQueue s = sealers;
    if (s != null) {
      s.close();
    }
    restore.close(normalEnd);
  }
}
