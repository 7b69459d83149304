package dev.weir.runner.translation;

import dev.weir.runner.WeirSettings;
import dev.weir.runner.operators.GroupByKeyOperator;
import dev.weir.runner.operators.ParDoOperator;
import dev.weir.runner.operators.PassThroughOperator;
import dev.weir.runner.operators.SplittableProcessOperator;
import org.apache.beam.runners.core.SplittableParDoViaKeyedWorkItems;
import dev.weir.runner.operators.StatefulParDoOperator;
import dev.weir.runner.operators.VoidKeyOperator;
import dev.weir.runner.sideinput.SideInputs;
import org.apache.beam.sdk.coders.VoidCoder;
import dev.weir.runner.operators.WindowAssignOperator;
import java.io.Closeable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.io.BoundedSource;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.beam.sdk.runners.AppliedPTransform;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.Impulse;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.runners.core.SystemReduceFn;
import org.apache.beam.sdk.util.AppliedCombineFn;
import dev.weir.runner.operators.AccumulatorMergingFn;
import dev.weir.runner.operators.PartialCombineOperator;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.transforms.reflect.DoFnSignature;
import org.apache.beam.sdk.transforms.reflect.DoFnSignatures;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.util.construction.PTransformTranslation;
import org.apache.beam.sdk.util.construction.ParDoTranslation;
import org.apache.beam.sdk.util.construction.SplittableParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PValue;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowingStrategy;

/**
 * Walks a (already overridden) Beam pipeline in topological order and builds the {@link JobPlan}.
 *
 * <p>Fusion rule: a transform joins the stage that produces its input, except where data must be
 * redistributed: a lifted Combine.perKey (see {@link #liftCombine}) fuses a partial combine into
 * the producing stage and starts a merging stage; a GroupByKey starts a new stage of {@code --parallelism} partitions fed by a
 * SHUFFLE stream (key-hash partitioned); a Flatten whose inputs come from different stages starts
 * a new stage fed by one FORWARD stream per input; a ParDo with side inputs starts a new stage fed
 * by a FORWARD stream (main input) and one BROADCAST stream per view, from the stage producing the
 * view's PCollection ({@code View.CreatePCollectionView} itself translates to nothing); a
 * triggered view (a non-default trigger) is first grouped into its panes ({@link #viewProducer}). Sources
 * (Impulse, Read) start stages with one partition per split; a {@code TestStream} starts a stage of
 * one partition that replays its events (the executor then runs the job on a manual clock).
 *
 * <p>Anything else fails here, at {@code run()}, with an {@link UnsupportedOperationException}
 * naming the transform's full name and URN. A ParDo whose DoFn uses state, timers or
 * {@code @OnWindowExpiration} starts a keyed stage of {@code --parallelism} partitions fed by a
 * SHUFFLE stream ({@link #statefulParDo}), plus BROADCAST streams for its side inputs; so does
 * one whose {@code @ProcessElement} is {@code @RequiresTimeSortedInput} (sorting needs keyed
 * state). Splittable DoFns arrive expanded: bounded ones as plain ParDos (naive expansion),
 * unbounded ones, and bounded ones taking a {@code BundleFinalizer}, as
 * {@code GBKIntoKeyedWorkItems} + {@code ProcessElements}, a keyed stage of
 * {@link SplittableProcessOperator} ({@link #splittableProcessElements}). Not supported: an SDF
 * taking a {@code BundleFinalizer} in {@code @StartBundle} or {@code @FinishBundle} (runners-core's
 * {@code ProcessFn} offers none there).
 *
 * <p>Threading: used once, on the thread that called {@code run()}.
 */
public final class PipelineTranslator extends Pipeline.PipelineVisitor.Defaults {

  /** Where a PCollection is produced: stage, node, output tag. */
  private record Producer(StagePlan stage, int node, TupleTag<?> tag) {}

