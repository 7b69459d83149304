package dev.weir.runner.translation;

import dev.weir.runner.operators.OperatorFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.values.TupleTag;

/**
 * One node of a stage's fused operator graph: a translated primitive transform, or a writer into
 * an intermediate stream. Nodes of a stage are in topological order (a node only feeds nodes with
 * higher indices). Mutable only while the translator builds the plan; read-only afterwards.
 */
public final class NodeSpec {
  private final int index;
  private final String stepName;
  private final String kind;
  private final OperatorFactory factory;
  private final StreamPlan writesTo;
  private final Map<TupleTag<?>, List<Integer>> consumers = new LinkedHashMap<>();

  NodeSpec(int index, String stepName, String kind, OperatorFactory factory, StreamPlan writesTo) {
    this.index = index;
    this.stepName = stepName;
    this.kind = kind;
    this.factory = factory;
    this.writesTo = writesTo;
  }

  void declareOutput(TupleTag<?> tag) {
    consumers.computeIfAbsent(tag, t -> new ArrayList<>());
  }

  void addConsumer(TupleTag<?> tag, int node) {
    consumers.computeIfAbsent(tag, t -> new ArrayList<>()).add(node);
  }

  /** Index within the stage. */
  public int index() {
    return index;
  }

  /** The PTransform's full name (metrics step name); for writers, the stream's name. */
  public String stepName() {
    return stepName;
  }

  /** A short kind for the plan log: ParDo, GroupByKey, Flatten, ... */
  public String kind() {
    return kind;
  }

  /** Creates the node's operator per task; null for stream writers. */
  public OperatorFactory factory() {
    return factory;
  }

  /** The stream this node writes, or null if it is not a writer. */
  public StreamPlan writesTo() {
    return writesTo;
  }

  /** Downstream node indices per output tag (declared outputs with no consumer map to empty). */
  public Map<TupleTag<?>, List<Integer>> consumers() {
    return Collections.unmodifiableMap(consumers);
  }
}
