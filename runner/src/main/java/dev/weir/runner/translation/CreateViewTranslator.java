package dev.weir.runner.translation;

import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.values.PCollection;

/**
 * {@code View.CreatePCollectionView}: nothing runs here. The view's data is its PCollection, which
 * each consumer's translator broadcasts to it ({@link ViewBroadcasts}); the view's outputs are
 * recorded as produced where that PCollection is.
 */
final class CreateViewTranslator implements TransformTranslator {
  @Override
  public void translate(TransformHierarchy.Node node, TranslationContext context) {
    TranslationContext.Producer p = context.producerOf(TranslationContext.mainInput(node), node);
    for (PCollection<?> out : node.getOutputs().values()) {
      context.alias(out, p);
    }
  }
}
