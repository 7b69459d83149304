package dev.weir.runner.executor;

import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.operators.Operator;
import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.Receiver;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.StagePlan;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.samza.container.TaskName;
import org.apache.samza.context.Context;
import org.apache.samza.system.IncomingMessageEnvelope;
import org.apache.samza.task.AsyncStreamTask;
import org.apache.samza.task.ClosableTask;
import org.apache.samza.task.EndOfStreamListenerTask;
import org.apache.samza.task.InitableTask;
import org.apache.samza.task.MessageCollector;
import org.apache.samza.task.TaskCallback;
import org.apache.samza.task.TaskCoordinator;
import org.apache.samza.task.WindowableTask;
import org.joda.time.Instant;

/**
 * One partition of one stage: a samza-api task running the stage's fused operators.
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
 *       {@code maxBundleTimeMs}).
 *   <li><b>Watermark</b> ({@link ProducerWatermark}): recorded in the task's
 *       {@link StageWatermarks}; when the task's input watermark advances, the bundle is finished
 *       and a watermark pass ({@link #propagateWatermarks}) delivers it through the stage.
 *   <li><b>Side-input envelopes</b> (broadcast streams): handed to the consuming operator's side
 *       inputs; their watermarks advance only that view's side-input watermark, never the task's.
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
 * <p>Created by {@link WeirTaskFactory} (the job's samza-api task factory). Threading: owned by one
 * container; every method runs on its thread. {@link #processAsync} completes its callback before
 * it returns.
 */
