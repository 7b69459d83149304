package dev.weir.runner.task;

import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.operators.ConcurrentOperator;
import dev.weir.runner.operators.Operator;
import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.Receiver;
import dev.weir.runner.source.SourcePartition;
import dev.weir.runner.source.UnboundedPartition;
import dev.weir.runner.stream.InProcessStream;
import dev.weir.runner.stream.InputPartition;
import dev.weir.runner.stream.StreamWriter;
import dev.weir.runner.stream.TaskOutbox;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.StagePlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.joda.time.Instant;

/**
 * The fused graph of one {@link StageTask}, wired once: an operator per node of the stage plan
 * (a {@link StreamWriter} at each node that writes to a stream), the task's inputs and the node
 * each enters, and, when the task opens, each node's step in the container's {@link StepScope}
 * and the receivers between nodes. Every edge of the graph is a {@link SpannedReceiver} (the
 * callee's step around the call) and, where the plan asks, a {@link CoderRoundTrip}.
 *
 * <p>What the task does with the graph (bundles, watermark passes, phases) is the task's; this
 * class only builds it. Node indexes are topological: a node's consumers have higher indexes.
 *
 * <p>Threading: built on the submitting thread; opened and used on the task's container thread.
 */
final class StageGraph {
  /** Builds the context an operator opens with, given its node and the receivers of its outputs. */
  @FunctionalInterface
  interface ContextFactory {
    OperatorContext create(NodeSpec node, Map<TupleTag<?>, Receiver> outputs);
  }

  private final StagePlan stage;
  /** Per node: its operator (a writer's: the writer). */
  final Operator[] operators;
  /** Per node: its stream writer if it is a stage tail, else null. */
  final StreamWriter[] writerAt;
  /** The task's stream writers, in node order. */
  final List<StreamWriter> writers = new ArrayList<>();
  /** The nodes that run user code on worker threads; usually none. */
  private final ConcurrentOperator[] concurrent;
  /** The task's inputs, in input order. */
  final TaskInput[] inputs;
  /** Per node: its span tag, the PTransform's full name (a writer's: its stream's name). */
  private final String[] tags;
  /** The container thread's step scope and each node's step in it; set by {@link #steps}. */
  private StepScope scope;
  private StepScope.Step[] steps;

  /**
   * @param partition the task's partition of the stage
   * @param inputPartitions the task's inputs: a source stage's split, or the partitions of the
   *     streams the stage reads, in the plan's input order
   * @param streams the job's in-process streams by id (writers send to them)
   * @param outbox the task's outbox (writers put what does not fit into it)
   * @param taskName the task's name, for the writers' errors
   */
  StageGraph(StagePlan stage, int partition, List<InputPartition> inputPartitions,
      Map<Integer, InProcessStream> streams, TaskOutbox outbox, String taskName) {
    this.stage = stage;
    List<NodeSpec> nodes = stage.nodes();
    this.operators = new Operator[nodes.size()];
    this.writerAt = new StreamWriter[nodes.size()];
    this.tags = new String[nodes.size()];
    for (NodeSpec node : nodes) {
      tags[node.index()] = node.stepName();
      if (node.writesTo() != null) {
        StreamWriter writer = new StreamWriter(streams.get(node.writesTo().id()), outbox, partition, taskName);
        writers.add(writer);
        writerAt[node.index()] = writer;
        operators[node.index()] = writer;
      } else {
        operators[node.index()] = node.factory().create();
      }
    }
    List<ConcurrentOperator> concurrentNodes = new ArrayList<>();
    for (Operator operator : operators) {
      if (operator instanceof ConcurrentOperator c && c.concurrent()) {
        concurrentNodes.add(c);
      }
    }
    this.concurrent = concurrentNodes.toArray(new ConcurrentOperator[0]);
    this.inputs = new TaskInput[inputPartitions.size()];
    for (int i = 0; i < inputs.length; i++) {
      inputs[i] = TaskInput.of(stage, i, inputPartitions.get(i), operators);
    }
  }

  /** The task's watermark aggregation over this graph: per input its producers, per node its predecessors. */
  StageWatermarks newWatermarks() {
    int[] producers = new int[inputs.length];
    boolean[] sideInputs = new boolean[inputs.length];
    for (int i = 0; i < inputs.length; i++) {
      producers[i] = inputs[i].partition.producers();
      sideInputs[i] = inputs[i].isSideInput();
    }
    boolean[] writerNodes = new boolean[operators.length];
    for (int i = 0; i < operators.length; i++) {
      writerNodes[i] = writerAt[i] != null;
    }
    return new StageWatermarks(producers, sideInputs, StageWatermarks.predecessorsOf(stage.nodes()), writerNodes);
  }

  /** The task's unbounded source splits (their checkpoint marks are the task's to take), usually none or one. */
  List<SourcePartition> unboundedSources() {
    List<SourcePartition> unbounded = new ArrayList<>();
    for (TaskInput input : inputs) {
      if (input.partition instanceof UnboundedPartition u) {
        unbounded.add(u);
      }
    }
    return unbounded;
  }

