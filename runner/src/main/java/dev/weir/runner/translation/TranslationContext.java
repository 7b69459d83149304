package dev.weir.runner.translation;

import dev.weir.runner.WeirSettings;
import dev.weir.runner.operators.OperatorFactory;
import dev.weir.runner.operators.PassThroughOperator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.util.construction.PTransformTranslation;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.PValue;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.apache.beam.sdk.values.TupleTag;

/**
 * What the {@link TransformTranslator}s build the {@link JobPlan} with: the stages and streams so
 * far, where each translated PCollection is produced, and the few ways a translator places its
 * node. A node is either <em>fused</em> into the stage producing its input ({@link #fuse}), or it
 * enters a new stage <em>cut</em> behind a stream from that stage: a SHUFFLE partitioned by key
 * ({@link #cutShuffle}, {@code --parallelism} partitions unless told), or a FORWARD keeping the
 * producer's partitioning ({@link #cutForward}); side inputs arrive on BROADCAST streams
 * ({@link #broadcastViews}). Each cut adds, in the producing stage, the writer node of the stream;
 * the executor turns it into the stream's writer.
 *
 * <p>Elements and their coders: each registered output PCollection gets its encoding decision
 * here, once ({@link EncodingRule}: by reference, or a round trip through its coder); the plan
 * carries it on the producing node ({@link NodeSpec#roundTripCoder}); a debug line of this class's
 * logger names every PCollection that round-trips.
 *
 * <p>Numbering: stages and streams are numbered in the order they are made (a stream's name
 * starts {@code sN-}), which is the walk's topological order; the executor and the samza-api face
 * name tasks and streams after it (see {@link JobPlan}).
 *
 * <p>Threading: one per translation, on the thread that called {@code run()}.
 */
