package dev.weir.runner.executor;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.checkpoint.CheckpointCoordinator;
import dev.weir.runner.checkpoint.CheckpointStore;
import dev.weir.runner.checkpoint.PlanFingerprint;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.state.ContainerState;
import dev.weir.state.cache.SealerQueue;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.samza.container.TaskName;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.time.ManualJobClock;
import dev.weir.state.StateBackend;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.metrics.MetricResults;
import org.apache.beam.sdk.options.StreamingOptions;

/**
 * The embedded executor of one job: builds the in-process streams, creates one {@link StageTask}
 * per partition of every stage of the plan through the job's {@link WeirTaskFactory} (the same
 * factory the samza-api face, {@code dev.weir.runner.application}, registers; the executor never
 * depends on that face), spreads the tasks over {@code --containers} {@link Container}s
 * (round-robin in plan order, so a stage's partitions land on different threads) and runs each
 * container on its own daemon thread.
 *
 * <p>Completion: {@link #completion()} completes normally when every container ran all its tasks
 * to end of stream, exceptionally with the first failure of any task (the other containers are
 * then stopped), or with a {@link CancellationException} after {@link #cancel()}.
 *
 * <p>State: each container opens its own storage ({@code --stateBackend}) under one
 * {@link JobStateDirectory} in {@code --stateDirectory}, taken at {@link #start()}: for a
 * streaming job (option {@code --streaming} or an unbounded source) the durable, locked
 * {@code <stateDirectory>/<jobName>}, kept after a failure or a cancel and deleted after a normal
 * end; for a batch job a temporary directory deleted when the job ends. Weir does not checkpoint
 * or restore yet, so no job is restorable; {@link #start()} logs one line saying so, with the job
 * name and directory.
 *
 * <p>Time: processing time comes from the system clock, except in a job that reads a
 * {@code TestStream}, which runs on a {@link ManualJobClock} that the stream's processing-time
 * events advance once the job is quiescent ({@link Quiescence}).
 *
 * <p>Monitoring: {@link #start()} logs one INFO line (job name, stages x partitions, tasks,
 * containers, state backend and directory) and registers the job's JMX MBeans (with
 * {@code --metricsLogIntervalMs}, also a periodic metrics log: {@link JobMonitoring},
 * {@link WeirMXBeans}); the last container to exit unregisters them, before the job completes.
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
  private final List<Container> containers = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final List<StageTask> tasks = new ArrayList<>();
  private int running;
  private int exited;
  private boolean failed;
  /** The first failure any container reported ({@link #failing}): the job's cause. */
  private Throwable firstFailure;
  /** Counts down as each container's run loop ends, however it ends ({@link #loopEnded}). */
  private volatile CountDownLatch loopsEnded = new CountDownLatch(0);
  private JobStateDirectory jobState;
  /** The job's checkpoints, or null if it takes none. */
  private CheckpointStore checkpointStore;
  /** Takes the job's checkpoints; null if it takes none. */
  private CheckpointCoordinator checkpoints;
  /** The id of the checkpoint the job restored, 0 if none. */
  private long restoredId;
  /** The last checkpoint whose directory was created. */
  private long preparedCheckpoint;
  /** The job's MBeans and periodic metrics log; set by {@link #start()}. */
  private JobMonitoring monitoring;
  /**
   * Encodes the state values containers seal ({@code --backgroundSealing}), taken by idle run loops
   * ({@link Container}) and by one thread per core no container uses ({@link #dedicatedSealers});
   * null when sealing is inline.
   * Set in {@link #start()}, closed when the last container exited.
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
  }

  /** Builds streams, tasks and containers and starts the container threads. */
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
    openJobState(containerCount);
    try {
      loopsEnded = new CountDownLatch(containerCount);
      // A test stream controls time: a manual clock, and quiescence tracking so that it can wait
      // for the job to settle before each event. Other jobs pay nothing for either.
      JobClock clock = plan.hasTestStream() ? new ManualJobClock() : JobClock.SYSTEM;
      Quiescence quiescence = plan.hasTestStream() ? new Quiescence(containerCount) : null;
      Map<Integer, InProcessStream> streams = new HashMap<>();
      for (StreamPlan stream : plan.streams()) {
        streams.put(stream.id(), new InProcessStream(stream, STREAM_PARTITION_CAPACITY));
      }
      WeirTaskFactory factory = new WeirTaskFactory(plan, streams, settings, metrics, clock, quiescence);
      for (TaskName name : factory.taskNames()) {
        tasks.add(factory.createTask(name));
      }
      List<List<StageTask>> assignment = new ArrayList<>();
      for (int c = 0; c < containerCount; c++) {
        assignment.add(new ArrayList<>());
      }
      for (int i = 0; i < tasks.size(); i++) {
        assignment.get(i % containerCount).add(tasks.get(i));
      }
      if (checkpointStore != null) {
        PlanFingerprint fingerprint = PlanFingerprint.of(plan, containerCount);
        checkpoints = new CheckpointCoordinator(containerCount, settings.checkpointing().intervalMs(), restoredId,
            () -> streamsEmpty(streams), id -> checkpointStore.complete(id, fingerprint, containerCount).sizeBytes());
      }
      for (int c = 0; c < containerCount; c++) {
        Container container = new Container(c, assignment.get(c), this, clock, quiescence, checkpoints);
        containers.add(container);
        Thread thread = new Thread(container, container.threadName());
        thread.setDaemon(true);
        threads.add(thread);
      }
    } catch (RuntimeException | Error e) {
      if (jobState != null) {
        jobState.close(false);
      }
      throw e;
    }
    running = containers.size();
    monitoring = new JobMonitoring(plan, settings, containers, metrics, this::checkpointStats);
    monitoring.start();
    LOG.info("Weir job {} starting: {} stage(s) x partitions [{}], {} task(s) on {} container(s), "
            + "state backend {}{}", monitoring.jobName(), plan.stages().size(),
        plan.stages().stream().map(s -> s.name() + " x " + s.partitions()).collect(Collectors.joining(", ")),
        tasks.size(), containers.size(), settings.stateBackend().optionValue(),
        jobState != null ? " in " + jobState.directory().toAbsolutePath() : " (no directory)");
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
  public synchronized List<RunLoopMetrics.Snapshot> runLoopMetrics() {
    List<RunLoopMetrics.Snapshot> result = new ArrayList<>(containers.size());
    for (Container container : containers) {
      result.add(container.runLoopMetrics().snapshot());
    }
    return result;
  }

  /** The job's metrics registry, for the containers. */
  StepMetrics stepMetrics() {
    return metrics;
  }

  /**
   * Stops every container and waits up to one second for their threads to close their tasks.
   * Idempotent; no effect on a finished job.
   */
  public void cancel() {
    completion.completeExceptionally(new CancellationException("cancelled"));
    stopAll();
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

  private synchronized void stopAll() {
    for (Container container : containers) {
      container.stop();
    }
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

  /**
   * The directory container {@code container} writes its part of checkpoint {@code id} into; the
   * checkpoint's directory is created by the first container that asks. Container threads.
   */
  synchronized Path checkpointDirectory(long id, int container) {
    if (preparedCheckpoint != id) {
      checkpointStore.prepare(id);
      preparedCheckpoint = id;
    }
    return checkpointStore.containerDirectory(id, container);
  }

  /**
   * Checkpoint statistics ({@link CheckpointCoordinator#pauseStats()}), or null if the job takes no
   * checkpoints. Any thread.
   */
  public synchronized long[] checkpointStats() {
    return checkpoints == null ? null : checkpoints.pauseStats();
  }

  /**
   * Takes the job's state directory (RocksDB backend), restores the newest checkpoint of a
   * streaming job that takes checkpoints, and logs whether the job is restorable, under which name
   * and directory, and what it restored.
   *
   * @throws IllegalStateException if a running job holds the directory (naming path and pid), or
   *     the checkpoint cannot be restored (another plan; every checkpoint damaged)
   */
  private void openJobState(int containerCount) {
    String jobName = settings.pipelineOptions().getJobName();
    boolean streaming = settings.pipelineOptions().as(StreamingOptions.class).isStreaming()
        || plan.readsUnboundedSource();
    if (settings.stateBackend() != StateBackend.ROCKSDB) {
      LOG.info("Weir job {}: state on the heap (--stateBackend={}); not restorable after a crash or a restart",
          jobName, settings.stateBackend().optionValue());
      return;
    }
    if (!streaming) {
      jobState = JobStateDirectory.openTemporary(settings.stateDirectory());
      LOG.info("Weir job {}: batch job, state in {} (deleted at the end); after a crash a batch job starts over",
          jobName, jobState.directory());
      return;
    }
    jobState = JobStateDirectory.openDurable(settings.stateDirectory(), jobName);
    WeirSettings.Checkpointing checkpointing = settings.checkpointing();
    if (!checkpointing.enabled() || plan.hasTestStream()) {
      LOG.info("Weir job {}: streaming job, state in {} (kept after a failure or cancel); NOT restorable: {}, "
          + "so state left by an earlier run under this name was wiped", jobName, jobState.directory(),
          plan.hasTestStream() ? "a job reading a TestStream takes no checkpoints" : "--checkpointingIntervalMs=0");
      return;
    }
    try {
      checkpointStore = new CheckpointStore(jobState.directory(), jobName, checkpointing.retain());
      String restored;
      if (checkpointing.restoreMode() == WeirPipelineOptions.RestoreMode.NONE) {
        checkpointStore.deleteAll();
        restored = "no checkpoint (--restoreMode=NONE: checkpoints of an earlier run deleted)";
      } else {
        CheckpointStore.Restored latest = checkpointStore.restoreLatest(PlanFingerprint.of(plan, containerCount),
            jobState::containerDirectory);
        if (latest == null) {
          restored = "no checkpoint to restore, starting fresh";
        } else {
          restoredId = latest.manifest().id();
          restored = "restored from checkpoint " + restoredId + " (" + latest.directory() + ")";
        }
      }
      LOG.info("Weir job {}: streaming job, restorable: checkpoints every {} ms in {} (the newest {} kept); {}. "
          + "Beam's default --jobName changes on every run: set --jobName to resume a job after a restart",
          jobName, checkpointing.intervalMs(), checkpointStore.root(), checkpointing.retain(), restored);
    } catch (RuntimeException e) {
      jobState.close(false);
      jobState = null;
      throw e;
    }
  }

  /**
   * Opens the state of container {@code id} from the settings: the backend, in its directory of
   * the job's {@link JobStateDirectory} (created here), bounded to {@code --objectCacheSize}
   * entries and {@code --objectCacheBytes}. Called on the container's thread.
   */
  ContainerState openState(int id) throws IOException {
    StateBackend backend = settings.stateBackend();
    Path directory = null;
    if (backend == StateBackend.ROCKSDB) {
      directory = jobState.containerDirectory(id);
      Files.createDirectories(directory);
    }
    return new ContainerState(backend, directory, settings.objectCacheBounds(), sealers,
        "weir-container-" + id, checkpointStore != null);
  }

  /**
   * Sealer threads of their own for a job of {@code containers} containers on {@code cores} cores:
   * one per core no container uses, at most one per container (sealing is a part of a container's
   * work, so more threads than containers would only wait).
   */
  static int dedicatedSealers(int cores, int containers) {
    return Math.max(0, Math.min(cores - containers, containers));
  }

  /** The queue of sealed state values to encode, for idle run loops; null if sealing is inline. Any thread. */
  SealerQueue sealers() {
    return sealers;
  }

  /** The job's live metrics (MBeans, metrics log); null before {@link #start()}. For tests. */
  synchronized JobMonitoring monitoring() {
    return monitoring;
  }

  /** The job's state directory, if the RocksDB backend uses one (for tests). */
  public synchronized Path jobStateDirectory() {
    return jobState == null ? null : jobState.directory();
  }

  /**
   * Called by a container thread the moment it fails, before it closes its tasks: the first
   * failure of the job becomes its cause, and every container is asked to stop. Closing a task
   * tears its DoFns down, which may break what other containers still use (KafkaIO's tests share
   * one producer between the writer's instances: a torn-down writer closes it under the others),
   * and their later failures must not replace the one that started it (issue 17).
   */
  void failing(Throwable failure) {
    synchronized (this) {
      if (firstFailure == null) {
        firstFailure = failure;
      }
    }
    stopAll();
  }

  /**
   * Called by each container thread when its run loop ended, before it closes its tasks. A
   * container whose tasks all ended normally ({@code awaitOthers}) then waits until every other
   * container's loop ended too (normally, failed or stopped), so that DoFns are torn down once the
   * job's processing is over, as on Beam's Direct runner, rather than while another container still
   * runs instances of the same DoFn that may share what a teardown closes (KafkaIO's tests hand
   * every writer instance one producer, which the first teardown closed under the others: issue
   * 17). A failed or stopped container does not wait. Interruption ends the wait (flag kept).
   */
  void loopEnded(boolean awaitOthers) {
    CountDownLatch latch = loopsEnded;
    latch.countDown();
    if (!awaitOthers) {
      return;
    }
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Called by each container thread as its last action (after it closed its state). */
  void containerExited(Container container, Throwable failure) {
    boolean allExited;
    synchronized (this) {
      allExited = ++exited == containers.size();
      if (failure != null) {
        failed = true;
      }
    }
    if (allExited) {
      CheckpointCoordinator c;
      synchronized (this) {
        c = checkpoints;
      }
      if (c != null) {
        LOG.info("Weir job {} checkpoints: {}", settings.pipelineOptions().getJobName(), c.summary());
      }
      List<RunLoopMetrics.Snapshot> loops = runLoopMetrics();
      for (int i = 0; i < loops.size(); i++) {
        LOG.info("Weir job {} container {} run loop: {}", settings.pipelineOptions().getJobName(), i, loops.get(i));
      }
      JobMonitoring m;
      synchronized (this) {
        m = monitoring;
      }
      if (m != null) {
        m.close(); // before completion: once waitUntilFinish returns, the job's MBeans are gone
      }
      SealerQueue s = sealers;
      if (s != null) {
        s.close(); // every cache is closed: queued encodings have nowhere to go
      }
      if (jobState != null) {
        // normal end only if every container ended normally and nobody cancelled the job
        jobState.close(!failed && !completion.isCompletedExceptionally());
      }
    }
    if (failure != null) {
      Throwable cause;
      synchronized (this) {
        cause = firstFailure == null ? failure : firstFailure;
      }
      if (completion.completeExceptionally(cause) && !(cause instanceof CancellationException)) {
        // Once, for callers that only poll getState() (Nexmark's launcher does): the cause is
        // otherwise only seen by waitUntilFinish.
        LOG.error("Weir job {} failed", settings.pipelineOptions().getJobName(), cause);
      }
      stopAll();
      return;
    }
    boolean last;
    synchronized (this) {
      last = --running == 0;
    }
    if (last) {
      completion.complete(null);
    }
  }
}