  private final WeirSettings settings;
  private final List<StagePlan> stages = new ArrayList<>();
  private final List<StreamPlan> streams = new ArrayList<>();
  private final Map<PValue, Producer> producers = new HashMap<>();
  /** Per triggered view's PCollection: where its panes are produced (built once, on first use). */
  private final Map<PCollection<?>, Producer> viewPanes = new HashMap<>();
  private final Map<String, MetricsContainerImpl> translationMetrics = new HashMap<>();

  private PipelineTranslator(WeirSettings settings) {
    this.settings = settings;
  }

  /**
   * Translates {@code pipeline}.
   *
   * @throws UnsupportedOperationException naming the first transform Weir cannot run
   */
  public static JobPlan translate(Pipeline pipeline, WeirSettings settings) {
    PipelineTranslator translator = new PipelineTranslator(settings);
    pipeline.traverseTopologically(translator);
    return new JobPlan(translator.stages, translator.streams, translator.translationMetrics);
  }

  @Override
  public CompositeBehavior enterCompositeTransform(TransformHierarchy.Node node) {
    if (node.getTransform() instanceof Combine.PerKey<?, ?, ?> perKey && liftCombine(node, perKey)) {
      return CompositeBehavior.DO_NOT_ENTER_TRANSFORM;
    }
    return CompositeBehavior.ENTER_TRANSFORM;
  }

  /**
   * Combiner lifting: translates a Combine.perKey as a partial combine fused into the producing
   * stage (one accumulator per key and window per bundle), a shuffle of accumulators, and a
   * GroupByKey whose reduce function merges accumulators. Only when that is equivalent: a plain
   * {@link CombineFn} (no context, no side inputs), a non-merging WindowFn, the default trigger,
   * and an accumulator coder. A data-driven trigger (Nexmark Q6's {@code
   * Repeatedly(AfterPane.elementCountAtLeast(1))}) counts elements arriving at the GroupByKey, and
   * folding a bundle into one accumulator first would fire fewer panes than Direct and Flink do in
   * streaming (Flink lifts only in batch). Otherwise the composite is expanded as usual
   * (GroupByKey + Combine.GroupedValues).
   *
   * @return whether the composite was translated here
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private boolean liftCombine(TransformHierarchy.Node node, Combine.PerKey<?, ?, ?> perKey) {
    if (!perKey.getSideInputs().isEmpty() || !(perKey.getFn() instanceof Combine.CombineFn<?, ?, ?> fn)
        || node.getInputs().size() != 1 || node.getOutputs().size() != 1) {
      return false;
    }
    PCollection<?> input = node.getInputs().values().iterator().next();
    WindowingStrategy<?, ?> windowing = input.getWindowingStrategy();
    if (!windowing.getWindowFn().isNonMerging() || !(windowing.getTrigger() instanceof DefaultTrigger)
        || !(input.getCoder() instanceof KvCoder<?, ?> kvCoder)) {
      return false;
    }
    Coder accumulatorCoder;
    try {
      accumulatorCoder = ((Combine.CombineFn) fn).getAccumulatorCoder(input.getPipeline().getCoderRegistry(),
          kvCoder.getValueCoder());
    } catch (Exception e) {
      return false; // no accumulator coder: cannot shuffle accumulators
    }
    Producer from = producers.get(input);
    if (from == null) {
      return false;
    }
    Coder keyCoder = kvCoder.getKeyCoder();
    Combine.CombineFn combineFn = fn;
    NodeSpec partial = from.stage().addNode(node.getFullName() + "/PartialCombine", "PartialCombine",
        () -> new PartialCombineOperator(keyCoder, combineFn, windowing), null);
    connect(from, partial);
    partial.declareOutput(PARTIAL_TAG);
    StagePlan stage = newStage(settings.parallelism(), null);
    StreamPlan stream = newStream(StreamPlan.Kind.SHUFFLE, from.stage(), stage, keyCoder, node);
    NodeSpec writer = from.stage().addNode(stream.name(), "ShuffleWrite", null, stream);
    connect(new Producer(from.stage(), partial.index(), PARTIAL_TAG), writer);
    TupleTag outTag = singleOutputTag(node);
    AccumulatorMergingFn merging = new AccumulatorMergingFn(combineFn, accumulatorCoder);
    SystemReduceFn reduceFn = SystemReduceFn.combining(keyCoder,
        AppliedCombineFn.withAccumulatorCoder(merging, accumulatorCoder));
    NodeSpec merge = stage.addNode(node.getFullName(), "CombineMerge",
        () -> new GroupByKeyOperator(keyCoder, accumulatorCoder, windowing, outTag, reduceFn), null);
    stage.addInput(stream, merge.index());
    registerOutputs(node, stage, merge);
    return true;
  }

  /** Output tag of partial-combine nodes (internal to a stage). */
  private static final TupleTag<Object> PARTIAL_TAG = new TupleTag<>("weir-partial-combine");

