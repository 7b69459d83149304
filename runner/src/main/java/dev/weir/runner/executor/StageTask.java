package dev.weir.runner.executor;

import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.operators.Operator;
import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.Receiver;
import dev.weir.runner.operators.SideInputConsumer;
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
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
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
 * <h2>What it does with each envelope</h2>
 *
 * <ul>
 *   <li><b>Element</b>: handed to the entry operator of the partition it came from; counted into
 *       the open bundle, which is finished at {@code maxBundleSize} elements (or by
 *       {@link #window} after {@code maxBundleTimeMs}).
 *   <li><b>Watermark</b> ({@link ProducerWatermark}): recorded for its producer; the partition's
 *       watermark is the minimum over its producers, the task's input watermark the minimum over
 *       its main-input partitions. When that advances, the bundle is finished, operators fire
 *       event-time timers in topological order, each seeing the input watermark lowered by the
 *       holds of the operators upstream of it, and each stream writer sends the watermark of the
 *       nodes feeding it if it advanced.
 *   <li><b>Side-input envelopes</b> (broadcast streams): handed to the consuming operator's side
 *       inputs; their watermarks advance only that view's side-input watermark, never the task's.
 *   <li><b>End of stream</b> ({@link ProducerEndOfStream}): when every producer of every input
 *       ended, {@link #onEndOfStream} advances to +infinity, finishes, and sends end-of-stream on;
 *       if an operator still has pending work ({@link Operator#hasPendingWork()}, e.g. checkpointed
 *       splittable-DoFn restrictions), the task keeps ticking and sends it once that work is done.
 * </ul>
 *
 * <p>Timer firings in slices: when a watermark (or a processing-time tick) makes more timers ready
 * than fit in one pass (e.g. the end of input, or a processing-time trigger, over many keys),
 * operators that fire incrementally ({@link Operator#hasReadyTimers()}) fire
 * {@value #TIMERS_PER_PASS} per pass, none while the outbox is blocked, and hold their output
 * watermark at the earliest unfired event-time timer; meanwhile the task takes no input and no
 * tick ({@link #hasPendingTimers()}), and the container resumes the firing each pass
 * ({@link #continueTimers()}), each pass one bundle; end-of-stream waits for the last firing.
 *
 * <p>Checkpoints: a task reading unbounded source splits takes their checkpoint marks when it
 * finishes a bundle that read elements, asks the container for a commit, and finalizes the marks
 * after a commit at which its outbox is empty ({@link #committed()}).
 *
 * <p>Time: {@link #window} (the container's periodic tick) closes bundles older than
 * {@code maxBundleTimeMs} of real time and gives operators the job's {@link JobClock} time for
 * processing-time timers; the clock is the system clock, or a test stream's manual clock. A bundle
 * that no input element opened (one opened by the tick's processing-time firings, or by
 * pushed-back elements a side input released) is finished at the end of the tick, as the firings
 * of a watermark are: output that a downstream DoFn of the stage buffers until
 * {@code @FinishBundle} (or a lifted combine's partial accumulators) goes on at once rather than
 * at the next input bundle or watermark ({@link Operator#inBundle()}). Firings that join a bundle
 * of input elements are finished with it, by the count and time rules.
 *
 * <p>Created by {@link WeirTaskFactory} (the task factory of the job's samza-api
 * {@code TaskApplication}). Threading: owned by one container; every method runs on that container's thread. Processing
 * is synchronous: the callback completes before {@link #processAsync} returns.
 */
public final class StageTask
    implements AsyncStreamTask, InitableTask, WindowableTask, EndOfStreamListenerTask, ClosableTask {
  private static final long MIN_WATERMARK_MS = BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis();
  private static final long MAX_WATERMARK_MS = BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis();
  /** Ready timers fired per operator per run-loop pass (fewer when the outbox blocks). */
  static final int TIMERS_PER_PASS = 64;

  /** Watermark and end-of-stream bookkeeping of one input partition. */
  private static final class Input {
    final InputPartition partition;
    /** The entry operator; wrapped in the entry transform's step at {@link StageTask#open}. */
    Receiver entry;
    /** For a side-input stream: the consuming operator and the view's index; else null / -1. */
    final SideInputConsumer sideConsumer;
    final int sideIndex;
    /** The stage node this input enters. */
    final int entryNode;
    final long[] producerWatermarks;
    final boolean[] ended;
    int endedCount;
    long watermarkMs = MIN_WATERMARK_MS;

    Input(InputPartition partition, Receiver entry, int entryNode, SideInputConsumer sideConsumer, int sideIndex) {
      this.partition = partition;
      this.entryNode = entryNode;
      this.entry = entry;
      this.sideConsumer = sideConsumer;
      this.sideIndex = sideIndex;
      this.producerWatermarks = new long[partition.producers()];
      this.ended = new boolean[partition.producers()];
      Arrays.fill(producerWatermarks, MIN_WATERMARK_MS);
    }

    void onWatermark(int producer, long wm) {
      if (wm > producerWatermarks[producer]) {
        producerWatermarks[producer] = wm;
        long min = Long.MAX_VALUE;
        for (long w : producerWatermarks) {
          min = Math.min(min, w);
        }
        watermarkMs = min;
      }
    }

    void onEnd(int producer) {
      if (!ended[producer]) {
        ended[producer] = true;
        endedCount++;
        onWatermark(producer, MAX_WATERMARK_MS);
      }
    }

    boolean isEnded() {
      return endedCount == ended.length;
    }
  }

  private final TaskName name;
  private final StagePlan stage;
  private final int partition;
  private final PipelineOptions options;
  private final int maxBundleSize;
  private final long maxBundleNanos;
  private final TaskOutbox outbox;
  private final JobClock clock;
  private final Operator[] operators;
  private final List<StreamWriter> writers = new ArrayList<>();
  private final Input[] inputs;
  /** The unbounded source splits among the inputs (checkpoint marks), usually none or one. */
  private final SourcePartition[] checkpointedSources;
  /** Whether some split holds checkpoint marks waiting for a commit. */
  private boolean marksHeld;
  private final boolean metricsEnabled;
  /** Per node: its step's name, the PTransform's full name (a writer's: its stream's name). */
  private final String[] tags;
  /** The container thread's step scope; set at {@link #open}. */
  private StepScope scope;
  /** Per node: its step in {@link #scope} (its tag and, if it runs user code, its metrics container). */
  private StepScope.Step[] steps;
  /** The container's commit point; set at {@link #open}. */
  private ContainerCommit commit;
  /** The task's step metrics, staged for commit at each finished bundle; set at {@link #open}. */
  private StepMetrics.Task taskMetrics;

  /** Per node: the nodes feeding it inside the stage. */
  private final int[][] predecessors;
  /** Per node: the input watermark last delivered to it. */
  private final long[] nodeWatermarkMs;
  /** Per node: its output watermark (its input watermark lowered by its hold). */
  private final long[] nodeOutputMs;
  private final boolean[] writerNodes;
  private long inputWatermarkMs = MIN_WATERMARK_MS;
  private long outputWatermarkMs = MIN_WATERMARK_MS;
  private int bundleElements;
  private long bundleStartNanos;
  private boolean done;
  /** Input ended, but operators still have pending work: the end of stream waits for it. */
  private boolean draining;
  /** All inputs ended; end-of-stream goes out once no timers wait to fire. */
  private boolean endPending;
  /** Whether some operator has ready timers (either domain) still to fire (see {@link #continueTimers}). */
  private boolean timersPending;
  /** The job's quiescence tracker (test streams), or null: pending firings count as in flight. */
  private final Quiescence quiescence;
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
    this.maxBundleNanos = settings.maxBundleTimeMs() * 1_000_000L;
    this.metricsEnabled = settings.metricsEnabled();
    List<NodeSpec> nodes = stage.nodes();
    this.operators = new Operator[nodes.size()];
    this.tags = new String[nodes.size()];
    for (NodeSpec node : nodes) {
      tags[node.index()] = node.stepName();
    }
    for (NodeSpec node : nodes) {
      if (node.writesTo() != null) {
        StreamWriter writer = new StreamWriter(streams.get(node.writesTo().id()), outbox, partition, name.getTaskName());
        writers.add(writer);
        operators[node.index()] = writer;
      } else {
        operators[node.index()] = node.factory().create();
      }
    }
    this.inputs = new Input[inputPartitions.size()];
    for (int i = 0; i < inputs.length; i++) {
      StagePlan.Input planned = stage.source() != null ? null : stage.inputs().get(i);
      int entry = planned == null ? 0 : planned.entryNode();
      SideInputConsumer consumer = null;
      int sideIndex = -1;
      if (planned != null && planned.isSideInput()) {
        consumer = (SideInputConsumer) operators[entry];
        sideIndex = planned.sideInput();
      }
      inputs[i] = new Input(inputPartitions.get(i), operators[entry], entry, consumer, sideIndex);
    }
    List<SourcePartition> unbounded = new ArrayList<>();
    for (InputPartition p : inputPartitions) {
      if (p instanceof SourcePartition.UnboundedPartition u) {
        unbounded.add(u);
      }
    }
    this.checkpointedSources = unbounded.toArray(new SourcePartition[0]);
    int n = operators.length;
    this.predecessors = new int[n][];
    List<List<Integer>> preds = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      preds.add(new ArrayList<>());
    }
    for (NodeSpec node : nodes) {
      for (List<Integer> targets : node.consumers().values()) {
        for (int t : targets) {
          if (!preds.get(t).contains(node.index())) {
            preds.get(t).add(node.index());
          }
        }
      }
    }
    for (int i = 0; i < n; i++) {
      predecessors[i] = preds.get(i).stream().mapToInt(Integer::intValue).toArray();
    }
    this.nodeWatermarkMs = new long[n];
    this.nodeOutputMs = new long[n];
    Arrays.fill(nodeWatermarkMs, MIN_WATERMARK_MS);
    Arrays.fill(nodeOutputMs, MIN_WATERMARK_MS);
    this.writerNodes = new boolean[n];
    for (NodeSpec node : nodes) {
      writerNodes[node.index()] = node.writesTo() != null;
    }
  }

  /** The task's samza-api name, e.g. {@code stage-2-p0}. */
  public TaskName name() {
    return name;
  }

  /** Input partitions, for the container's round-robin. */
  List<InputPartition> inputPartitions() {
    List<InputPartition> result = new ArrayList<>(inputs.length);
    for (Input input : inputs) {
      result.add(input.partition);
    }
    return result;
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
    this.scope = scope;
    this.commit = commit;
    this.taskMetrics = commit.metrics().newTask();
    ContainerState state = commit.state();
    List<NodeSpec> nodes = stage.nodes();
    this.steps = new StepScope.Step[nodes.size()];
    for (NodeSpec node : nodes) {
      steps[node.index()] = scope.step(tags[node.index()], metricsEnabled && node.writesTo() == null
          ? taskMetrics.containerFor(node.stepName()) : null);
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
        outputs.put(e.getKey(), Receiver.fanOut(receivers));
      }
      StepScope.Step previous = scope.enter(steps[node.index()]);
      try {
        operators[node.index()].open(new OperatorContext(options, node.stepName(), partition, outputs,
            steps[node.index()], state, clock, commit.finalizers()));
      } finally {
        scope.exit(previous);
      }
    }
    for (Input input : inputs) {
      if (input.sideConsumer == null) {
        input.entry = new SpannedReceiver(input.entry, steps[input.entryNode], scope);
      }
    }
    if (stage.source() != null) {
      SourceContext sourceContext = new SourceContext(options, scope, steps[0]);
      for (Input input : inputs) {
        input.partition.open(sourceContext);
      }
    }
  }

  @Override
  public void init(Context context) {
    // Opened by the embedded container through open(StepScope, ...); nothing to do from samza-api.
  }

  @Override
  public void processAsync(IncomingMessageEnvelope envelope, MessageCollector collector,
      TaskCoordinator coordinator, TaskCallback callback) {
    try {
      Input input = inputOf(envelope);
      Object message = envelope.getMessage();
      if (input.sideConsumer != null) {
        processSideInput(input, message);
        callback.complete();
        return;
      }
      if (message instanceof WindowedValue<?> element) {
        Object key = envelope.getKey();
        if (key != null) {
          input.entry.acceptKeyed((byte[]) key, element);
        } else {
          input.entry.accept(element);
        }
        if (bundleElements++ == 0) {
          bundleStartNanos = System.nanoTime();
        }
        if (bundleElements >= maxBundleSize) {
          finishBundle();
        }
      } else if (message instanceof ProducerWatermark watermark) {
        input.onWatermark(watermark.producer(), watermark.getTimestamp());
        advanceWatermark();
      } else if (message instanceof ProducerEndOfStream end) {
        input.onEnd(end.producer());
        advanceWatermark();
        if (allInputsEnded()) {
          onEndOfStream(collector, coordinator);
        }
      } else {
        throw new IllegalStateException("unexpected message " + message + " on " + envelope.getSystemStreamPartition());
      }
      callback.complete();
    } catch (Throwable t) {
      callback.failure(t);
    }
  }

  /**
   * A side-input envelope: elements go to the consuming operator's side-input store; watermarks
   * and end-of-stream advance that view's side-input watermark only (never the task's input
   * watermark), which may release pushed-back elements and so lower the operator's hold.
   */
  private void processSideInput(Input input, Object message) {
    if (message instanceof WindowedValue<?> element) {
      StepScope.Step previous = scope.enter(steps[input.entryNode]);
      try {
        input.sideConsumer.acceptSideInput(input.sideIndex, element);
      } finally {
        scope.exit(previous);
      }
      return;
    }
    if (message instanceof ProducerWatermark watermark) {
      input.onWatermark(watermark.producer(), watermark.getTimestamp());
    } else if (message instanceof ProducerEndOfStream end) {
      input.onEnd(end.producer());
    } else {
      throw new IllegalStateException("unexpected message " + message + " on " + input.partition.ssp());
    }
    StepScope.Step previous = scope.enter(steps[input.entryNode]);
    try {
      input.sideConsumer.advanceSideInputWatermark(input.sideIndex, input.watermarkMs);
    } finally {
      scope.exit(previous);
    }
    propagateWatermarks(true);
    if (allInputsEnded()) {
      onEndOfStream(null, null);
    }
  }

  @Override
  public void window(MessageCollector collector, TaskCoordinator coordinator) {
    if (bundleElements > 0 && System.nanoTime() - bundleStartNanos >= maxBundleNanos) {
      finishBundle();
    }
    Instant now = new Instant(clock.millis()); // once per tick, not per element
    for (int i = 0; i < operators.length; i++) {
      StepScope.Step previous = scope.enter(steps[i]);
      try {
        operators[i].onProcessingTime(now);
      } finally {
        scope.exit(previous);
      }
    }
    // processing-time firings may have released holds; a bundle they opened ends with the tick
    propagateWatermarks(false);
    if (draining && !timersPending && !hasPendingWork()) {
      endStream();
    }
  }

  @Override
  public void onEndOfStream(MessageCollector collector, TaskCoordinator coordinator) {
    if (done || endPending || draining) {
      return;
    }
    for (Input input : inputs) {
      for (int p = 0; p < input.ended.length; p++) {
        input.onEnd(p);
      }
    }
    endPending = true;
    advanceWatermark();
    completeEndOfStream();
  }

  /** Sends end-of-stream on once all inputs ended and every ready timer fired. */
  private void completeEndOfStream() {
    if (!endPending || timersPending) {
      return;
    }
    endPending = false;
    finishBundle();
    if (hasPendingWork()) {
      draining = true; // window() ends the stream once the pending work is done
      return;
    }
    endStream();
  }

  /** Sends end-of-stream downstream; the task is done. */
  private void endStream() {
    finishBundle();
    for (StreamWriter writer : writers) {
      writer.sendEndOfStream();
    }
    draining = false;
    done = true;
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
   * Whether operators still have timers to fire that a watermark or a processing-time tick made
   * ready; the task then takes no input and no tick until {@link #continueTimers()} fired them all.
   */
  boolean hasPendingTimers() {
    return timersPending;
  }

  /**
   * Fires the next slice of ready timers (up to {@value #TIMERS_PER_PASS} per operator, stopping
   * when the outbox blocks), then delivers whatever watermarks that released and, once none wait,
   * the deferred end-of-stream. Called by the container once per pass while
   * {@link #hasPendingTimers()} and not {@link #isBlocked()}.
   *
   * @return a positive count of work done (for the container's idle strategy)
   */
  int continueTimers() {
    propagateWatermarks(true);
    completeEndOfStream();
    return 1;
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
    for (Input input : inputs) {
      input.partition.close();
    }
  }

  /** Whether the task has processed its end of stream (its outbox may still hold envelopes). */
  boolean isDone() {
    return done;
  }

  /** Whether the task waits for room downstream and must not take input. */
  boolean isBlocked() {
    return outbox.isBlocked();
  }

  /** Moves waiting output downstream; returns envelopes moved. */
  int drainOutbox() {
    int moved = outbox.drain();
    if (marksHeld && !outbox.isBlocked()) {
      commit.state().requestCommit(); // the held marks' outputs are all downstream now
    }
    return moved;
  }

  /**
   * The container committed: if every output of this task has left its outbox, the checkpoint
   * marks its source splits held are covered by the commit and are finalized now; otherwise they
   * wait for a commit after the outbox drained.
   */
  void committed() {
    if (!marksHeld || outbox.isBlocked()) {
      return;
    }
    marksHeld = false;
    for (SourcePartition source : checkpointedSources) {
      StepScope.Step previous = scope.enter(steps[0]);
      try {
        source.finalizeCheckpoints();
      } finally {
        scope.exit(previous);
      }
    }
  }

  /** The task's current input watermark, epoch ms. */
  long inputWatermarkMs() {
    return inputWatermarkMs;
  }

  /** The last watermark this task sent downstream, epoch ms. */
  long outputWatermarkMs() {
    return outputWatermarkMs;
  }

  private Input inputOf(IncomingMessageEnvelope envelope) {
    Object ssp = envelope.getSystemStreamPartition();
    for (Input input : inputs) { // few inputs: an identity scan beats hashing
      if (input.partition.ssp() == ssp) {
        return input;
      }
    }
    throw new IllegalStateException(name + " does not read " + ssp);
  }

  private boolean allInputsEnded() {
    for (Input input : inputs) {
      if (!input.isEnded()) {
        return false;
      }
    }
    return true;
  }

  private void advanceWatermark() {
    long min = Long.MAX_VALUE;
    boolean anyMain = false;
    for (Input input : inputs) {
      if (input.sideConsumer == null) {
        min = Math.min(min, input.watermarkMs);
        anyMain = true;
      }
    }
    if (!anyMain || min <= inputWatermarkMs) {
      return;
    }
    inputWatermarkMs = min;
    propagateWatermarks(true);
  }

  /**
   * Delivers watermarks through the fused graph in topological order: a node's input watermark is
   * the task's input watermark lowered by the output watermarks (watermark lowered by hold) of the
   * nodes feeding it, so an operator holding elements (pushed back for side inputs, buffered by a
   * GroupByKey) holds exactly what is downstream of it. Writers send their own watermark, so each
   * stream gets the watermark of the part of the stage that feeds it.
   *
   * @param finishBundles whether to finish the open bundle after delivering (always done, also
   *     before delivering, when some node's watermark advances; and when no input element is in
   *     the open bundle but some operator is in one, e.g. after timer firings)
   */
  private void propagateWatermarks(boolean finishBundles) {
    boolean finished = false;
    boolean pending = false;
    for (int i = 0; i < operators.length; i++) {
      if (writerNodes[i]) {
        continue;
      }
      long w = upstreamWatermark(i);
      if (w > nodeWatermarkMs[i]) {
        if (!finished) {
          finishBundle();
          finished = true;
        }
        nodeWatermarkMs[i] = w;
        StepScope.Step previous = scope.enter(steps[i]);
        try {
          operators[i].onWatermark(new Instant(w));
        } finally {
          scope.exit(previous);
        }
      }
      if (operators[i].hasReadyTimers()) {
        fireReadyTimers(i);
        pending |= operators[i].hasReadyTimers();
      }
      nodeOutputMs[i] = Math.min(nodeWatermarkMs[i], operators[i].watermarkHold().getMillis());
    }
    if (finished || finishBundles || (bundleElements == 0 && anyInBundle())) {
      finishBundle();
      for (int i = 0; i < operators.length; i++) { // finishBundle may have changed holds
        if (!writerNodes[i]) {
          nodeOutputMs[i] = Math.min(nodeWatermarkMs[i], operators[i].watermarkHold().getMillis());
        }
      }
    }
    long output = Long.MAX_VALUE;
    for (int i = 0; i < operators.length; i++) {
      if (!writerNodes[i]) {
        continue;
      }
      long w = upstreamWatermark(i);
      if (w > nodeWatermarkMs[i]) {
        nodeWatermarkMs[i] = w;
        ((StreamWriter) operators[i]).sendWatermark(w);
      }
      nodeOutputMs[i] = nodeWatermarkMs[i];
      output = Math.min(output, nodeWatermarkMs[i]);
    }
    if (output != Long.MAX_VALUE && output > outputWatermarkMs) {
      outputWatermarkMs = output;
    }
    setTimersPending(pending);
  }

  /**
   * Fires a bounded slice of node {@code i}'s ready timers: at most {@value #TIMERS_PER_PASS}, and
   * none once the outbox is blocked, so the outbox holds at most one firing's output beyond what
   * the downstream streams took (one timer at a time: a firing emits a pane or a few).
   */
  private void fireReadyTimers(int i) {
    Operator operator = operators[i];
    StepScope.Step previous = scope.enter(steps[i]);
    try {
      for (int fired = 0; fired < TIMERS_PER_PASS && !outbox.isBlocked() && operator.hasReadyTimers(); fired++) {
        operator.fireReadyTimers(1);
      }
    } finally {
      scope.exit(previous);
    }
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

  private void setTimersPending(boolean pending) {
    if (pending == timersPending) {
      return;
    }
    timersPending = pending;
    if (quiescence != null) { // waiting firings are work in flight: a test stream must not move on
      if (pending) {
        quiescence.sent();
      } else {
        quiescence.processed();
      }
    }
  }

  private long upstreamWatermark(int node) {
    long w = inputWatermarkMs;
    for (int p : predecessors[node]) {
      w = Math.min(w, nodeOutputMs[p]);
    }
    return w;
  }

  private void finishBundle() {
    bundleElements = 0;
    for (int i = 0; i < operators.length; i++) { // topological order: upstream output reaches downstream first
      StepScope.Step previous = scope.enter(steps[i]);
      try {
        operators[i].finishBundle();
      } finally {
        scope.exit(previous);
      }
    }
    for (SourcePartition source : checkpointedSources) { // the bundle's outputs left the operators
      if (source.checkpoint()) {
        marksHeld = true;
        commit.state().requestCommit();
      }
    }
    taskMetrics.bundleFinished(); // no operator has an open bundle now: these values may be committed
    commit.bundleFinished();
  }

  @Override
  public String toString() {
    return name.getTaskName();
  }
}
