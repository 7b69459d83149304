package dev.weir.runner.task;

import dev.weir.runner.WeirSettings;
import dev.weir.runner.checkpoint.CheckpointParticipant;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.operators.Operator;
import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.ProcessElementWorkers;
import dev.weir.runner.source.SourceCheckpoints;
import dev.weir.runner.source.SourceContext;
import dev.weir.runner.source.SourcePartition;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.stream.InProcessStream;
import dev.weir.runner.stream.InputPartition;
import dev.weir.runner.stream.KeyedElement;
import dev.weir.runner.stream.ProducerEndOfStream;
import dev.weir.runner.stream.ProducerWatermark;
import dev.weir.runner.stream.StreamWriter;
import dev.weir.runner.stream.TaskOutbox;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.time.Quiescence;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.samza.container.TaskName;
import org.joda.time.Instant;

/**
 * One partition of one stage: a task running the stage's fused operators, driven by a host's run
 * loop (the embedded executor's {@code Container}, or a {@link HostedTask} in samza-core's).
 *
 * <h2>Phases</h2>
 *
 * The task is in one {@link TaskPhase} at a time (RUNNING, FIRING, ENDING, DRAINING, DONE; the
 * enum draws the transitions), and {@link #nextOp()} is the one place that turns phase and outbox
 * into what the container does with it next (Samza's {@code AsyncTaskWorker.nextOp()}): drain the
 * outbox while it waits for room downstream, else fire the next slice of ready timers (FIRING,
 * ENDING), else take input and ticks (RUNNING, DRAINING), else nothing (DONE).
 *
 * <h2>What it does with each envelope</h2>
 *
 * <ul>
 *   <li><b>Element</b>: handed to the entry operator of the partition it came from; counted into
 *       the open bundle, which is finished at {@code maxBundleSize} elements (or by a tick after
 *       {@code maxBundleTimeMs}; while a test stream replays, by the tick once the job settled
 *       after an event instead, see {@link #tick(boolean)}).
 *   <li><b>Watermark</b> ({@link ProducerWatermark}): recorded in the task's
 *       {@link StageWatermarks}; when the task's input watermark advances, the bundle is finished
 *       and a watermark pass ({@link #propagateWatermarks}) delivers it through the stage.
 *   <li><b>Side-input envelopes</b> (broadcast streams): handed to the consuming operator's side
 *       inputs; their watermarks advance only that view's side-input watermark, never the task's.
 *   <li><b>End of a test stream's event</b> ({@link SourcePartition#END_OF_EVENT}): the open
 *       bundle is finished, so the event's elements are one bundle of the source's stage.
 *   <li><b>End of stream</b> ({@link ProducerEndOfStream}): once every producer of every input
 *       ended, the watermark goes to +infinity; after its firings (ENDING) end-of-stream goes on,
 *       or, while operators have pending work ({@link Operator#hasPendingWork()}), after it (DRAINING).
 * </ul>
 *
 * <p>Timer firings in slices: when a watermark (or a tick) makes more timers ready than fit in one
 * pass (the end of input, or a processing-time trigger, over many keys), each operator fires at
 * most {@value #TIMERS_PER_PASS} per pass, none while the outbox is blocked ({@link FiringGate}),
 * and holds its output watermark at the earliest unfired event-time timer; meanwhile the task is
 * FIRING (or ENDING) and the container resumes the firing each pass ({@link #continueTimers()}),
 * each pass one bundle. Checkpoint marks of unbounded source splits: {@link SourceCheckpoints}.
 *
 * <p>Time: {@link #tick(boolean)} (the container's periodic tick, samza-api's {@code window}) closes
 * bundles older than {@code maxBundleTimeMs} of real time and gives operators the job's
 * {@link JobClock} time (the system clock, or a test stream's manual clock) for processing-time
 * timers. A bundle that no input element opened (by the tick's firings, or by pushed-back
 * elements a side input released) is finished at the end of the tick, as a watermark's firings
 * are, so output a downstream DoFn buffers until {@code @FinishBundle} goes on at once
 * ({@link Operator#inBundle()}); firings that join a bundle of input elements end with it.
 *
 * <p>Checkpoints: the task takes part through {@link CheckpointParticipant} (restore, quiesce,
 * snapshot, completed); the keys it writes and the walk over inputs and operators are
 * {@link TaskCheckpoint}'s.
 *
 * <p>Created by {@link WeirTaskFactory} (which also adapts it to samza-api's task interfaces).
 * Threading: owned by one container; every method runs on its thread, except {@link #stats()}
 * (monitoring reads, any thread).
 */
