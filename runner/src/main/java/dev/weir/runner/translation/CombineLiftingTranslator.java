package dev.weir.runner.translation;

import dev.weir.runner.operators.AccumulatorMergingFn;
import dev.weir.runner.operators.keyed.GroupByKeyOperator;
import dev.weir.runner.operators.PartialCombineOperator;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowingStrategy;

/**
 * Combiner lifting, for the composite {@code Combine.perKey}: a partial combine fused into the
 * producing stage (one accumulator per key and window per bundle), a SHUFFLE of accumulators, and
 * a GroupByKey whose reduce function merges accumulators. Only where that is equivalent: a plain
 * {@link Combine.CombineFn} (no context, no side inputs), a non-merging WindowFn, the default
 * trigger, and an accumulator coder. A data-driven trigger (Nexmark Q6's {@code
 * Repeatedly(AfterPane.elementCountAtLeast(1))}) counts elements arriving at the GroupByKey, and
 * folding a bundle into one accumulator first would fire fewer panes than Direct and Flink do in
 * streaming (Flink lifts only in batch).
 *
 * <p>Where lifting is not equivalent but the CombineFn is still plain and has an accumulator coder
 * (merging windows such as sessions, or any trigger), the composite becomes a <em>combining
 * GroupByKey</em>: the raw inputs are shuffled as for a GroupByKey, and the GroupByKey's reduce
 * function adds each input to one accumulator per key and window ({@code SystemReduceFn.combining},
 * merging accumulators when windows merge) instead of buffering every input in a bag for
 * {@code Combine.GroupedValues} to fold when the pane fires. Every element still reaches the
 * trigger one at a time, so panes and their contents are those of the expansion; the state per
 * window is one accumulator (Nexmark Q11's session counts: one long per session instead of a bag of
 * bids). Otherwise (a CombineFn with context or side inputs, no accumulator coder) the composite is
 * expanded as usual (GroupByKey + Combine.GroupedValues) and its primitives are translated one by
 * one.
 */
final class CombineLiftingTranslator {
  /** Output tag of partial-combine nodes (internal to a stage). */
  private static final TupleTag<Object> PARTIAL_TAG = new TupleTag<>("weir-partial-combine");

  private CombineLiftingTranslator() {}

  /** Translates the {@code Combine.perKey} at {@code node} lifted, if it may be; returns whether it did. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static boolean tryTranslate(TransformHierarchy.Node node, TranslationContext context) {
    if (!(node.getTransform() instanceof Combine.PerKey<?, ?, ?> perKey) || !perKey.getSideInputs().isEmpty()
        || !(perKey.getFn() instanceof Combine.CombineFn<?, ?, ?> fn)
        || node.getInputs().size() != 1 || node.getOutputs().size() != 1) {
      return false;
    }
    PCollection<?> input = node.getInputs().values().iterator().next();
    WindowingStrategy<?, ?> windowing = input.getWindowingStrategy();
    if (!(input.getCoder() instanceof KvCoder<?, ?> kvCoder)) {
      return false;
    }
    Coder accumulatorCoder;
    try {
      accumulatorCoder = ((Combine.CombineFn) fn).getAccumulatorCoder(input.getPipeline().getCoderRegistry(),
          kvCoder.getValueCoder());
    } catch (Exception e) {
      return false; // no accumulator coder: cannot shuffle or store accumulators
    }
    TranslationContext.Producer from = context.producerOrNull(input);
    if (from == null) {
      return false;
    }
    Coder keyCoder = kvCoder.getKeyCoder();
    Combine.CombineFn combineFn = fn;
    if (!windowing.getWindowFn().isNonMerging() || !(windowing.getTrigger() instanceof DefaultTrigger)) {
      translateCombiningGroupByKey(node, context, from, kvCoder, combineFn, accumulatorCoder, windowing);
      return true;
    }
    NodeSpec partial = context.fuse(from, node.getFullName() + "/PartialCombine", "PartialCombine",
        () -> new PartialCombineOperator(keyCoder, combineFn, windowing));
    partial.declareOutput(PARTIAL_TAG);
    TranslationContext.Producer partials = new TranslationContext.Producer(from.stage(), partial.index(), PARTIAL_TAG);
    context.declareElements(partials, org.apache.beam.sdk.coders.KvCoder.of(keyCoder, accumulatorCoder), windowing);
    TranslationContext.Cut cut = context.cutShuffle(partials, keyCoder, node);
    TupleTag outTag = TranslationContext.singleOutputTag(node);
    AccumulatorMergingFn merging = new AccumulatorMergingFn(combineFn, accumulatorCoder);
    NodeSpec merge = cut.enter(node.getFullName(), GroupByKeyOperator.nodeKind("CombineMerge", windowing),
        () -> GroupByKeyOperator.combining(keyCoder, accumulatorCoder, accumulatorCoder, merging, windowing, outTag));
    merge.describeState(StateSchemas.combining(keyCoder, accumulatorCoder, windowing));
    context.registerOutputs(node, cut.stage(), merge);
    return true;
  }

  /** A shuffle of the raw inputs into a GroupByKey that combines them into one accumulator per key and window. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static void translateCombiningGroupByKey(TransformHierarchy.Node node, TranslationContext context,
      TranslationContext.Producer from, KvCoder kvCoder, Combine.CombineFn combineFn, Coder accumulatorCoder,
      WindowingStrategy<?, ?> windowing) {
    Coder keyCoder = kvCoder.getKeyCoder();
    TranslationContext.Cut cut = context.cutShuffle(from, keyCoder, node);
    TupleTag outTag = TranslationContext.singleOutputTag(node);
    NodeSpec group = cut.enter(node.getFullName(), GroupByKeyOperator.nodeKind("CombiningGroupByKey", windowing),
        () -> GroupByKeyOperator.combining(keyCoder, kvCoder.getValueCoder(), accumulatorCoder, combineFn, windowing,
            outTag));
    group.describeState(StateSchemas.combining(keyCoder, accumulatorCoder, windowing));
    context.registerOutputs(node, cut.stage(), group);
  }
}