final class TranslationContext {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TranslationContext.class);

  /** Where a PCollection is produced: the stage, the node within it, and the node's output tag. */
  record Producer(StagePlan stage, int node, TupleTag<?> tag) {}

  /**
   * A new stage fed by one stream from an existing stage, waiting for the node the stream enters.
   *
   * @param stage the new stage
   * @param stream the stream feeding it (its writer is already in the producing stage)
   */
  record Cut(StagePlan stage, StreamPlan stream) {
    /** Adds the node the stream enters (the stage's main input) and returns it. */
    NodeSpec enter(String stepName, String kind, OperatorFactory factory) {
      NodeSpec node = stage.addOperator(stepName, kind, factory);
      stage.addInput(stream, node.index());
      return node;
    }
  }

  private final WeirSettings settings;
  private final PlannedSplits planned;
  private final List<StagePlan> stages = new ArrayList<>();
  private final List<StreamPlan> streams = new ArrayList<>();
  private final Map<PValue, Producer> producers = new HashMap<>();
  /** Per producer: the WindowedValue coder of what it emits (for streams it feeds). */
  private final Map<Producer, Coder<?>> elementCoders = new HashMap<>();
  private final Map<String, MetricsContainerImpl> translationMetrics = new HashMap<>();
  private final ViewBroadcasts views = new ViewBroadcasts(this);
  /**
   * Per {@code --concurrentParDos} entry (or per ParDo, without entries): the ParDos it selected,
   * each with null if it runs concurrently or why it cannot; checked at the end ({@link #plan()}).
   */
  private final Map<String, Map<String, String>> concurrentSelections = new java.util.LinkedHashMap<>();
  /** Outputs of {@code GBKIntoKeyedWorkItems}: the shuffle their {@code ProcessElements} cuts. */
  private final Map<PValue, KeyedWorkItemsTranslator.Deferred> keyedWorkItems = new HashMap<>();

  TranslationContext(WeirSettings settings, PlannedSplits planned) {
    this.settings = settings;
    this.planned = planned;
  }

  /** Splits given from outside for some Reads (a shared split plan), else {@link PlannedSplits#NONE}. */
  PlannedSplits plannedSplits() {
    return planned;
  }

  /** The run's settings: {@code --parallelism}, bundle limits, and the options for user code. */
  WeirSettings settings() {
    return settings;
  }

  /**
   * The plan built so far.
   *
   * @throws IllegalArgumentException if a {@code --concurrentParDos} entry selected no ParDo that
   *     may run concurrently (naming it, and what it selected with the reason)
   */
  JobPlan plan() {
    for (String name : settings.concurrency().parDos()) {
      Map<String, String> selected = concurrentSelections.get(name);
      if (selected == null || !selected.containsValue(null)) {
        throw new IllegalArgumentException("--concurrentParDos entry '" + name + "' selects no ParDo that can run "
            + "concurrently" + (selected == null ? ": no transform has that name or is inside a composite of it"
                : ": " + selected) + "; allowed: the full name of a ParDo without side inputs, @RequiresTimeSortedInput or "
            + "@RequiresStableInput, or of a composite holding one");
      }
    }
    return new JobPlan(stages, streams, translationMetrics);
  }

  /**
   * Whether the ParDo {@code node} runs {@code @ProcessElement} on worker threads: concurrency is
   * on and {@code --concurrentParDos} selects it (or is unset) and {@code cannotBecause} is null.
   * Records the choice for {@link #plan()}'s check.
   *
   * @param cannotBecause why this ParDo must run on its container's thread (stateful, side
   *     inputs, ...), or null if it may run concurrently
   */
  boolean runsConcurrently(TransformHierarchy.Node node, String cannotBecause) {
    String selectedBy = settings.concurrency().selecting(node.getFullName());
    if (selectedBy == null) {
      return false;
    }
    concurrentSelections.computeIfAbsent(selectedBy, k -> new java.util.LinkedHashMap<>())
        .put(node.getFullName(), cannotBecause);
    return cannotBecause == null;
  }

  /** The ParDos that run {@code @ProcessElement} on worker threads, by full name (for the run log). */
  List<String> concurrentParDos() {
    List<String> names = new ArrayList<>();
    for (Map<String, String> selected : concurrentSelections.values()) {
      selected.forEach((name, reason) -> {
        if (reason == null) {
          names.add(name);
        }
      });
    }
    return names;
  }

  /** The metrics container of step {@code stepName} for user code run at translation (splitting). */
  MetricsContainerImpl translationMetrics(String stepName) {
    return translationMetrics.computeIfAbsent(stepName, MetricsContainerImpl::new);
  }

  // ---- stages, streams and nodes ----------------------------------------------------------------

  /** A new stage of {@code partitions} partitions; {@code source} is null unless it is a source stage. */
  StagePlan newStage(int partitions, SourceSpec source) {
    StagePlan stage = new StagePlan(stages.size(), partitions, source);
    stages.add(stage);
    return stage;
  }

  /** A source stage whose head node passes the source's elements on; registers its outputs. */
  void sourceStage(TransformHierarchy.Node node, SourceSpec source, String kind) {
    StagePlan stage = newStage(source.partitions(), source);
    NodeSpec head = stage.addOperator(node.getFullName(), kind, PassThroughOperator::new);
    registerOutputs(node, stage, head);
  }

  /** Adds an operator node to the stage of {@code from}, fed by it. */
  NodeSpec fuse(Producer from, String stepName, String kind, OperatorFactory factory) {
    NodeSpec spec = from.stage().addOperator(stepName, kind, factory);
    connect(from, spec);
    return spec;
  }

  /**
   * A stream of {@code kind} from the stage of {@code from} to stage {@code to}, named after
   * {@code node}, with its writer fed by {@code from}. The caller adds it to {@code to}'s inputs.
   *
   * @param keyCoder for SHUFFLE: the coder whose encoding routes keys; else null
   */
  StreamPlan feed(Producer from, StreamPlan.Kind kind, StagePlan to, Coder<?> keyCoder,
      TransformHierarchy.Node node) {
    String name = "s" + streams.size() + "-" + kind.name().toLowerCase() + "-"
        + sanitize(dev.weir.runner.state.CellLayout.stateIdentity(node.getFullName()));
    StreamPlan stream = new StreamPlan(streams.size(), name, kind, from.stage(), to, keyCoder,
        elementCoders.get(from));
    streams.add(stream);
    connect(from, from.stage().addWriter(stream));
    return stream;
  }

  /** Cuts a new stage of {@code --parallelism} partitions behind a SHUFFLE of {@code from} by key. */
  Cut cutShuffle(Producer from, Coder<?> keyCoder, TransformHierarchy.Node node) {
    return cutShuffle(from, keyCoder, settings.parallelism(), node);
  }

  /** Cuts a new stage of {@code partitions} partitions behind a SHUFFLE of {@code from} by key. */
  Cut cutShuffle(Producer from, Coder<?> keyCoder, int partitions, TransformHierarchy.Node node) {
    StagePlan stage = newStage(partitions, null);
    return new Cut(stage, feed(from, StreamPlan.Kind.SHUFFLE, stage, keyCoder, node));
  }

  /** Cuts a new stage, partitioned as the producer's, behind a FORWARD stream of {@code from}. */
  Cut cutForward(Producer from, TransformHierarchy.Node node) {
    StagePlan stage = newStage(from.stage().partitions(), null);
    return new Cut(stage, feed(from, StreamPlan.Kind.FORWARD, stage, null, node));
  }

  /** Feeds each of {@code views} to {@code consumer} in {@code stage} on a BROADCAST stream. */
  void broadcastViews(TransformHierarchy.Node node, StagePlan stage, NodeSpec consumer,
      List<PCollectionView<?>> viewList) {
    views.broadcast(node, stage, consumer, viewList);
  }

  /** Makes {@code from}'s node feed {@code to} (both in {@code from}'s stage). */
  static void connect(Producer from, NodeSpec to) {
    from.stage().nodes().get(from.node()).addConsumer(from.tag(), to.index());
  }

  // ---- PCollections -----------------------------------------------------------------------------

  /** Declares {@code spec}'s outputs as the producer of each of {@code node}'s output PCollections. */
  void registerOutputs(TransformHierarchy.Node node, StagePlan stage, NodeSpec spec) {
    for (Map.Entry<TupleTag<?>, PCollection<?>> e : node.getOutputs().entrySet()) {
      spec.declareOutput(e.getKey());
      Coder<?> roundTrip = EncodingRule.roundTripCoder(e.getValue(), settings.enforceEncodability());
      if (roundTrip != null) {
        spec.roundTrip(e.getKey(), roundTrip);
        LOG.debug("Elements of {} ({}) round-trip through {}", e.getValue().getName(), node.getFullName(), roundTrip);
      }
      Producer producer = new Producer(stage, spec.index(), e.getKey());
      producers.put(e.getValue(), producer);
      elementCoders.put(producer, windowedCoder(e.getValue().getCoder(), e.getValue().getWindowingStrategy()));
    }
  }

  /**
   * Declares what a producer that is no PCollection's (e.g. a partial combine's accumulators)
   * emits: elements of {@code valueCoder} windowed by {@code windowing}'s window coder.
   */
  void declareElements(Producer producer, Coder<?> valueCoder, WindowingStrategy<?, ?> windowing) {
    elementCoders.put(producer, windowedCoder(valueCoder, windowing));
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Coder<?> windowedCoder(Coder<?> valueCoder, WindowingStrategy<?, ?> windowing) {
    return org.apache.beam.sdk.values.WindowedValues.getFullCoder((Coder) valueCoder,
        windowing.getWindowFn().windowCoder());
  }

  /** Records that {@code value} is produced where {@code producer} says (an alias, e.g. a view). */
  void alias(PValue value, Producer producer) {
    producers.put(value, producer);
  }

  /** Where {@code input} is produced, or null if it is not translated (yet). */
  Producer producerOrNull(PValue input) {
    return producers.get(input);
  }

  /**
   * Where {@code input} of {@code node} is produced.
   *
   * @throws UnsupportedOperationException naming {@code node} if the input has no producer
   */
  Producer producerOf(PCollection<?> input, TransformHierarchy.Node node) {
    Producer p = producers.get(input);
    if (p == null) {
      throw unsupported(node, "its input " + input.getName() + " has no translated producer");
    }
    return p;
  }

  void deferKeyedWorkItems(PValue output, KeyedWorkItemsTranslator.Deferred deferred) {
    keyedWorkItems.put(output, deferred);
  }

  KeyedWorkItemsTranslator.Deferred keyedWorkItemsOf(PValue input) {
    return keyedWorkItems.get(input);
  }

  // ---- node shapes ------------------------------------------------------------------------------

  /** The only input of {@code node}; fails naming it if it has none or several. */
  static PCollection<?> mainInput(TransformHierarchy.Node node) {
    Map<TupleTag<?>, PCollection<?>> inputs = node.getInputs();
    if (inputs.size() != 1) {
      throw unsupported(node, "expected one input, found " + inputs.size());
    }
    return inputs.values().iterator().next();
  }

  /** The tag of the only output of {@code node}; fails naming it if it has none or several. */
  static TupleTag<?> singleOutputTag(TransformHierarchy.Node node) {
    if (node.getOutputs().size() != 1) {
      throw unsupported(node, "expected one output, found " + node.getOutputs().size());
    }
    return node.getOutputs().keySet().iterator().next();
  }

  /** The exception for a transform Weir cannot run: names the transform and its URN. */
  static UnsupportedOperationException unsupported(TransformHierarchy.Node node, String reason) {
    String urn = null;
    try {
      urn = PTransformTranslation.urnForTransformOrNull(node.getTransform());
    } catch (RuntimeException ignored) {
      // no URN known for this class
    }
    return new UnsupportedOperationException("WeirRunner cannot run transform '" + node.getFullName()
        + "' (URN " + (urn == null ? "<none>" : urn) + "): " + reason);
  }

  private static String sanitize(String name) {
    StringBuilder b = new StringBuilder(name.length());
    for (int i = 0; i < name.length() && b.length() < 60; i++) {
      char c = name.charAt(i);
      b.append(Character.isLetterOrDigit(c) || c == '-' || c == '_' ? c : '_');
    }
    return b.toString();
  }
}
