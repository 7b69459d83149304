package dev.weir.runner.translation;

import dev.weir.runner.operators.OperatorFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.beam.sdk.annotations.Internal;

/**
 * A stage: a fused graph of operators that runs as one task per partition. A stage starts at a
 * source ({@link #source()}) or at the stream(s) it reads ({@link #inputs()}), e.g. a shuffle
 * feeding a GroupByKey, and ends at writers into other stages' streams. Mutable only while the
 * translator builds the plan.
 */
@Internal
public final class StagePlan {

  /**
   * A stream read by this stage and the node its elements enter.
   *
   * @param stream the stream
   * @param entryNode index of the node that receives the stream's elements
   * @param sideInput for a side-input (broadcast) stream, the view's index in the entry node's
   *     side-input list; -1 for a main input
   */
  public record Input(StreamPlan stream, int entryNode, int sideInput) {
    /** Whether this input carries a side input (its watermark does not hold the main input). */
    public boolean isSideInput() {
      return sideInput >= 0;
    }
  }

  private final int id;
  private final int partitions;
  private final SourceSpec source;
  private final List<NodeSpec> nodes = new ArrayList<>();
  private final List<Input> inputs = new ArrayList<>();

  StagePlan(int id, int partitions, SourceSpec source) {
    this.id = id;
    this.partitions = partitions;
    this.source = source;
  }

  /** Appends an operator node for transform {@code stepName}; {@code kind} names it in the plan log. */
  NodeSpec addOperator(String stepName, String kind, OperatorFactory factory) {
    NodeSpec node = NodeSpec.operator(nodes.size(), stepName, kind, factory);
    nodes.add(node);
    return node;
  }

  /** Appends a writer node into {@code stream} (which this stage produces). */
  NodeSpec addWriter(StreamPlan stream) {
    NodeSpec node = NodeSpec.writer(nodes.size(), stream);
    nodes.add(node);
    return node;
  }

  void addInput(StreamPlan stream, int entryNode) {
    inputs.add(new Input(stream, entryNode, -1));
  }

  void addSideInput(StreamPlan stream, int entryNode, int sideInput) {
    inputs.add(new Input(stream, entryNode, sideInput));
  }

  /** Index of the stage within the plan. */
  public int id() {
    return id;
  }

  /** Number of partitions = tasks. */
  public int partitions() {
    return partitions;
  }

  /** The source of a source stage (entering node 0), or null. */
  public SourceSpec source() {
    return source;
  }

  /** Nodes in topological order. */
  public List<NodeSpec> nodes() {
    return Collections.unmodifiableList(nodes);
  }

  /** Streams this stage reads. */
  public List<Input> inputs() {
    return Collections.unmodifiableList(inputs);
  }

  /** A short name: "stage-N". */
  public String name() {
    return "stage-" + id;
  }
}