@Internal
public final class StageTask implements CheckpointParticipant, AutoCloseable {
  /** Ready timers fired per operator per run-loop pass (fewer when the outbox blocks). */
  static final int TIMERS_PER_PASS = 64;

  private final TaskName name;
  private final StagePlan stage;
  private final int partition;
  private final PipelineOptions options;
  private final int maxBundleSize;
  private final long maxBundleNs;
  private final TaskOutbox outbox;
  private final JobClock clock;
  /** The fused graph: operators, writers, inputs, and at open the steps and receivers. */
  private final StageGraph graph;
  /** Per node: its operator ({@link StageGraph#operators}). */
  private final Operator[] operators;
  /** Per node: its stream writer if it is a stage tail, else null. */
  private final StreamWriter[] writerAt;
  /** Live counters for JMX and the metrics log ({@link TaskStats}); read from other threads. */
  private final TaskStats stats;
  /** The container's restored checkpoint metadata (all its tasks'), until {@link #open}; empty on a fresh start. */
  private Map<String, byte[]> restored = Map.of();
  private final TaskInput[] inputs;
  private final StageWatermarks watermarks;
  private final FiringGate gate;
  private final SourceCheckpoints checkpoints;
  private final boolean metricsEnabled;
  /** The container thread's step scope; set at {@link #open}. */
  private StepScope scope;
  /** Per node: its step in {@link #scope} (its tag and, if it runs user code, its metrics container). */
  private StepScope.Step[] steps;
  /** The task's part of checkpoints (keys, restored parts); set at {@link #open}. */
  private TaskCheckpoint checkpoint;
  /** The container's commit point; set at {@link #open}. */
  private ContainerCommit commit;
  /** The task's step metrics, staged for commit at each finished bundle; set at {@link #open}. */
  private StepMetrics.Task taskMetrics;
  private int bundleElements;
  private long bundleStartNs;
  private TaskPhase phase = TaskPhase.RUNNING;
  /** The phase FIRING returns to after the last ready timer fired: RUNNING or DRAINING. */
  private TaskPhase afterFiring = TaskPhase.RUNNING;
  /** The job's quiescence tracker (test streams), or null: pending firings count as in flight. */
  private final Quiescence quiescence;
  /** Whether operators and readers are open: from {@link #open} to {@link #close} (not a phase). */
  private boolean opened;

  StageTask(StagePlan stage, int partition, List<InputPartition> inputPartitions, Map<Integer, InProcessStream> streams,
      WeirSettings settings, JobClock clock, Quiescence quiescence) {
    this.outbox = new TaskOutbox(quiescence);
    this.quiescence = quiescence;
    this.clock = clock;
    this.name = new TaskName(JobPlan.taskName(stage, partition));
    this.stage = stage;
    this.partition = partition;
    this.options = settings.pipelineOptions();
    this.maxBundleSize = settings.maxBundleSize();
    this.maxBundleNs = settings.maxBundleTimeMs() * 1_000_000L;
    this.metricsEnabled = settings.metricsEnabled();
    this.graph = new StageGraph(stage, partition, inputPartitions, streams, outbox, name.getTaskName());
    this.gate = new FiringGate(outbox, graph::saturated);
    this.operators = graph.operators;
    this.writerAt = graph.writerAt;
    this.inputs = graph.inputs;
    this.stats = new TaskStats(graph.writers);
    this.watermarks = graph.newWatermarks();
    this.checkpoints = new SourceCheckpoints(graph.unboundedSources());
  }

  /** The task's samza-api name, e.g. {@code stage-2-p0}. */
  public TaskName name() {
    return name;
  }

  /** The task's live counters (events, bundles, watermarks), for monitoring. Any thread. */
  public TaskStats stats() {
    return stats;
  }

  /** Input partitions, for the container's round-robin. */
  public List<InputPartition> inputPartitions() {
    return Arrays.stream(inputs).map(input -> input.partition).toList();
  }

  /**
   * Opens operators and source readers on the calling (container) thread.
   *
   * @param commit the container's commit point: its state, where the task's step metrics are
   *     created, and what the task tells when it finished a bundle
   * @param scope the container thread's step scope: every edge of the fused graph and every
   *     call the task makes into an operator runs in the callee's step (metrics and span)
   */
  public void open(StepScope scope, ContainerCommit commit) {
    open(scope, commit, false);
  }