  /**
   * Each node's step in {@code scope}: its tag and, with metrics on and for a node that runs user
   * code (not a writer), its metrics container of {@code taskMetrics}.
   */
  StepScope.Step[] steps(StepScope scope, StepMetrics.Task taskMetrics, boolean metricsEnabled) {
    StepScope.Step[] steps = new StepScope.Step[operators.length];
    this.scope = scope;
    this.steps = steps;
    for (NodeSpec node : stage.nodes()) {
      if (metricsEnabled && node.writesTo() == null) {
        StepMetrics.StepContainer metrics = taskMetrics.containerFor(node.stepName());
        steps[node.index()] = scope.step(tags[node.index()], metrics.attempted(), metrics.cells(), metrics.elements());
      } else {
        steps[node.index()] = scope.step(tags[node.index()], null);
      }
    }
    return steps;
  }

  /**
   * Opens every operator in node order, each in its own step, with the receivers of its outputs
   * (each consumer behind a {@link SpannedReceiver}, the PCollections that need it behind a
   * {@link CoderRoundTrip}); then wraps each main input's entry in its node's step.
   */
  void open(ContextFactory contexts) {
    for (NodeSpec node : stage.nodes()) {
      Map<TupleTag<?>, Receiver> outputs = new HashMap<>();
      for (Map.Entry<TupleTag<?>, List<Integer>> e : node.consumers().entrySet()) {
        List<Integer> targets = e.getValue();
        Receiver[] receivers = new Receiver[targets.size()];
        for (int i = 0; i < receivers.length; i++) {
          int target = targets.get(i);
          // The producer's "out" is counted on its first edge only: once per element emitted.
          receivers[i] = new SpannedReceiver(operators[target], steps[target], scope,
              i == 0 ? steps[node.index()].elements() : null);
        }
        outputs.put(e.getKey(), CoderRoundTrip.wrap(node.roundTripCoder(e.getKey()), Receiver.fanOut(receivers)));
      }
      StepScope.Step previous = scope.enter(steps[node.index()]);
      try {
        operators[node.index()].open(contexts.create(node, outputs));
      } finally {
        scope.exit(previous);
      }
    }
    for (TaskInput input : inputs) {
      if (input.sideConsumer == null) {
        input.entry = new SpannedReceiver(input.entry, steps[input.entryNode], scope, null);
      }
    }
  }

  // The walks below call into every operator, each in its own step (metrics container and
  // profiling span), in node order: upstream output reaches downstream within the same call.

  /** Every operator's {@code finishBundle}, in node order. */
  void finishBundles() {
    eachInStep(Operator::finishBundle);
  }

  /** Every operator hears of processing time {@code now} (its processing-time timers may fire). */
  void onProcessingTime(Instant now) {
    eachInStep(operator -> operator.onProcessingTime(now));
  }

  /** Closes every operator, then every input partition (source readers). */
  void close() {
    eachInStep(Operator::close);
    for (TaskInput input : inputs) {
      input.partition.close();
    }
  }

  /** Calls {@code call} on every operator in node order, each in its own step. */
  private void eachInStep(Consumer<Operator> call) {
    for (int i = 0; i < operators.length; i++) {
      StepScope.Step previous = scope.enter(steps[i]);
      try {
        call.accept(operators[i]);
      } finally {
        scope.exit(previous);
      }
    }
  }

  /** A side-input element of {@code input} goes to the consuming operator's side-input store. */
  void acceptSideInput(TaskInput input, WindowedValue<?> element) {
    StepScope.Step previous = scope.enter(steps[input.entryNode]);
    try {
      input.sideConsumer.acceptSideInput(input.sideIndex, element);
    } finally {
      scope.exit(previous);
    }
  }

  /** Side input {@code input}'s watermark moved to {@code ms}: its consuming operator hears of it. */
  void advanceSideInputWatermark(TaskInput input, long ms) {
    StepScope.Step previous = scope.enter(steps[input.entryNode]);
    try {
      input.sideConsumer.advanceSideInputWatermark(input.sideIndex, ms);
    } finally {
      scope.exit(previous);
    }
  }

  /** Whether some operator has an open bundle (a scan of a few operators). */
  boolean anyInBundle() {
    for (Operator operator : operators) {
      if (operator.inBundle()) {
        return true;
      }
    }
    return false;
  }

  /** Whether an operator has work that no input drives (e.g. checkpointed SDF restrictions). */
  boolean hasPendingWork() {
    for (Operator operator : operators) {
      if (operator.hasPendingWork()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether a node that runs user code on worker threads has as many calls in flight as it may
   * ({@link ConcurrentOperator#saturated()}): the task then takes no input.
   * A loop over an array that is empty unless the job asked for concurrency.
   */
  boolean saturated() {
    for (ConcurrentOperator operator : concurrent) {
      if (operator.saturated()) {
        return true;
      }
    }
    return false;
  }

  /** Whether every operator can write its state now ({@link Operator#readyForCheckpoint()}). */
  boolean readyForCheckpoint() {
    for (Operator operator : operators) {
      if (!operator.readyForCheckpoint()) {
        return false;
      }
    }
    return true;
  }
}