  @Override
  public void visitPrimitiveTransform(TransformHierarchy.Node node) {
    PTransform<?, ?> transform = node.getTransform();
    if (transform instanceof Impulse) {
      sourceStage(node, new SourceSpec.Impulse(), "Impulse");
    } else if (transform instanceof SplittableParDo.PrimitiveBoundedRead<?> read) {
      sourceStage(node, boundedSplits(node, read.getSource()), "Read");
    } else if (transform instanceof Read.Bounded<?> read) {
      sourceStage(node, boundedSplits(node, read.getSource()), "Read");
    } else if (transform instanceof SplittableParDo.PrimitiveUnboundedRead<?> read) {
      sourceStage(node, unboundedSplits(node, read.getSource()), "Read");
    } else if (transform instanceof Read.Unbounded<?> read) {
      sourceStage(node, unboundedSplits(node, read.getSource()), "Read");
    } else if (transform instanceof TestStream<?> testStream) {
      sourceStage(node, new SourceSpec.Test(testStream.getEvents()), "TestStream");
    } else if (transform instanceof ParDo.MultiOutput<?, ?>) {
      parDo(node);
    } else if (transform instanceof GroupByKey<?, ?>) {
      groupByKey(node);
    } else if (transform instanceof Flatten.PCollections<?>) {
      flatten(node);
    } else if (transform instanceof Window.Assign<?> assign) {
      windowAssign(node, assign);
    } else if (transform instanceof SplittableParDoViaKeyedWorkItems.GBKIntoKeyedWorkItems<?, ?>) {
      keyedWorkItems(node);
    } else if (transform instanceof SplittableParDoViaKeyedWorkItems.ProcessElements<?, ?, ?, ?, ?> process) {
      splittableProcessElements(node, process);
    } else if (transform instanceof View.CreatePCollectionView<?, ?>) {
      // The view's data is its PCollection, broadcast to each consumer by parDo(); nothing runs here.
      PCollection<?> input = mainInput(node);
      Producer p = producerOf(input, node);
      for (PCollection<?> out : node.getOutputs().values()) {
        producers.put(out, p);
      }
    } else {
      throw unsupported(node, "no translation for " + transform.getClass().getName());
    }
  }

  private void sourceStage(TransformHierarchy.Node node, SourceSpec source, String kind) {
    StagePlan stage = newStage(source.partitions(), source);
    NodeSpec head = stage.addNode(node.getFullName(), kind, PassThroughOperator::new, null);
    registerOutputs(node, stage, head);
  }

  private SourceSpec boundedSplits(TransformHierarchy.Node node, BoundedSource<?> source) {
    int parallelism = settings.parallelism();
    // A source may report metrics while it splits; they belong to the Read step.
    MetricsContainerImpl metrics = translationMetrics.computeIfAbsent(node.getFullName(), MetricsContainerImpl::new);
    try (Closeable scope = MetricsEnvironment.scopedMetricsContainer(metrics)) {
      long size = source.getEstimatedSizeBytes(settings.pipelineOptions());
      long desired = Math.max(1, size / parallelism);
      List<? extends BoundedSource<?>> splits = source.split(desired, settings.pipelineOptions());
      if (splits.isEmpty()) {
        return new SourceSpec.Bounded(List.of(source));
      }
      return new SourceSpec.Bounded(splits);
    } catch (Exception e) {
      // Splitting is an optimisation; one split is always correct.
      return new SourceSpec.Bounded(List.of(source));
    }
  }