  @Override
  public void restore(Map<String, byte[]> metadata) {
    this.restored = metadata;
  }

  /**
   * Opens the task as {@link #open(StepScope, ContainerCommit)}; in a job that takes checkpoints
   * ({@code checkpointed}: source marks are taken and finalized at checkpoints, not per bundle), it
   * resumes from what {@link #restore} handed it: source positions before the readers open,
   * operators' heap state when they open, and the task's watermarks after, delivered in one
   * watermark pass.
   */
  public void open(StepScope scope, ContainerCommit commit, boolean checkpointed) {
    open(scope, commit, checkpointed, null);
  }

  /**
   * Opens the task as {@link #open(StepScope, ContainerCommit, boolean)}, with the container's
   * worker threads for the stage's concurrent ParDos.
   *
   * @param workers the container's workers and mailbox, or null if it has none (the job asked
   *     for no concurrency; a stage translated with a concurrent ParDo then fails to open)
   */
  public void open(StepScope scope, ContainerCommit commit, boolean checkpointed, ProcessElementWorkers workers) {
    this.scope = scope;
    this.commit = commit;
    if (checkpointed) {
      checkpoints.disable();
    }
    checkpoints.open(commit.state()::requestCommit);
    this.taskMetrics = commit.metrics().newTask();
    ContainerState state = commit.state();
    this.steps = graph.steps(scope, taskMetrics, metricsEnabled);
    this.checkpoint = new TaskCheckpoint(name.getTaskName(), restored, inputs, operators, writerAt, scope, steps,
        partition, stage.partitions(), state.keyGroups());
    List<byte[]> restoredMetrics = checkpoint.restoredAll("metrics");
    for (byte[] values : restoredMetrics) {
      taskMetrics.restore(values);
    }
    if (!restoredMetrics.isEmpty()) {
      commit.bundleFinished(); // the restored values are committed at the container's first commit
    }
    opened = true;
    graph.open((node, outputs) -> new OperatorContext(options, node.stepName(), partition, outputs,
        steps[node.index()], state, clock, commit.finalizers(), checkpoint.restoredParts(node.index()), checkpointed,
        quiescence != null, workers, watermarks::drainCaused));
    if (stage.source() != null) {
      checkpoint.restoreSourcePositions();
      for (TaskInput input : inputs) {
        if (input.partition instanceof SourcePartition source) {
          source.open(new SourceContext(options, scope, steps[0]));
        }
      }
    }
    if (checkpoint.restoreWatermarks(watermarks)) {
      settle(propagateWatermarks(true)); // every node learns its restored watermark
      if (watermarks.allInputsEnded()) {
        endOfInput();
      }
    }
    restored = Map.of(); // read once: the task's part is in its operators and watermarks now
  }

  /**
   * Whether the task's part of the job is quiet for a checkpoint: nothing waits in its outbox, no
   * timer firing is pending (RUNNING, DRAINING or DONE), no bundle is open and every operator can
   * write its state ({@link Operator#readyForCheckpoint()}). Asked while a checkpoint drains.
   */
  @Override
  public boolean quietForCheckpoint() {
    if (outbox.isBlocked() || phase == TaskPhase.FIRING || phase == TaskPhase.ENDING
        || bundleElements > 0 || graph.anyInBundle()) {
      return false;
    }
    return graph.readyForCheckpoint();
  }

  /** Finishes the open bundle, if any, so a checkpoint can drain it; returns 1 if it did, else 0. */
  @Override
  public int finishBundleForCheckpoint() {
    if (bundleElements > 0 || graph.anyInBundle()) {
      finishBundle();
      settle(propagateWatermarks(false));
      return 1;
    }
    return 0;
  }

  /** Writes watermarks, metrics, source positions and operators' heap state ({@link TaskCheckpoint}). */
  @Override
  public void snapshot(Map<String, byte[]> metadata) {
    checkpoint.write(metadata, watermarks, taskMetrics);
  }

  /**
   * The checkpoint the task last wrote its part of is complete: its sources finalize their marks
   * and its operators hear of it; a bundle that opens (input held for a {@code @RequiresStableInput}
   * DoFn) is finished in one watermark pass.
   */
  @Override
  public void checkpointCompleted() {
    checkpoint.completed();
    if (graph.anyInBundle()) {
      settle(propagateWatermarks(true));
    }
  }

  /**
   * Whether every producer of every input ended (true from {@link #open} on for a task restored
   * past its end of input).
   */
  public boolean inputsEnded() {
    return watermarks.allInputsEnded();
  }

