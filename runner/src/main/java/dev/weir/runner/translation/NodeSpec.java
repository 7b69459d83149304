package dev.weir.runner.translation;

import dev.weir.runner.operators.OperatorFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.values.TupleTag;

/**
 * One node of a stage's fused operator graph, of one of two shapes: an <em>operator</em> node (a
 * translated primitive transform: {@link #factory()} set, {@link #writesTo()} null) or a
 * <em>writer</em> node (the end of the stage towards another stage's input: {@link #writesTo()}
 * set, no factory; the executor builds its stream writer). Nodes of a stage are in topological
 * order (a node only feeds nodes with higher indices). Mutable only while the translator builds
 * the plan (its consumers); read-only afterwards, from any thread.
 */
@Internal
public final class NodeSpec {
  private final int index;
  private final String stepName;
  private final String kind;
  private final OperatorFactory factory;
  private final StreamPlan writesTo;
  private final Map<TupleTag<?>, List<Integer>> consumers = new LinkedHashMap<>();
  /** Outputs whose elements round-trip through this coder before their consumers ({@link EncodingRule}). */
  private final Map<TupleTag<?>, org.apache.beam.sdk.coders.Coder<?>> roundTrips = new LinkedHashMap<>();
  /** What the bytes of the node's keyed state mean (its coders), or null for a node without keyed state. */
  private String stateSchema;

  private NodeSpec(int index, String stepName, String kind, OperatorFactory factory, StreamPlan writesTo) {
    this.index = index;
    this.stepName = stepName;
    this.kind = kind;
    this.factory = factory;
    this.writesTo = writesTo;
  }

  /** An operator node running {@code factory}'s operator for the transform {@code stepName}. */
  static NodeSpec operator(int index, String stepName, String kind, OperatorFactory factory) {
    return new NodeSpec(index, stepName, kind, java.util.Objects.requireNonNull(factory, "factory"), null);
  }

  /** A writer node into {@code stream}; named after the stream, its kind after the stream's kind. */
  static NodeSpec writer(int index, StreamPlan stream) {
    return new NodeSpec(index, stream.name(), stream.kind().writerKind(), null, stream);
  }

  void declareOutput(TupleTag<?> tag) {
    consumers.computeIfAbsent(tag, t -> new ArrayList<>());
  }

  /**
   * Records what the bytes of this node's keyed state mean: its key, window and state coders, as
   * one line ({@link #describeCoder}). Translation only.
   */
  void describeState(String schema) {
    this.stateSchema = schema;
  }

  /**
   * What the bytes of this node's keyed state mean, e.g. {@code key VarLongCoder, windows
   * GlobalWindow$Coder, count=value(VarLongCoder)}; null if the node keeps no keyed state. A restore
   * into a job whose node of the same name has another schema would decode the checkpoint's bytes
   * with other coders, so it is refused ({@code checkpoint.PlanUpgrade}).
   */
  public String stateSchema() {
    return stateSchema;
  }

  /**
   * A coder as the plan fingerprint and state schemas describe it: its {@code toString()} (Beam's
   * coders name their components there) with every Java identity hash taken out ({@code
   * Class@1b2c3d} becomes {@code Class}: the hash differs in every JVM, and a {@code DelegateCoder}
   * names its functions that way); {@code none} for null.
   */
  public static String describeCoder(org.apache.beam.sdk.coders.Coder<?> coder) {
    if (coder == null) {
      return "none";
    }
    return IDENTITY_HASH.matcher(coder.toString()).replaceAll("");
  }

  /** Java's default {@code toString()} suffix: {@code @} and the identity hash in hex. */
  private static final java.util.regex.Pattern IDENTITY_HASH = java.util.regex.Pattern.compile("@[0-9a-f]+\\b");

  void roundTrip(TupleTag<?> tag, org.apache.beam.sdk.coders.Coder<?> coder) {
    roundTrips.put(tag, coder);
  }

  /**
   * The coder the elements of output {@code tag} go through (encoded and decoded) before any
   * consumer sees them, or null if they are passed by reference; decided at translation by
   * {@link EncodingRule}.
   */
  public org.apache.beam.sdk.coders.Coder<?> roundTripCoder(TupleTag<?> tag) {
    return roundTrips.get(tag);
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

  /** Whether this is a writer node (into {@link #writesTo()}) rather than an operator node. */
  public boolean isWriter() {
    return writesTo != null;
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
