package dev.weir.runner.translation;

import dev.weir.runner.operators.keyed.GroupByKeyOperator;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowingStrategy;

/**
 * {@code GroupByKey}: a new stage of {@code --parallelism} partitions behind a SHUFFLE by the
 * input's key, entered by a {@link GroupByKeyOperator} (runners-core's GroupAlsoByWindow over
 * Weir's state). The input must be KV-coded: its key coder's encoding routes and groups keys.
 */
final class GroupByKeyTranslator implements TransformTranslator {
  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public void translate(TransformHierarchy.Node node, TranslationContext context) {
    PCollection<?> input = TranslationContext.mainInput(node);
    if (!(input.getCoder() instanceof KvCoder<?, ?> kvCoder)) {
      throw TranslationContext.unsupported(node, "GroupByKey input coder is not a KvCoder: " + input.getCoder());
    }
    TranslationContext.Producer from = context.producerOf(input, node);
    TranslationContext.Cut cut = context.cutShuffle(from, kvCoder.getKeyCoder(), node);
    Coder keyCoder = kvCoder.getKeyCoder();
    Coder valueCoder = kvCoder.getValueCoder();
    WindowingStrategy<?, ?> windowing = input.getWindowingStrategy();
    TupleTag outTag = TranslationContext.singleOutputTag(node);
    NodeSpec gbk = cut.enter(node.getFullName(), GroupByKeyOperator.nodeKind("GroupByKey", windowing),
        () -> GroupByKeyOperator.grouping(keyCoder, valueCoder, windowing, (TupleTag<KV<Object, Iterable<Object>>>) outTag));
    gbk.describeState(StateSchemas.grouping(keyCoder, valueCoder, windowing));
    context.registerOutputs(node, cut.stage(), gbk);
  }
}