  /** The task's phase (for tests). */
  TaskPhase phase() {
    return phase;
  }

  /**
   * What the container should do with this task next, the task's one priority ladder: while the
   * outbox waits for room, only drain it; else, by phase, fire timers (FIRING, ENDING), take input
   * and ticks (RUNNING, DRAINING; but nothing while a concurrent ParDo has all the elements in
   * flight it may have: {@link TaskOp#AWAIT_IN_FLIGHT}) or nothing (DONE). A field read, a switch
   * and a loop over the stage's concurrent ParDos (none unless the job asked for them): the
   * container asks before every envelope.
   */
  public TaskOp nextOp() {
    if (outbox.isBlocked()) {
      return TaskOp.DRAIN_OUTBOX;
    }
    return switch (phase) {
      case RUNNING, DRAINING -> graph.saturated() ? TaskOp.AWAIT_IN_FLIGHT : TaskOp.PROCESS;
      case FIRING, ENDING -> TaskOp.FIRE_TIMERS;
      case DONE -> TaskOp.NONE;
    };
  }

  /**
   * Delivers one message polled from input {@code input} (its index in {@link #inputPartitions()}):
   * an element enters the input's node (and counts for the open bundle), a producer's watermark or
   * end-of-stream goes to the task's watermarks. The container's entry: no envelope, no lookup of
   * the input.
   *
   * @param polled what the input partition's {@code poll()} returned: a {@code WindowedValue}, a
   *     {@link KeyedElement}, a {@link ProducerWatermark}, a {@link ProducerEndOfStream} or a test
   *     stream's {@link SourcePartition#END_OF_EVENT}
   * @throws RuntimeException or Error: whatever an operator or user code threw, unwrapped; the
   *     task must not be used after it
   */
  public void process(int input, Object polled) {
    if (polled instanceof KeyedElement keyed) {
      deliver(inputs[input], keyed.key(), keyed.element());
    } else {
      deliver(inputs[input], null, polled);
    }
  }

  /** One message of {@code input}; {@code key}: a shuffle's encoded key of an element, or null. */
  private void deliver(TaskInput input, byte[] key, Object message) {
    if (message instanceof WindowedValue<?> element) {
      if (input.sideConsumer != null) {
        graph.acceptSideInput(input, element);
      } else {
        if (key != null) {
          input.entry.acceptKeyed(key, element);
        } else {
          input.entry.accept(element);
        }
        if (bundleElements++ == 0) {
          bundleStartNs = System.nanoTime();
        }
        if (bundleElements >= maxBundleSize) {
          finishBundle();
        }
      }
    } else if (message instanceof ProducerWatermark watermark) {
      if (watermark.drained()) {
        watermarks.onProducerDrained(input.index, watermark.producer());
      }
      watermarks.onProducerWatermark(input.index, watermark.producer(), watermark.getTimestamp());
      watermarkMoved(input);
    } else if (message instanceof ProducerEndOfStream end) {
      watermarks.onProducerEnd(input.index, end.producer());
      watermarkMoved(input);
    } else if (message == SourcePartition.END_OF_EVENT) {
      if (bundleElements > 0) {
        finishBundle(); // a test stream's element event is one bundle of the source's stage
      }
    } else {
      throw new IllegalStateException("unexpected message " + message + " on " + input.partition.ssp());
    }
  }

  /**
   * A producer's watermark or end of stream was recorded for {@code input}. A main input may move
   * the task's input watermark; a side input moves only its view's side-input watermark (never
   * the task's), which may release pushed-back elements and so lower the operator's hold. Once
   * every input ended, the end of input follows.
   */
  private void watermarkMoved(TaskInput input) {
    if (input.sideConsumer == null) {
      advanceWatermark();
    } else {
      graph.advanceSideInputWatermark(input, watermarks.inputWatermarkMs(input.index));
      settle(propagateWatermarks(true));
    }
    if (watermarks.allInputsEnded()) {
      endOfInput();
    }
  }

  /**
   * The container's periodic tick (RUNNING, DRAINING): closes a bundle older than
   * {@code maxBundleTimeMs} ({@link #timedBundles()}), or any open bundle if {@code settling} (a
   * test stream waits for the job to settle, {@link Quiescence#settled()}: nothing is in flight,
   * so the bundle holds everything the event brought into this stage, and a lifted combine's
   * partials are part of what the event caused, so each event gets its own bundles, as on
   * Direct), gives operators the clock's time for processing-time timers, then one watermark pass
   * (FIRING if timers remain); DRAINING ends once no operator has pending work.
   *
   * @return work done: a closed bundle, timers fired, a bundle the tick opened finished
   */
  public int tick(boolean settling) {
    return tick(settling, true);
  }

