package dev.weir.runner.executor;

import dev.weir.runner.metrics.RunLoopMetrics;
import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.monitoring.ContainerStatus;
import dev.weir.runner.source.SourcePartition;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.stream.InProcessStream;
import dev.weir.runner.stream.InputPartition;
import dev.weir.runner.stream.KeyedElement;
import dev.weir.runner.stream.ProducerEndOfStream;
import dev.weir.runner.stream.ProducerWatermark;
import dev.weir.runner.task.ContainerCommit;
import dev.weir.runner.operators.FailureContext;
import dev.weir.runner.task.StageTask;
import dev.weir.runner.task.TaskOp;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.time.Quiescence;
import dev.weir.state.cache.ObjectCacheStats;
import dev.weir.state.cache.SealerQueue;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A container: one thread running a run loop over a fixed set of tasks (Samza's RunLoop, shaped
 * like Agrona's duty cycle). Each iteration runs named phases that report how much work they did:
 *
 * <ol>
 *   <li>{@link #runMailbox()}: run the letters other threads handed the loop through its
 *       {@link Mailbox} (elements a concurrent ParDo ran on the container's
 *       {@link ContainerWorkers} completed: their outputs go downstream on this thread);
 *   <li>{@link #drainOutboxes()}: move blocked tasks' output into downstream streams;
 *   <li>{@link #continueTimers()}: tasks whose operators still have ready timers (made ready by a
 *       watermark or a tick) fire the next bounded slice of them (see {@link StageTask#continueTimers()});
 *   <li>{@link #processEnvelopes()}: round-robin over every (task, input partition), up to
 *       {@value #BURST} messages each, while the task's next op is to take input;
 *   <li>{@link #tick()} (tasks taking input, or waiting for calls in flight on worker threads):
 *       every {@value #TICK_NS} ns (real time; every iteration while a test
 *       stream awaits quiescence, and then, once nothing is in flight, every open bundle closes:
 *       {@link Quiescence#settled()}), let tasks close timed-out bundles
 *       and fire processing-time timers ({@code WindowableTask.window}) at the job's
 *       {@link JobClock} (the system clock, or a test stream's manual clock); with a
 *       {@link Quiescence} tracker, processed stream messages and ticks are reported to it;
 *   <li>if nothing happened, encode up to {@value #SEAL_JOBS_WHEN_IDLE} state values that any
 *       container's tasks sealed ({@link SealerQueue}, {@code --backgroundSealing}), and idle with
 *       back-off if there were none either.
 * </ol>
 *
 * <p>Each phase acts on the tasks whose {@link StageTask#nextOp()} is its own (drain, fire, process
 * and tick), so whether a task may run is decided once, by the task. Each phase reports its work
 * (messages moved or processed, timers fired, a tick's closed bundles and firings) and is timed:
 * {@link #runLoopMetrics()} keeps cumulative ns per phase, iterations and utilization, from one
 * {@link System#nanoTime()} per phase boundary per iteration.
 *
 * <p>The loop ends when every task is done and its outbox empty (in a job that takes checkpoints:
 * every task of every container, since a finished container's state belongs to every later
 * checkpoint), when the job is stopped (cancel or another container's failure), or when a task
 * fails; tasks are closed on this thread either way, after a normal end only once every
 * container's loop ended ({@link FailureCoordinator#loopEnded}), and after a failure only once the
 * failure was reported ({@link FailureCoordinator#failing}).
 *
 * <p>Checkpoints (after the commit, when the job takes them): the container's part is its
 * {@link ContainerCheckpointer}. While one is due the container stops polling its source
 * partitions and ticks without processing-time firings; the checkpointer quiesces the tasks,
 * waits for the other containers, writes the container's part and tells the tasks when it
 * completed.
 *
 * <p>State and commits: the container owns one {@link ContainerState} (storage + object cache)
 * shared by its tasks, opened at the start of {@link #run()} and closed (uncommitted writes
 * dropped) when the loop ends for any reason. At the end of every iteration in which a task
 * finished a bundle, its {@link ContainerCommit} commits: the state if a bundle wrote any or took
 * a source checkpoint mark (after which every task hears of it, {@link StageTask#committed()},
 * which finalizes the marks it held), then the tasks' metrics as committed values, then bundle
 * finalization callbacks. When every task ended normally, the metrics are committed once more
 * after the tasks closed.
 *
 * <p>Steps: the container owns one {@link StepScope}; its tasks enter the callee's step around
 * every call into an operator (and every fused edge, and source reads), which makes that
 * PTransform's metrics container current and tags the time with its full name, so metrics count
 * per PTransform and an async-profiler recording splits by PTransform (inert without the profiler).
 *
 * <p>Its job hands it a {@link ContainerContext} (state opener, metrics, clock, sealers,
 * checkpoints, where to report failures) and never hears from it otherwise: the container calls
 * no method of {@link JobExecutor}.
 *
 * <p>Worker threads: with {@code --containerThreadPoolSize} above 0 the container owns that many
 * worker threads ({@link ContainerWorkers}, started on first use) on which its tasks' concurrent
 * ParDos run {@code @ProcessElement}; they hand results back only through the mailbox, so every
 * operator stays confined to this thread. When the loop ends the workers are shut down
 * (running calls interrupted) before the tasks close.
 *
 * <p>Threading: everything here runs on the container's own thread, except {@link #stop()}, the
 * monitoring reads ({@link ContainerStatus}: any thread, counters the loop keeps anyway) and
 * {@link Mailbox#put} (any thread).
 */
final class Container implements Runnable, ContainerStatus, FailureCoordinator.Stoppable {
  private static final Logger LOG = LoggerFactory.getLogger(Container.class);
  static final int BURST = 16;
  /** Letters run per mailbox phase at most, so that input and timers are not starved by completions. */
  static final int LETTERS_PER_PASS = 256;
  static final long TICK_NS = 5_000_000L;

  /**
   * A task's input partition, the unit of round-robin.
   *
   * @param inputIndex the partition's index among the task's inputs ({@link StageTask#process})
   * @param counted whether processed messages count for quiescence (in-process streams only)
   */
  private record Slot(StageTask task, int inputIndex, InputPartition input, boolean counted, boolean source) {}

  private final int id;
  private final List<StageTask> tasks;
  private final Slot[] slots;
  private final ContainerContext context;
  private final JobClock clock;
  /** The job's quiescence tracker (test streams), or null. */
  private final Quiescence quiescence;
  /** The container's part of checkpoints, or null: the job takes none. */
  private final ContainerCheckpointer checkpoints;
  /** The container's state, once {@link #run()} opened it; container thread only. */
  private ContainerState state;
  /** The tasks as monitoring reads them. */
  private final List<TaskStatus> taskStatus;
  /** Whether sources and processing-time timers are paused for a checkpoint (this pass). */
  private boolean paused;
  /** Where other threads hand work to this loop; drained in {@link #runMailbox()}. */
  private final Mailbox mailbox = new Mailbox();
  private final BackoffIdle idle = new BackoffIdle(mailbox);
  /** The container's worker threads for concurrent ParDos, or null: the job asks for none. */
  private final ContainerWorkers workers;
  /** The job's queue of sealed state values to encode, or null (see {@link #SEAL_JOBS_WHEN_IDLE}). */
  private final SealerQueue sealers;
  /**
   * Sealed state values (a bag's full chunk each, ~0.1 ms for 64 Nexmark events) this loop encodes
   * after an iteration without work, before it backs off: any task's, so that the idle time of one
   * container takes encoding off a busier one ({@link SealerQueue}). Few, so that input arriving
   * meanwhile waits little.
   */
  static final int SEAL_JOBS_WHEN_IDLE = 4;
  private final RunLoopMetrics loop = new RunLoopMetrics();
  private volatile boolean running = true;
  /** The container's commit point (and through it its state), published for monitoring; null until opened. */
  private volatile ContainerCommit published;
  private int cursor;
  private long lastTickNs;

  /**
   * @param id the container's id, from 0
   * @param tasks the tasks it runs, unopened
   * @param context what it needs from its job
   */
  Container(int id, List<StageTask> tasks, ContainerContext context) {
    this.id = id;
    this.tasks = tasks;
    this.context = context;
    this.sealers = context.sealers();
    this.clock = context.clock();
    this.quiescence = context.quiescence();
    List<TaskStatus> status = new ArrayList<>(tasks.size());
    for (StageTask task : tasks) {
      status.add(new TaskStatus(task.name().getTaskName(), task.stats()));
    }
    this.taskStatus = List.copyOf(status);
    this.workers = context.concurrency() != null && context.concurrency().enabled()
        ? new ContainerWorkers(threadName(id), context.concurrency().threadPoolSize(),
            context.concurrency().taskMaxConcurrency(), mailbox, quiescence)
        : null;
    this.checkpoints = context.checkpoints() == null ? null : new ContainerCheckpointer(id, context.checkpoints(), tasks,
        (checkpointId, metadata) -> state.checkpoint(metadata, context.restore().partDirectory(checkpointId, id)),
        () -> running, this::hasStreamInput); // built once: the loop asks every iteration
    List<Slot> all = new ArrayList<>();
    for (StageTask task : tasks) {
      List<InputPartition> inputs = task.inputPartitions();
      for (int i = 0; i < inputs.size(); i++) {
        InputPartition input = inputs.get(i);
        all.add(new Slot(task, i, input, quiescence != null && input instanceof InProcessStream.Partition,
            input instanceof SourcePartition));
      }
    }
    this.slots = all.toArray(new Slot[0]);
  }

  /** The name of container {@code id}'s thread, also its state's name in logs: {@code weir-container-<id>}. */
  static String threadName(int id) {
    return "weir-container-" + id;
  }

  /** The container's thread name. */
  String threadName() {
    return threadName(id);
  }

  /** Where this container's run loop spends its time; readable from any thread while it runs. */
  RunLoopMetrics runLoopMetrics() {
    return loop;
  }

  @Override
  public int id() {
    return id;
  }

  /** The container's tasks, in the order it runs them (for tests). */
  List<StageTask> taskList() {
    return tasks;
  }

  @Override
  public List<TaskStatus> tasks() {
    return taskStatus;
  }

  @Override
  public RunLoopMetrics.Snapshot runLoop() {
    return loop.snapshot();
  }

  @Override
  public ContainerCommit.CommitStats commits() {
    ContainerCommit commit = published;
    return commit == null ? ContainerCommit.CommitStats.NONE : commit.stats();
  }

  @Override
  public ObjectCacheStats cache() {
    ContainerCommit commit = published;
    return commit == null ? null : commit.state().cache().stats();
  }

  /**
   * Drains the container's source splits ({@link StageTask#drainSources}), through its mailbox: on
   * the loop thread, at its next iteration. Any thread.
   */
  void drain() {
    mailbox.put(() -> {
      for (StageTask task : tasks) {
        task.drainSources();
      }
    });
  }

  /** Asks the loop to end at its next iteration. Any thread. */
  @Override
  public void stop() {
    running = false;
  }

  @Override
  public void run() {
    StepScope scope = new StepScope();
    scope.installOnCurrentThread();
    Throwable failure = null;
    ContainerCommit commit = null;
    boolean ended = false;
    mailbox.bindOwner();
    try {
      state = context.states().open(id);
      commit = new ContainerCommit(state, context.metrics().newCommitter(), this::stateCommitted);
      published = commit;
      if (checkpoints != null) {
        checkpoints.restore(state.storage().committedMetadata());
      }
      for (StageTask task : tasks) {
        task.open(scope, commit, checkpoints != null, workers);
      }
      long t0 = System.nanoTime();
      while (running && !finished()) {
        paused = checkpoints != null && checkpoints.paused();
        int work = runMailbox();
        long tm = System.nanoTime();
        work += drainOutboxes();
        long t1 = System.nanoTime();
        work += continueTimers();
        long t2 = System.nanoTime();
        work += processEnvelopes();
        long t3 = System.nanoTime();
        work += tick();
        long t4 = System.nanoTime();
        state.safePoint(); // between elements: evicted dirty state may be encoded now
        commit.commitIfNeeded();
        if (checkpoints != null) {
          work += checkpoints.pass(work, t4);
        }
        long t5 = System.nanoTime();
        if (work == 0 && sealers != null) {
          work = sealers.runPending(SEAL_JOBS_WHEN_IDLE); // another task's encodings, not a back-off
        }
        long t5a = System.nanoTime();
        idle.idle(work);
        long t6 = System.nanoTime();
        loop.add(RunLoopMetrics.Phase.MAILBOX, tm - t0);
        loop.add(RunLoopMetrics.Phase.DRAIN_OUTBOXES, t1 - tm);
        loop.add(RunLoopMetrics.Phase.FIRE_TIMERS, t2 - t1);
        loop.add(RunLoopMetrics.Phase.PROCESS_ENVELOPES, t3 - t2);
        loop.add(RunLoopMetrics.Phase.TICK, t4 - t3);
        loop.add(RunLoopMetrics.Phase.COMMIT, t5 - t4);
        loop.add(RunLoopMetrics.Phase.SEAL, t5a - t5);
        loop.add(RunLoopMetrics.Phase.IDLE, t6 - t5a);
        loop.iterationDone();
        t0 = t6;
      }
      if (running) {
        commit.commitIfNeeded();
        ended = true;
      }
    } catch (Throwable t) {
      failure = t;
      context.failures().failing(t); // before closing the tasks: their teardown must not become the job's cause
    } finally {
      if (checkpoints != null) {
        checkpoints.leave(); // before waiting: a checkpoint elsewhere must not wait for this loop
      }
      if (quiescence != null) {
        quiescence.exited(id); // before waiting: a test stream elsewhere must not wait for this loop's ticks
      }
      context.failures().loopEnded(ended); // ended normally: tear down once every container's loop ended
      if (workers != null) {
        workers.shutdown(); // before closing the tasks: no worker may still run a DoFn instance torn down
      }
      mailbox.clear();
      for (StageTask task : tasks) {
        try {
          task.close();
        } catch (Throwable t) {
          LOG.warn("Closing task {} failed", task, t);
        }
      }
      if (ended && commit != null) {
        commit.commitFinal(); // teardown's metrics too: a finished job's committed values are its attempted ones
      } else if (commit != null) {
        commit.flushAttemptedMetrics(); // a failed job's attempted values count its open bundles too
      }
      if (state != null) {
        try {
          state.close();
        } catch (Throwable t) {
          LOG.warn("Closing the state of {} failed", threadName(), t);
        }
      }
      MetricsEnvironment.setCurrentContainer(null);
    }
    context.failures().exited(failure);
  }

  /** The container's state committed: every task finalizes the source marks the commit covers. */
  private void stateCommitted() {
    for (StageTask task : tasks) {
      task.committed();
    }
  }

  /**
   * Whether the loop may end: every task done (and, in a job that takes checkpoints, every other
   * container's too: a finished container's state belongs to every later checkpoint).
   */
  private boolean finished() {
    boolean done = allDone();
    return checkpoints == null ? done : checkpoints.mayEnd(done);
  }

  /** Whether an in-process input partition of this container holds messages (a lock per partition). */
  private boolean hasStreamInput() {
    for (Slot slot : slots) {
      if (slot.input() instanceof InProcessStream.Partition partition && partition.size() > 0) {
        return true;
      }
    }
    return false;
  }

  /** Whether every task is done with an empty outbox. */
  private boolean allDone() {
    for (StageTask task : tasks) {
      if (task.nextOp() != TaskOp.NONE) {
        return false;
      }
    }
    return true;
  }

  /**
   * Runs the letters other threads handed the loop (up to {@link #LETTERS_PER_PASS}); returns
   * letters run. A letter that throws (a DoFn's exception from a worker) fails the container.
   */
  private int runMailbox() {
    if (mailbox.isEmpty()) {
      return 0;
    }
    try {
      return mailbox.runLetters(LETTERS_PER_PASS);
    } catch (Throwable t) {
      throw FailureContext.attach(t, "running work a worker thread handed the loop (" + threadName() + ")");
    }
  }

  /** Moves blocked tasks' output downstream; returns messages moved. */
  private int drainOutboxes() {
    int moved = 0;
    for (StageTask task : tasks) {
      if (task.nextOp() == TaskOp.DRAIN_OUTBOX) {
        moved += task.drainOutbox();
      }
    }
    return moved;
  }

  /** Fires the next slice of ready timers of tasks that have some and room for their output; returns timers fired. */
  private int continueTimers() {
    int fired = 0;
    for (StageTask task : tasks) {
      if (task.nextOp() == TaskOp.FIRE_TIMERS) {
        fired += task.continueTimers();
      }
    }
    return fired;
  }

  private int processEnvelopes() throws Throwable {
    int processed = 0;
    int n = slots.length;
    for (int i = 0; i < n; i++) {
      Slot slot = slots[(cursor + i) % n];
      if (paused && slot.source()) {
        continue; // a checkpoint drains the job: no new source data
      }
      StageTask task = slot.task();
      if (task.nextOp() == TaskOp.NONE && !slot.source()) {
        processed += discardLateControl(slot);
        continue;
      }
      for (int b = 0; b < BURST && task.nextOp() == TaskOp.PROCESS; b++) {
        Object message = slot.input().poll();
        if (message == null) {
          break;
        }
        try {
          task.process(slot.inputIndex(), message);
        } catch (Throwable t) {
          throw FailureContext.attach(t, "in task " + task.name() + " (" + threadName() + ")");
        }
        if (slot.counted()) {
          quiescence.processed();
        }
        processed++;
      }
    }
    cursor = n == 0 ? 0 : (cursor + 1) % n;
    return processed;
  }

  /**
   * A done task's stream input may still receive watermarks and end-of-stream: a producer restored
   * from a checkpoint announces its (already known) end again. They change nothing for a task that
   * ended, and are dropped so that the stream drains (a checkpoint waits for empty streams); an
   * element for a done task is a bug and fails the job.
   *
   * @return messages dropped
   */
  private int discardLateControl(Slot slot) {
    int dropped = 0;
    Object message;
    while ((message = slot.input().poll()) != null) {
      if (!(message instanceof ProducerWatermark) && !(message instanceof ProducerEndOfStream)) {
        throw new IllegalStateException("task " + slot.task().name() + " ended but received "
            + KeyedElement.messageOf(message) + " on " + slot.input().ssp());
      }
      if (slot.counted()) {
        quiescence.processed();
      }
      dropped++;
    }
    return dropped;
  }

  /** Ticks the tasks taking input, every {@link #TICK_NS}; returns their work (see {@link StageTask#tick(boolean, boolean)}). */
  private int tick() throws Exception {
    long now = System.nanoTime();
    boolean settling = quiescence != null && quiescence.awaited();
    if (now - lastTickNs < TICK_NS && !settling) {
      return 0; // a waiting test stream (quiescence awaited) gets its ticks at once
    }
    lastTickNs = now;
    long clockMillis = clock.millis(); // read before the tasks do: they see this time or later
    // settled: nothing in flight, so every task holds all its input of the event: open bundles close
    // (their output counts as in flight); while envelopes are in flight, bundles wait for them
    boolean settled = settling && quiescence.settled();
    int work = 0;
    for (StageTask task : tasks) {
      TaskOp op = task.nextOp();
      // a task waiting for calls in flight still ticks: processing time goes on for it (its bundles
      // close, its processing-time timers fire), or a task kept busy by its workers would never see it
      if (op == TaskOp.PROCESS || op == TaskOp.AWAIT_IN_FLIGHT) {
        work += task.tick(settled, !paused);
      }
    }
    if (quiescence != null) {
      quiescence.ticked(id, clockMillis);
    }
    return work;
  }
}