@Internal
public final class StageTask
    implements AsyncStreamTask, InitableTask, WindowableTask, EndOfStreamListenerTask, ClosableTask {
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
  private final Operator[] operators;
  /** Per node: its stream writer if it is a stage tail, else null. */
  private final StreamWriter[] writerAt;
  private final List<StreamWriter> writers = new ArrayList<>();
  /** Live counters for JMX and the metrics log ({@link TaskStats}); read from other threads. */
  final TaskStats stats = new TaskStats(writers);
  private final TaskInput[] inputs;
  private final StageWatermarks watermarks;
  private final FiringGate gate;
  private final SourceCheckpoints checkpoints;
  private final boolean metricsEnabled;
  /** Per node: its span tag, the PTransform's full name (a writer's: its stream's name). */
  private final String[] tags;
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
    this.gate = new FiringGate(outbox);
    this.quiescence = quiescence;
    this.clock = clock;
    this.name = new TaskName(JobPlan.taskName(stage, partition));
    this.stage = stage;
    this.partition = partition;
    this.options = settings.pipelineOptions();
    this.maxBundleSize = settings.maxBundleSize();
    this.maxBundleNs = settings.maxBundleTimeMs() * 1_000_000L;
    this.metricsEnabled = settings.metricsEnabled();
    List<NodeSpec> nodes = stage.nodes();
    this.operators = new Operator[nodes.size()];
    this.writerAt = new StreamWriter[nodes.size()];
    this.tags = new String[nodes.size()];
    boolean[] writerNodes = new boolean[nodes.size()];
    for (NodeSpec node : nodes) {
      tags[node.index()] = node.stepName();
    }
    for (NodeSpec node : nodes) {
      if (node.writesTo() != null) {
        StreamWriter writer = new StreamWriter(streams.get(node.writesTo().id()), outbox, partition, name.getTaskName());
        writers.add(writer);
        writerAt[node.index()] = writer;
        writerNodes[node.index()] = true;
        operators[node.index()] = writer;
      } else {
        operators[node.index()] = node.factory().create();
      }
    }
    this.inputs = new TaskInput[inputPartitions.size()];
    int[] producers = new int[inputs.length];
    boolean[] sideInputs = new boolean[inputs.length];
    for (int i = 0; i < inputs.length; i++) {
      inputs[i] = TaskInput.of(stage, i, inputPartitions.get(i), operators);
      producers[i] = inputPartitions.get(i).producers();
      sideInputs[i] = inputs[i].isSideInput();
    }
    this.watermarks = new StageWatermarks(producers, sideInputs, StageWatermarks.predecessorsOf(nodes), writerNodes);
    List<SourcePartition> unbounded = new ArrayList<>();
    for (InputPartition p : inputPartitions) {
      if (p instanceof UnboundedPartition u) {
        unbounded.add(u);
      }
    }
    this.checkpoints = new SourceCheckpoints(unbounded);
  }

  /** The task's samza-api name, e.g. {@code stage-2-p0}. */
  public TaskName name() {
    return name;
  }

  /** Input partitions, for the container's round-robin. */
  List<InputPartition> inputPartitions() {
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
  void open(StepScope scope, ContainerCommit commit) {
    open(scope, commit, Map.of(), false);
  }

  /**
   * Opens the task as {@link #open(StepScope, ContainerCommit)}, in a job that takes checkpoints
   * ({@code checkpointed}: source marks are taken and finalized at checkpoints, not per bundle),
   * resuming from {@code restored}, the container's checkpointed metadata (empty on a fresh
   * start): source positions before the readers open, operators' heap state when they open, and
   * the task's watermarks after, delivered in one watermark pass.
   */
  void open(StepScope scope, ContainerCommit commit, Map<String, byte[]> restored, boolean checkpointed) {
    this.scope = scope;
    this.commit = commit;
    if (checkpointed) {
      checkpoints.disable();
    }
    checkpoints.open(commit);
    this.taskMetrics = commit.metrics().newTask();
    ContainerState state = commit.state();
    List<NodeSpec> nodes = stage.nodes();
    this.steps = new StepScope.Step[nodes.size()];
    for (NodeSpec node : nodes) {
      if (metricsEnabled && node.writesTo() == null) {
        StepMetrics.StepContainer metrics = taskMetrics.containerFor(node.stepName());
        steps[node.index()] = scope.step(tags[node.index()], metrics.attempted(), metrics.cells());
      } else {
        steps[node.index()] = scope.step(tags[node.index()], null);
      }
    }
    this.checkpoint = new TaskCheckpoint(name.getTaskName(), restored, inputs, operators, writerAt, scope, steps);
    byte[] restoredMetrics = checkpoint.restored("metrics");
    if (restoredMetrics != null) {
      taskMetrics.restore(restoredMetrics);
      commit.bundleFinished(); // the restored values are committed at the container's first commit
    }
    opened = true;
    for (NodeSpec node : nodes) {
      Map<TupleTag<?>, Receiver> outputs = new HashMap<>();
      for (Map.Entry<TupleTag<?>, List<Integer>> e : node.consumers().entrySet()) {
        List<Integer> targets = e.getValue();
        Receiver[] receivers = new Receiver[targets.size()];
        for (int i = 0; i < receivers.length; i++) {
          int target = targets.get(i);
          receivers[i] = new SpannedReceiver(operators[target], steps[target], scope);
        }
        outputs.put(e.getKey(), CoderRoundTrip.wrap(node.roundTripCoder(e.getKey()), Receiver.fanOut(receivers)));
      }
      StepScope.Step previous = scope.enter(steps[node.index()]);
      try {
        operators[node.index()].open(new OperatorContext(options, node.stepName(), partition, outputs,
            steps[node.index()], state, clock, commit.finalizers(), checkpoint.restoredParts(node.index()),
            checkpointed));
      } finally {
        scope.exit(previous);
      }
    }
    for (TaskInput input : inputs) {
      if (input.sideConsumer == null) {
        input.entry = new SpannedReceiver(input.entry, steps[input.entryNode], scope);
      }
    }
    if (stage.source() != null) {
      SourceContext sourceContext = new SourceContext(options, scope, steps[0]);
      checkpoint.restoreSourcePositions();
      for (TaskInput input : inputs) {
        input.partition.open(sourceContext);
      }
    }
    byte[] restoredWatermarks = checkpoint.restored("watermarks");
    if (restoredWatermarks != null) {
      try {
        watermarks.restore(restoredWatermarks);
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException("cannot restore the watermarks of task " + name.getTaskName() + ": "
            + e.getMessage(), e);
      }
      for (TaskInput input : inputs) {
        if (input.sideConsumer != null) {
          StepScope.Step previous = scope.enter(steps[input.entryNode]);
          try {
            input.sideConsumer.advanceSideInputWatermark(input.sideIndex, watermarks.inputWatermarkMs(input.index));
          } finally {
            scope.exit(previous);
          }
        }
      }
      watermarks.advanceInputWatermark();
      settle(propagateWatermarks(true)); // every node learns its restored watermark
      if (watermarks.allInputsEnded()) {
        onEndOfStream(null, null);
      }
    }
  }

  /**
   * Whether the task's part of the job is quiet for a checkpoint: nothing waits in its outbox, no
   * timer firing is pending (RUNNING, DRAINING or DONE), no bundle is open and every operator can
   * write its state ({@link Operator#readyForCheckpoint()}). Asked while a checkpoint drains.
   */
  boolean quietForCheckpoint() {
    if (outbox.isBlocked() || phase == TaskPhase.FIRING || phase == TaskPhase.ENDING
        || bundleElements > 0 || anyInBundle()) {
      return false;
    }
    for (Operator operator : operators) {
      if (!operator.readyForCheckpoint()) {
        return false;
      }
    }
    return true;
  }

  /** Finishes the open bundle, if any, so a checkpoint can drain it; returns 1 if it did, else 0. */
  int finishBundleForCheckpoint() {
    if (bundleElements > 0 || anyInBundle()) {
      finishBundle();
      settle(propagateWatermarks(false));
      return 1;
    }
    return 0;
  }

  /**
   * Writes the task's part of a checkpoint into {@code metadata} (the job is quiescent): its
   * watermarks, metrics, each source split's position and each operator's heap state
   * ({@link TaskCheckpoint}).
   */
  void snapshot(Map<String, byte[]> metadata) {
    checkpoint.write(metadata, watermarks, taskMetrics);
  }

  /**
   * The checkpoint the task last wrote its part of is complete: its sources finalize their marks
   * and its operators hear of it; a bundle that opens (input held for a {@code @RequiresStableInput}
   * DoFn) is finished in one watermark pass.
   */
  void checkpointCompleted() {
    checkpoint.completed();
    if (anyInBundle()) {
      settle(propagateWatermarks(true));
    }
  }

  @Override
  public void init(Context context) {
    // Opened by the embedded container through open(StepScope, ...); nothing to do from samza-api.
  }

  /** The task's phase (for tests). */
  TaskPhase phase() {
    return phase;
  }

  /**
   * What the container should do with this task next, the task's one priority ladder: while the
   * outbox waits for room, only drain it; else, by phase, fire timers (FIRING, ENDING), take input
   * and ticks (RUNNING, DRAINING) or nothing (DONE). A field read and a switch: the container asks
   * before every envelope.
   */
  TaskOp nextOp() {
    if (outbox.isBlocked()) {
      return TaskOp.DRAIN_OUTBOX;
    }
    return switch (phase) {
      case RUNNING, DRAINING -> TaskOp.PROCESS;
      case FIRING, ENDING -> TaskOp.FIRE_TIMERS;
      case DONE -> TaskOp.NONE;
    };
  }

  /**
   * samza-api's entry, for a host that speaks it (samza-core's run loop): delivers the envelope's
   * message as {@link #process(int, Object)} does, reporting a failure to {@code callback}.
   */
  @Override
  public void processAsync(IncomingMessageEnvelope envelope, MessageCollector collector,
      TaskCoordinator coordinator, TaskCallback callback) {
    try {
      deliver(inputOf(envelope), (byte[]) envelope.getKey(), envelope.getMessage());
      callback.complete();
    } catch (Throwable t) {
      callback.failure(t);
    }
  }

  /**
   * Delivers one message polled from input {@code input} (its index in {@link #inputPartitions()}):
   * an element enters the input's node (and counts for the open bundle), a producer's watermark or
   * end-of-stream goes to the task's watermarks. The container's entry: no envelope, no lookup of
   * the input.
   *
   * @param polled what the input partition's {@code poll()} returned: a {@code WindowedValue}, a
   *     {@link KeyedElement}, a {@link ProducerWatermark} or a {@link ProducerEndOfStream}
   * @throws RuntimeException or Error: whatever an operator or user code threw, unwrapped; the
   *     task must not be used after it
   */
  void process(int input, Object polled) {
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
        acceptSideInput(input, element);
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
      watermarks.onProducerWatermark(input.index, watermark.producer(), watermark.getTimestamp());
      watermarkMoved(input);
    } else if (message instanceof ProducerEndOfStream end) {
      watermarks.onProducerEnd(input.index, end.producer());
      watermarkMoved(input);
    } else {
      throw new IllegalStateException("unexpected message " + message + " on " + input.partition.ssp());
    }
  }

  /** A side-input element goes to the consuming operator's side-input store. */
  private void acceptSideInput(TaskInput input, WindowedValue<?> element) {
    StepScope.Step previous = scope.enter(steps[input.entryNode]);
    try {
      input.sideConsumer.acceptSideInput(input.sideIndex, element);
    } finally {
      scope.exit(previous);
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
      StepScope.Step previous = scope.enter(steps[input.entryNode]);
      try {
        input.sideConsumer.advanceSideInputWatermark(input.sideIndex, watermarks.inputWatermarkMs(input.index));
      } finally {
        scope.exit(previous);
      }
      settle(propagateWatermarks(true));
    }
    if (watermarks.allInputsEnded()) {
      onEndOfStream(null, null);
    }
  }

  /** The samza-api name of the container's periodic tick; see {@link #tick(boolean)}. */
  @Override
  public void window(MessageCollector collector, TaskCoordinator coordinator) {
    tick(false);
  }

  /**
   * The container's periodic tick (RUNNING, DRAINING): closes a bundle older than
   * {@code maxBundleTimeMs} (any open bundle if {@code settling}: a test stream waits for the job
   * to settle, {@link Quiescence}, and a lifted combine's partials are part of what its event
   * caused, so each event gets its own bundles, as on Direct), gives operators the clock's time for
   * processing-time timers, then one watermark pass (FIRING if timers remain); DRAINING ends once
   * no operator has pending work.
   *
   * @return work done: a closed bundle, timers fired, a bundle the tick opened finished
   */
  int tick(boolean settling) {
    return tick(settling, true);
  }

  /**
   * The tick; without {@code fireProcessingTime} (while a checkpoint drains the job) operators do
   * not hear of the clock, so no processing-time timer fires and creates new work.
   */
  int tick(boolean settling, boolean fireProcessingTime) {
    int work = 0;
    if (bundleElements > 0 && (settling || System.nanoTime() - bundleStartNs >= maxBundleNs)) {
      finishBundle();
      work++;
    }
    Instant now = new Instant(clock.millis()); // once per tick, not per element
    for (int i = 0; i < operators.length && fireProcessingTime; i++) {
      StepScope.Step previous = scope.enter(steps[i]);
      try {
        operators[i].onProcessingTime(now);
      } finally {
        scope.exit(previous);
      }
    }
    gate.reset();
    boolean tickOpenedBundle = bundleElements == 0 && anyInBundle(); // by processing-time firings
    // processing-time firings may have released holds; a bundle they opened ends with the tick
    settle(propagateWatermarks(false));
    work += gate.firings() + (tickOpenedBundle ? 1 : 0);
    if (phase == TaskPhase.DRAINING && !hasPendingWork()) {
      endStream();
    }
    return work;
  }

  @Override
  public void onEndOfStream(MessageCollector collector, TaskCoordinator coordinator) {
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
    if (hasPendingWork()) {
      phase = TaskPhase.DRAINING; // tick() ends the stream once the pending work is done
      return;
    }
    endStream();
  }

  /** Sends end-of-stream downstream; the task is DONE. */
  private void endStream() {
    finishBundle();
    for (StreamWriter writer : writers) {
      writer.sendEndOfStream();
    }
    phase = TaskPhase.DONE;
  }

  /** Whether an operator has work that no input drives (e.g. checkpointed SDF restrictions). */
  private boolean hasPendingWork() {
    for (Operator operator : operators) {
      if (operator.hasPendingWork()) {
        return true;
      }
    }
    return false;
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
  int continueTimers() {
    gate.reset();
    settle(propagateWatermarks(true));
    return gate.firings();
  }

  @Override
  public void close() {
    if (!opened) {
      return;
    }
    opened = false;
    for (int i = 0; i < operators.length; i++) {
      StepScope.Step previous = scope.enter(steps[i]);
      try {
        operators[i].close();
      } finally {
        scope.exit(previous);
      }
    }
    for (TaskInput input : inputs) {
      input.partition.close();
    }
  }

  /** Moves waiting output downstream; returns envelopes moved. */
  int drainOutbox() {
    int moved = outbox.drain();
    checkpoints.afterDrain(outbox.isBlocked());
    return moved;
  }

  /** The container committed: held checkpoint marks are finalized if the outbox is empty. */
  void committed() {
    checkpoints.committed(outbox.isBlocked(), scope, steps[0]);
  }

  private TaskInput inputOf(IncomingMessageEnvelope envelope) {
    Object ssp = envelope.getSystemStreamPartition();
    for (TaskInput input : inputs) { // few inputs: an identity scan beats hashing
      if (input.partition.ssp() == ssp) {
        return input;
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
    if (finished || finishBundles || (bundleElements == 0 && anyInBundle())) {
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
          writerAt[i].sendWatermark(sendMs);
        }
      }
    }
    watermarks.updateOutputWatermark();
    stats.watermarks(watermarks.inputWatermarkMs(), watermarks.monitoredOutputWatermarkMs());
    return timersLeft;
  }

  /** Whether some operator has an open bundle (a scan of a few operators, once per tick). */
  private boolean anyInBundle() {
    for (Operator operator : operators) {
      if (operator.inBundle()) {
        return true;
      }
    }
    return false;
  }

  private void finishBundle() {
    stats.bundleFinished(bundleElements);
    bundleElements = 0;
    for (int i = 0; i < operators.length; i++) { // topological order: upstream output reaches downstream first
      StepScope.Step previous = scope.enter(steps[i]);
      try {
        operators[i].finishBundle();
      } finally {
        scope.exit(previous);
      }
    }
    checkpoints.afterBundle(); // the bundle's outputs left the operators
    taskMetrics.bundleFinished(); // no operator has an open bundle now: these values may be committed
    commit.bundleFinished();
  }

  @Override
  public String toString() {
    return name.getTaskName();
  }
}
