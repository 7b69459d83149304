/**
 * Translation of a Beam pipeline into a {@link dev.weir.runner.translation.JobPlan}: stages of
 * fused operators joined by streams, one {@link dev.weir.runner.translation.TransformTranslator}
 * per URN in {@link dev.weir.runner.translation.PipelineTranslator}'s registry over a
 * {@link dev.weir.runner.translation.TranslationContext} (fuse, cut at shuffles and forwards,
 * broadcast views). An unsupported transform fails here, naming itself and its URN.
 */
package dev.weir.runner.translation;
