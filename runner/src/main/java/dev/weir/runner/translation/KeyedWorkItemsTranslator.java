package dev.weir.runner.translation;

import org.apache.beam.runners.core.SplittableParDoViaKeyedWorkItems;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.values.PCollection;

/**
 * {@code GBKIntoKeyedWorkItems} (from runners-core's {@link SplittableParDoViaKeyedWorkItems}
 * override of a splittable DoFn) becomes the SHUFFLE stream in front of its
 * {@code ProcessElements}. Nothing is added to the plan here: the work items exist only inside
 * the consuming operator, so the shuffle is cut when {@link SplittableProcessTranslator} visits
 * the {@code ProcessElements}; this records what it needs.
 */
final class KeyedWorkItemsTranslator implements TransformTranslator {

  /**
   * A shuffle waiting for its {@code ProcessElements}.
   *
   * @param from where the keyed elements are produced
   * @param keyCoder the coder of their keys
   * @param node the {@code GBKIntoKeyedWorkItems} (the stream is named after it)
   */
  record Deferred(TranslationContext.Producer from, Coder<?> keyCoder, TransformHierarchy.Node node) {}

  @Override
  public void translate(TransformHierarchy.Node node, TranslationContext context) {
    PCollection<?> input = TranslationContext.mainInput(node);
    if (!(input.getCoder() instanceof KvCoder<?, ?> kvCoder)) {
      throw TranslationContext.unsupported(node, "GBKIntoKeyedWorkItems input coder is not a KvCoder: "
          + input.getCoder());
    }
    TranslationContext.Producer from = context.producerOf(input, node);
    for (PCollection<?> out : node.getOutputs().values()) {
      context.deferKeyedWorkItems(out, new Deferred(from, kvCoder.getKeyCoder(), node));
    }
  }
}