  private SourceSpec unboundedSplits(TransformHierarchy.Node node, UnboundedSource<?, ?> source) {
    MetricsContainerImpl metrics = translationMetrics.computeIfAbsent(node.getFullName(), MetricsContainerImpl::new);
    try (Closeable scope = MetricsEnvironment.scopedMetricsContainer(metrics)) {
      List<? extends UnboundedSource<?, ?>> splits =
          source.split(settings.parallelism(), settings.pipelineOptions());
      return new SourceSpec.Unbounded(splits.isEmpty() ? List.of(source) : splits);
    } catch (Exception e) {
      throw new IllegalStateException("cannot split the unbounded source of " + node.getFullName(), e);
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private void parDo(TransformHierarchy.Node node) {
    ParDo.MultiOutput<?, ?> parDo = (ParDo.MultiOutput<?, ?>) node.getTransform();
    DoFn<?, ?> fn = parDo.getFn();
    DoFnSignature signature = DoFnSignatures.getSignature(fn.getClass());
    if (signature.processElement().isSplittable()) {
      throw unsupported(node, "splittable DoFn reached translation unexpanded (WeirRunner runs SDFs through "
          + "SplittableParDo's expansion)");
    }
    AppliedPTransform<?, ?, ?> applied = node.toAppliedPTransform(pipelineOf(node));
    PCollection<?> input = parDoMainInput(node, parDo);
    Map<TupleTag<?>, Coder<?>> outputCoders = new HashMap<>();
    for (Map.Entry<TupleTag<?>, PCollection<?>> e : node.getOutputs().entrySet()) {
      outputCoders.put(e.getKey(), e.getValue().getCoder());
    }
    List<TupleTag<?>> additional = new ArrayList<>(parDo.getAdditionalOutputTags().getAll());
    TupleTag mainTag = parDo.getMainOutputTag();
    Coder inputCoder = input.getCoder();
    WindowingStrategy<?, ?> windowing = input.getWindowingStrategy();
    var schema = ParDoTranslation.getSchemaInformation(applied);
    var sideInputMapping = ParDoTranslation.getSideInputMapping(applied);
    DoFn prototype = fn;
    Producer from = producerOf(input, node);
    List<PCollectionView<?>> views = new ArrayList<>(parDo.getSideInputs().values());
    if (signature.usesState() || signature.usesTimers() || signature.onWindowExpiration() != null
        || signature.processElement().requiresTimeSortedInput()) {
      statefulParDo(node, signature, from, prototype, mainTag, additional, inputCoder, outputCoders, windowing,
          schema, sideInputMapping, views);
      return;
    }
    if (views.isEmpty()) {
      NodeSpec spec = from.stage().addNode(node.getFullName(), "ParDo",
          () -> new ParDoOperator(prototype, mainTag, additional, inputCoder, outputCoders,
              windowing, schema, sideInputMapping, List.of()), null);
      connect(from, spec);
      registerOutputs(node, from.stage(), spec);
      return;
    }
    // A ParDo with side inputs starts a stage: its main input arrives on a FORWARD stream, each
    // view on a BROADCAST stream. Cutting here keeps the producer stages independent of the
    // views (no stage waits for its own output), and the pushed-back elements' hold only holds
    // what is downstream of this ParDo.
    StagePlan stage = newStage(from.stage().partitions(), null);
    NodeSpec spec = stage.addNode(node.getFullName(), "ParDo+SideInputs",
        () -> new ParDoOperator(prototype, mainTag, additional, inputCoder, outputCoders,
            windowing, schema, sideInputMapping, views), null);
    StreamPlan main = newStream(StreamPlan.Kind.FORWARD, from.stage(), stage, null, node);
    NodeSpec mainWriter = from.stage().addNode(main.name(), "ForwardWrite", null, main);
    connect(from, mainWriter);
    stage.addInput(main, spec.index());
    addSideInputs(node, stage, spec, views);
    registerOutputs(node, stage, spec);
  }

  /** Feeds each view to {@code spec} on a BROADCAST stream from the stage producing its PCollection. */
  private void addSideInputs(TransformHierarchy.Node node, StagePlan stage, NodeSpec spec,
      List<PCollectionView<?>> views) {
    for (int i = 0; i < views.size(); i++) {
      Producer viewProducer = viewProducer(views.get(i), node);
      StreamPlan side = newStream(StreamPlan.Kind.BROADCAST, viewProducer.stage(), stage, null, node);
      NodeSpec sideWriter = viewProducer.stage().addNode(side.name(), "BroadcastWrite", null, side);
      connect(viewProducer, sideWriter);
      stage.addSideInput(side, spec.index(), i);
    }
  }

  /**
   * Where the broadcast stream of {@code view} is fed from. For an untriggered view (the default
   * trigger), the producer of its PCollection: elements are broadcast as they come and a window's
   * view is ready when the side-input watermark passes it. For a triggered view, as on Beam's
   * Direct runner: the elements are keyed by {@code null} and grouped by one GroupByKey (a stage of
   * one partition) under the view's own windowing strategy, so that each trigger firing becomes
   * one pane ({@code KV<Void, Iterable<T>>}) that replaces the window's view in the consumers'
   * {@link SideInputs} ("the value from the latest trigger firing").
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private Producer viewProducer(PCollectionView<?> view, TransformHierarchy.Node node) {
    PCollection<?> input = view.getPCollection();
    Producer from = producerOf(input, node);
    if (!SideInputs.isTriggered(input.getWindowingStrategy())) {
      return from;
    }
    Producer panes = viewPanes.get(input);
    if (panes != null) {
      return panes;
    }
    String name = input.getName() + "/WeirViewPanes";
    NodeSpec keying = from.stage().addNode(name + "/KeyByNull", "VoidKey", VoidKeyOperator::new, null);
    connect(from, keying);
    keying.declareOutput(VIEW_KEYED_TAG);
    StagePlan stage = newStage(1, null);
    StreamPlan stream = newStream(StreamPlan.Kind.SHUFFLE, from.stage(), stage, VoidCoder.of(), node);
    NodeSpec writer = from.stage().addNode(stream.name(), "ShuffleWrite", null, stream);
    connect(new Producer(from.stage(), keying.index(), VIEW_KEYED_TAG), writer);
    Coder elementCoder = input.getCoder();
    WindowingStrategy<?, ?> windowing = input.getWindowingStrategy();
    NodeSpec group = stage.addNode(name + "/GroupByKey", "GroupByKey",
        () -> GroupByKeyOperator.grouping(VoidCoder.of(), elementCoder, windowing, (TupleTag) VIEW_PANES_TAG), null);
    stage.addInput(stream, group.index());
    group.declareOutput(VIEW_PANES_TAG);
    panes = new Producer(stage, group.index(), VIEW_PANES_TAG);
    viewPanes.put(input, panes);
    return panes;
  }

  /** Output tags of a triggered view's keying and pane-grouping nodes (internal to the plan). */
  private static final TupleTag<Object> VIEW_KEYED_TAG = new TupleTag<>("weir-view-keyed");
  private static final TupleTag<Object> VIEW_PANES_TAG = new TupleTag<>("weir-view-panes");

  /**
   * A stateful ParDo starts a keyed stage of {@code --parallelism} partitions fed by a SHUFFLE
   * stream partitioned by the input's key, so that every key's state and timers live in one task;
   * its side inputs, if any, arrive on one BROADCAST stream per view, as for a stateless ParDo.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private void statefulParDo(TransformHierarchy.Node node, DoFnSignature signature, Producer from, DoFn prototype,
      TupleTag mainTag, List<TupleTag<?>> additional, Coder inputCoder, Map<TupleTag<?>, Coder<?>> outputCoders,
      WindowingStrategy<?, ?> windowing, org.apache.beam.sdk.transforms.DoFnSchemaInformation schema,
      Map<String, PCollectionView<?>> sideInputMapping, List<PCollectionView<?>> views) {
    if (!(inputCoder instanceof KvCoder<?, ?> kvCoder)) {
      throw unsupported(node, "stateful ParDo input coder is not a KvCoder: " + inputCoder);
    }
    if (!windowing.getWindowFn().isNonMerging()) {
      throw unsupported(node, "stateful ParDo over merging windows (" + windowing.getWindowFn() + ")");
    }
    StagePlan stage = newStage(settings.parallelism(), null);
    StreamPlan stream = newStream(StreamPlan.Kind.SHUFFLE, from.stage(), stage, kvCoder.getKeyCoder(), node);
    NodeSpec writer = from.stage().addNode(stream.name(), "ShuffleWrite", null, stream);
    connect(from, writer);
    KvCoder kv = kvCoder;
    NodeSpec spec = stage.addNode(node.getFullName(), "StatefulParDo",
        () -> new StatefulParDoOperator(prototype, mainTag, additional, kv, outputCoders, windowing, schema,
            sideInputMapping, views), null);
    stage.addInput(stream, spec.index());
    addSideInputs(node, stage, spec, views);
    registerOutputs(node, stage, spec);
  }

  private static PCollection<?> parDoMainInput(TransformHierarchy.Node node, ParDo.MultiOutput<?, ?> parDo) {
    Map<TupleTag<?>, PValue> additional = parDo.getAdditionalInputs();
    PCollection<?> main = null;
    for (Map.Entry<TupleTag<?>, PCollection<?>> e : node.getInputs().entrySet()) {
      if (!additional.containsKey(e.getKey())) {
        if (main != null) {
          throw unsupported(node, "more than one main input");
        }
        main = e.getValue();
      }
    }
    if (main == null) {
      throw unsupported(node, "no main input");
    }
    return main;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private void groupByKey(TransformHierarchy.Node node) {
    PCollection<?> input = mainInput(node);
    if (!(input.getCoder() instanceof KvCoder<?, ?> kvCoder)) {
      throw unsupported(node, "GroupByKey input coder is not a KvCoder: " + input.getCoder());
    }
    Producer from = producerOf(input, node);
    StagePlan stage = newStage(settings.parallelism(), null);
    StreamPlan stream = newStream(StreamPlan.Kind.SHUFFLE, from.stage(), stage, kvCoder.getKeyCoder(), node);
    NodeSpec writer = from.stage().addNode(stream.name(), "ShuffleWrite", null, stream);
    connect(from, writer);
    Coder keyCoder = kvCoder.getKeyCoder();
    Coder valueCoder = kvCoder.getValueCoder();
    WindowingStrategy<?, ?> windowing = input.getWindowingStrategy();
    TupleTag outTag = singleOutputTag(node);
    NodeSpec gbk = stage.addNode(node.getFullName(), "GroupByKey",
        () -> GroupByKeyOperator.grouping(keyCoder, valueCoder, windowing, (TupleTag<KV<Object, Iterable<Object>>>) outTag),
        null);
    stage.addInput(stream, gbk.index());
    registerOutputs(node, stage, gbk);
  }

  private void flatten(TransformHierarchy.Node node) {
    List<Producer> inputs = new ArrayList<>();
    for (PCollection<?> pc : node.getInputs().values()) {
      inputs.add(producerOf(pc, node));
    }
    if (inputs.isEmpty()) {
      sourceStage(node, new SourceSpec.Empty(), "Flatten");
      return;
    }
    StagePlan common = inputs.get(0).stage();
    for (Producer p : inputs) {
      if (p.stage() != common) {
        common = null;
        break;
      }
    }
    if (common != null) {
      NodeSpec spec = common.addNode(node.getFullName(), "Flatten", PassThroughOperator::new, null);
      for (Producer p : inputs) {
        connect(p, spec);
      }
      registerOutputs(node, common, spec);
      return;
    }
    int partitions = 1;
    for (Producer p : inputs) {
      partitions = Math.max(partitions, p.stage().partitions());
    }
    StagePlan stage = newStage(partitions, null);
    NodeSpec spec = stage.addNode(node.getFullName(), "Flatten", PassThroughOperator::new, null);
    for (Producer p : inputs) {
      StreamPlan stream = newStream(StreamPlan.Kind.FORWARD, p.stage(), stage, null, node);
      NodeSpec writer = p.stage().addNode(stream.name(), "ForwardWrite", null, stream);
      connect(p, writer);
      stage.addInput(stream, spec.index());
    }
    registerOutputs(node, stage, spec);
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private void windowAssign(TransformHierarchy.Node node, Window.Assign<?> assign) {
    Producer from = producerOf(mainInput(node), node);
    var windowFn = assign.getWindowFn();
    NodeSpec spec = from.stage().addNode(node.getFullName(), "Window.Assign",
        () -> new WindowAssignOperator(windowFn), null);
    connect(from, spec);
    registerOutputs(node, from.stage(), spec);
  }

  // ---- splittable DoFns via keyed work items ---------------------------------------------------

  /** A {@code GBKIntoKeyedWorkItems} waiting for its {@code ProcessElements}: the shuffle to cut. */
  private record KeyedWorkItemsInput(Producer from, Coder<?> keyCoder, TransformHierarchy.Node node) {}

  /** Outputs of {@code GBKIntoKeyedWorkItems}, translated together with their ProcessElements. */
  private final Map<PValue, KeyedWorkItemsInput> keyedWorkItems = new HashMap<>();

  /**
   * {@code GBKIntoKeyedWorkItems} (from runners-core's {@link SplittableParDoViaKeyedWorkItems}
   * override of an SDF) becomes the SHUFFLE stream in front of its
   * {@code ProcessElements}; both are translated when the latter is visited, since the work items
   * exist only inside the consuming operator.
   */
  private void keyedWorkItems(TransformHierarchy.Node node) {
    PCollection<?> input = mainInput(node);
    if (!(input.getCoder() instanceof KvCoder<?, ?> kvCoder)) {
      throw unsupported(node, "GBKIntoKeyedWorkItems input coder is not a KvCoder: " + input.getCoder());
    }
    Producer from = producerOf(input, node);
    for (PCollection<?> out : node.getOutputs().values()) {
      keyedWorkItems.put(out, new KeyedWorkItemsInput(from, kvCoder.getKeyCoder(), node));
    }
  }

  /**
   * The {@code ProcessElements} of an unbounded SDF (or of a bounded one taking a
   * {@code BundleFinalizer}) starts a keyed stage of {@code --parallelism}
   * partitions, fed by a SHUFFLE stream on the unique key of each (element, restriction) and one
   * BROADCAST stream per side input, running {@link SplittableProcessOperator}.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private void splittableProcessElements(TransformHierarchy.Node node,
      SplittableParDoViaKeyedWorkItems.ProcessElements<?, ?, ?, ?, ?> process) {
    PCollection<?> input = mainInput(node);
    KeyedWorkItemsInput keyed = keyedWorkItems.get(input);
    if (keyed == null) {
      throw unsupported(node, "its input does not come from GBKIntoKeyedWorkItems");
    }
    DoFnSignature signature = DoFnSignatures.getSignature(process.getFn().getClass());
    for (DoFnSignature.BundleMethod method : new DoFnSignature.BundleMethod[] {signature.startBundle(),
        signature.finishBundle()}) {
      if (method != null && method.extraParameters().stream()
          .anyMatch(p -> p instanceof DoFnSignature.Parameter.BundleFinalizerParameter)) {
        throw unsupported(node, "splittable DoFn " + process.getFn().getClass().getName() + " takes a "
            + "BundleFinalizer in " + method.targetMethod().getName() + " (a @StartBundle/@FinishBundle method); "
            + "splittable DoFns get one only in @ProcessElement");
      }
    }
    Map<TupleTag<?>, Coder<?>> outputCoders = new HashMap<>();
    WindowingStrategy<?, ?> windowing = null;
    for (Map.Entry<TupleTag<?>, PCollection<?>> e : node.getOutputs().entrySet()) {
      outputCoders.put(e.getKey(), e.getValue().getCoder());
      windowing = e.getValue().getWindowingStrategy();
    }
    if (windowing == null) {
      throw unsupported(node, "no outputs");
    }
    WindowingStrategy<?, ?> elementWindowing = windowing;
    Coder inputCoder = input.getCoder();
    SplittableParDoViaKeyedWorkItems.ProcessElements transform = process;
    int maxOutputs = settings.maxBundleSize();
    org.joda.time.Duration maxDuration = org.joda.time.Duration.millis(settings.maxBundleTimeMs());
    StagePlan stage = newStage(settings.parallelism(), null);
    StreamPlan stream = newStream(StreamPlan.Kind.SHUFFLE, keyed.from().stage(), stage, keyed.keyCoder(), keyed.node());
    NodeSpec writer = keyed.from().stage().addNode(stream.name(), "ShuffleWrite", null, stream);
    connect(keyed.from(), writer);
    NodeSpec spec = stage.addNode(node.getFullName(), "SplittableProcess",
        () -> new SplittableProcessOperator(transform, inputCoder, outputCoders, elementWindowing, maxOutputs,
            maxDuration), null);
    stage.addInput(stream, spec.index());
    addSideInputs(node, stage, spec, process.getSideInputs());
    registerOutputs(node, stage, spec);
  }

  // ---- helpers ---------------------------------------------------------------------------------

  private StagePlan newStage(int partitions, SourceSpec source) {
    StagePlan stage = new StagePlan(stages.size(), partitions, source);
    stages.add(stage);
    return stage;
  }

  private StreamPlan newStream(StreamPlan.Kind kind, StagePlan producer, StagePlan consumer,
      Coder<?> keyCoder, TransformHierarchy.Node node) {
    String name = "s" + streams.size() + "-" + kind.name().toLowerCase() + "-" + sanitize(node.getFullName());
    StreamPlan stream = new StreamPlan(streams.size(), name, kind, producer, consumer, keyCoder);
    streams.add(stream);
    return stream;
  }

  private static String sanitize(String name) {
    StringBuilder b = new StringBuilder(name.length());
    for (int i = 0; i < name.length() && b.length() < 60; i++) {
      char c = name.charAt(i);
      b.append(Character.isLetterOrDigit(c) || c == '-' || c == '_' ? c : '_');
    }
    return b.toString();
  }

  private void registerOutputs(TransformHierarchy.Node node, StagePlan stage, NodeSpec spec) {
    for (Map.Entry<TupleTag<?>, PCollection<?>> e : node.getOutputs().entrySet()) {
      spec.declareOutput(e.getKey());
      producers.put(e.getValue(), new Producer(stage, spec.index(), e.getKey()));
    }
  }

  private static void connect(Producer from, NodeSpec to) {
    from.stage().nodes().get(from.node()).addConsumer(from.tag(), to.index());
  }

  private Producer producerOf(PCollection<?> input, TransformHierarchy.Node node) {
    Producer p = producers.get(input);
    if (p == null) {
      throw unsupported(node, "its input " + input.getName() + " has no translated producer");
    }
    return p;
  }

  private static PCollection<?> mainInput(TransformHierarchy.Node node) {
    Map<TupleTag<?>, PCollection<?>> inputs = node.getInputs();
    if (inputs.size() != 1) {
      throw unsupported(node, "expected one input, found " + inputs.size());
    }
    return inputs.values().iterator().next();
  }

  private static TupleTag<?> singleOutputTag(TransformHierarchy.Node node) {
    if (node.getOutputs().size() != 1) {
      throw unsupported(node, "expected one output, found " + node.getOutputs().size());
    }
    return node.getOutputs().keySet().iterator().next();
  }

  private Pipeline pipelineOf(TransformHierarchy.Node node) {
    return node.getInputs().values().iterator().next().getPipeline();
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
}