  /**
   * The tick; without {@code fireProcessingTime} (while a checkpoint drains the job) operators do
   * not hear of the clock, so no processing-time timer fires and creates new work.
   */
  public int tick(boolean settling, boolean fireProcessingTime) {
    int work = 0;
    if (bundleElements > 0 && (settling || (timedBundles() && System.nanoTime() - bundleStartNs >= maxBundleNs))) {
      finishBundle();
      work++;
    }
    if (fireProcessingTime) {
      graph.onProcessingTime(new Instant(clock.millis())); // once per tick, not per element
    }
    gate.reset();
    boolean tickOpenedBundle = bundleElements == 0 && graph.anyInBundle(); // by processing-time firings
    // processing-time firings may have released holds; a bundle they opened ends with the tick
    settle(propagateWatermarks(false));
    work += gate.firings() + (tickOpenedBundle ? 1 : 0);
    if (phase == TaskPhase.DRAINING && !graph.hasPendingWork()) {
      endStream();
    }
    return work;
  }

  /**
   * Whether an open bundle ends after {@code maxBundleTimeMs}: not while a test stream replays its
   * events ({@link Quiescence#replaying()}), whose bundles end at the end of each event in the
   * source's stage ({@link SourcePartition#END_OF_EVENT}) and when the job settled after it
   * downstream, so that one bundle holds what one event brought into the stage, as on Beam's
   * Direct runner (processing time is the test stream's manual clock there: real time decides
   * nothing).
   */
  private boolean timedBundles() {
    return quiescence == null || !quiescence.replaying();
  }

  /**
   * Every input of the task ended (a host's end of stream, or the last producer's end-of-stream):
   * the watermark goes to +infinity; after its firings (ENDING) end-of-stream goes on, or, while
   * operators have pending work, after it (DRAINING). No effect once the input ended.
   */
  public void endOfInput() {
    if (inputEnded()) {
      return;
    }
    watermarks.endAllInputs();
    advanceWatermark();
    if (phase == TaskPhase.FIRING) {
      phase = TaskPhase.ENDING; // the end of input waits for the timers it made ready
      return;
    }
    endInput();
  }

  /** Whether the task's end of input was already handled (ENDING, DRAINING or DONE, or FIRING from DRAINING). */
  private boolean inputEnded() {
    return phase == TaskPhase.FIRING ? afterFiring == TaskPhase.DRAINING : phase != TaskPhase.RUNNING;
  }

  /** Every input ended and every ready timer fired: finish, then DRAINING or end-of-stream. */
  private void endInput() {
    finishBundle();
    if (graph.hasPendingWork()) {
      phase = TaskPhase.DRAINING; // tick() ends the stream once the pending work is done
      return;
    }
    endStream();
  }

  /** Sends end-of-stream downstream; the task is DONE. */
  private void endStream() {
    finishBundle();
    for (StreamWriter writer : graph.writers) {
      writer.sendEndOfStream();
    }
    phase = TaskPhase.DONE;
  }

  /**
   * Moves between phases after a watermark pass that left {@code timersLeft}: RUNNING or DRAINING
   * with timers left become FIRING; FIRING without returns to where it came from; ENDING without
   * completes the end of input. Entering and leaving a firing phase counts as one envelope in
   * flight for a test stream's quiescence, so it does not move on while firings wait.
   */
  private void settle(boolean timersLeft) {
    switch (phase) {
      case RUNNING, DRAINING -> {
        if (timersLeft) {
          afterFiring = phase;
          phase = TaskPhase.FIRING;
          if (quiescence != null) { // waiting firings are work in flight: a test stream must wait
            quiescence.sent();
          }
        }
      }
      case FIRING -> {
        if (!timersLeft) {
          phase = afterFiring;
          if (quiescence != null) {
            quiescence.processed();
          }
        }
      }
      case ENDING -> {
        if (!timersLeft) {
          if (quiescence != null) {
            quiescence.processed();
          }
          endInput();
        }
      }
      case DONE -> { }
    }
  }


  /**
   * FIRING or ENDING ({@link TaskOp#FIRE_TIMERS}): one watermark pass, which fires the next slice
   * of ready timers and delivers the watermarks that released; after the last, the phase moves on.
   *
   * @return the number of timers fired
   */
  public int continueTimers() {
    gate.reset();
    settle(propagateWatermarks(true));
    return gate.firings();
  }

