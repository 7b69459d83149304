package dev.weir.runner.translation;

import org.apache.beam.sdk.runners.TransformHierarchy;

/**
 * Translates one primitive transform, found by its URN in {@link PipelineTranslator}'s registry,
 * into nodes, stages and streams of the plan through a {@link TranslationContext}. Translators
 * are stateless (what must be kept between transforms lives in the context) and run once per
 * transform, on the thread that called {@code run()}.
 */
@FunctionalInterface
interface TransformTranslator {

  /**
   * Adds {@code node}'s transform to the plan and registers where its outputs are produced.
   *
   * @throws UnsupportedOperationException naming the transform and its URN
   *     ({@link TranslationContext#unsupported}) if this shape of it cannot run on Weir
   */
  void translate(TransformHierarchy.Node node, TranslationContext context);
}
