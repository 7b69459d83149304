package dev.weir.runner.translation;

import org.apache.beam.sdk.runners.TransformHierarchy;

/** Beam's {@code Impulse}: a source stage of one partition emitting one empty byte array. */
final class ImpulseTranslator implements TransformTranslator {
  @Override
  public void translate(TransformHierarchy.Node node, TranslationContext context) {
    context.sourceStage(node, new SourceSpec.Impulse(), "Impulse");
  }
}