  /**
   * Drains the task's source splits ({@link SourcePartition#drain}): they read nothing more and end,
   * so the watermark reaches the end of time downstream. No effect on a task without a source.
   * Container thread.
   */
  public void drainSources() {
    for (TaskInput input : inputs) {
      if (input.partition instanceof SourcePartition source) {
        source.drain();
      }
    }
  }

  /** Closes operators and source readers; idempotent, and nothing to close before {@link #open}. */
  @Override
  public void close() {
    if (!opened) {
      return;
    }
    opened = false;
    graph.close();
  }

  /** Moves waiting output downstream; returns envelopes moved. */
  public int drainOutbox() {
    int moved = outbox.drain();
    checkpoints.afterDrain(outbox.isBlocked());
    return moved;
  }

  /** The container committed: held checkpoint marks are finalized if the outbox is empty. */
  public void committed() {
    checkpoints.committed(outbox.isBlocked(), scope, steps[0]);
  }

  /**
   * The index of the input whose partition is {@code ssp} (the same instance the task's input
   * partition returns), for a host that delivers envelopes by stream partition.
   *
   * @throws IllegalStateException if the task does not read it
   */
  public int inputIndex(Object ssp) {
    for (int i = 0; i < inputs.length; i++) { // few inputs: an identity scan beats hashing
      if (inputs[i].partition.ssp() == ssp) {
        return i;
      }
    }
    throw new IllegalStateException(name + " does not read " + ssp);
  }

  /** If the task's input watermark advanced, delivers it through the stage (and settles the phase). */
  private void advanceWatermark() {
    if (watermarks.advanceInputWatermark()) {
      settle(propagateWatermarks(true));
    }
  }

  /**
   * One watermark pass through the fused graph, in topological order: each node gets its input
   * watermark from {@link StageWatermarks} in one {@link Operator#advanceWatermark} call (which
   * fires up to {@value #TIMERS_PER_PASS} of its ready timers), then its hold sets its output
   * watermark, which the nodes downstream see. Writers send their own watermark, so each stream
   * gets the watermark of the part of the stage that feeds it.
   *
   * @param finishBundles whether to finish the open bundle after delivering (always done, also
   *     before delivering, when some node's watermark advances; and when no input element is in
   *     the open bundle but some operator is in one, e.g. after timer firings)
   * @return whether some operator still has ready timers
   */
  private boolean propagateWatermarks(boolean finishBundles) {
    boolean finished = false;
    boolean timersLeft = false;
    for (int i = 0; i < operators.length; i++) {
      if (writerAt[i] != null) {
        continue;
      }
      if (watermarks.advanceNode(i, watermarks.upstreamWatermarkMs(i)) && !finished) {
        finishBundle();
        finished = true;
      }
      StepScope.Step previous = scope.enter(steps[i]);
      try {
        timersLeft |= !operators[i].advanceWatermark(watermarks.nodeWatermarkMs(i), TIMERS_PER_PASS, gate);
      } finally {
        scope.exit(previous);
      }
      watermarks.holdNode(i, operators[i].watermarkHold().getMillis());
    }
    if (finished || finishBundles || (bundleElements == 0 && graph.anyInBundle())) {
      finishBundle();
      for (int i = 0; i < operators.length; i++) { // finishBundle may have changed holds
        if (writerAt[i] == null) {
          watermarks.holdNode(i, operators[i].watermarkHold().getMillis());
        }
      }
    }
    for (int i = 0; i < operators.length; i++) {
      if (writerAt[i] != null) {
        long sendMs = watermarks.advanceWriter(i);
        if (sendMs != Long.MIN_VALUE) {
          writerAt[i].sendWatermark(sendMs, watermarks.drainCaused());
        }
      }
    }
    watermarks.updateOutputWatermark();
    stats.watermarks(watermarks.inputWatermarkMs(), watermarks.monitoredOutputWatermarkMs());
    return timersLeft;
  }

  private void finishBundle() {
    stats.bundleFinished(bundleElements);
    bundleElements = 0;
    graph.finishBundles(); // node order: upstream output reaches downstream first
    checkpoints.afterBundle(); // the bundle's outputs left the operators
    taskMetrics.bundleFinished(); // no operator has an open bundle now: these values may be committed
    commit.bundleFinished();
  }

  @Override
  public String toString() {
    return name.getTaskName();
  }
}
