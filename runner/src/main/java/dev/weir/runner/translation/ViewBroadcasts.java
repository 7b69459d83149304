package dev.weir.runner.translation;

import dev.weir.runner.operators.keyed.GroupByKeyOperator;
import dev.weir.runner.operators.VoidKeyOperator;
import dev.weir.runner.sideinput.SideInputs;
import dev.weir.runner.translation.TranslationContext.Cut;
import dev.weir.runner.translation.TranslationContext.Producer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.IterableCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.VoidCoder;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowingStrategy;

/**
 * Side inputs: feeds each view a DoFn reads to its node on a BROADCAST stream, from the stage
 * producing the view's PCollection ({@code View.CreatePCollectionView} itself translates to
 * nothing, see {@link CreateViewTranslator}).
 *
 * <p>For an untriggered view (the default trigger), elements are broadcast as they come and a
 * window's view is ready when the side-input watermark passes it. For a triggered view, as on
 * Beam's Direct runner: the elements are keyed by {@code null} and grouped by one GroupByKey (a
 * stage of one partition) under the view's own windowing strategy, so that each trigger firing
 * becomes one pane ({@code KV<Void, Iterable<T>>}) that replaces the window's view in the
 * consumers' {@link SideInputs} ("the value from the latest trigger firing"). That grouping is
 * built once per PCollection, on first use.
 *
 * <p>Threading: part of one {@link TranslationContext}.
 */
final class ViewBroadcasts {
  /** Output tags of a triggered view's keying and pane-grouping nodes (internal to the plan). */
  private static final TupleTag<Object> VIEW_KEYED_TAG = new TupleTag<>("weir-view-keyed");
  private static final TupleTag<Object> VIEW_PANES_TAG = new TupleTag<>("weir-view-panes");

  private final TranslationContext context;
  /** Per triggered view's PCollection: where its panes are produced. */
  private final Map<PCollection<?>, Producer> viewPanes = new HashMap<>();

  ViewBroadcasts(TranslationContext context) {
    this.context = context;
  }

  /** Feeds view {@code i} of {@code views} to {@code consumer} as its side input {@code i}. */
  void broadcast(TransformHierarchy.Node node, StagePlan stage, NodeSpec consumer, List<PCollectionView<?>> views) {
    for (int i = 0; i < views.size(); i++) {
      StreamPlan side = context.feed(producerOf(views.get(i), node), StreamPlan.Kind.BROADCAST, stage, null, node);
      stage.addSideInput(side, consumer.index(), i);
    }
  }

  /** Where the broadcast stream of {@code view} is fed from (see the class comment). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private Producer producerOf(PCollectionView<?> view, TransformHierarchy.Node node) {
    PCollection<?> input = view.getPCollection();
    Producer from = context.producerOf(input, node);
    if (!SideInputs.isTriggered(input.getWindowingStrategy())) {
      return from;
    }
    Producer panes = viewPanes.get(input);
    if (panes != null) {
      return panes;
    }
    String name = input.getName() + "/WeirViewPanes";
    NodeSpec keying = context.fuse(from, name + "/KeyByNull", "VoidKey", VoidKeyOperator::new);
    keying.declareOutput(VIEW_KEYED_TAG);
    Producer keyed = new Producer(from.stage(), keying.index(), VIEW_KEYED_TAG);
    Coder elementCoder = input.getCoder();
    WindowingStrategy<?, ?> windowing = input.getWindowingStrategy();
    context.declareElements(keyed, KvCoder.of(VoidCoder.of(), elementCoder), windowing);
    Cut cut = context.cutShuffle(keyed, VoidCoder.of(), 1, node);
    NodeSpec group = cut.enter(name + "/GroupByKey", GroupByKeyOperator.nodeKind("GroupByKey", windowing),
        () -> GroupByKeyOperator.grouping(VoidCoder.of(), elementCoder, windowing, (TupleTag) VIEW_PANES_TAG));
    group.declareOutput(VIEW_PANES_TAG);
    panes = new Producer(cut.stage(), group.index(), VIEW_PANES_TAG);
    context.declareElements(panes, KvCoder.of(VoidCoder.of(), IterableCoder.of(elementCoder)), windowing);
    viewPanes.put(input, panes);
    return panes;
  }
}
