package dev.weir.runner.translation;

import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.testing.TestStream;

/**
 * Beam's {@code TestStream}: a source stage of one partition replaying its events; the executor
 * then runs the whole job on a manual processing-time clock ({@link JobPlan#hasTestStream()}).
 */
final class TestStreamTranslator implements TransformTranslator {
  @Override
  public void translate(TransformHierarchy.Node node, TranslationContext context) {
    if (!(node.getTransform() instanceof TestStream<?> testStream)) {
      throw TranslationContext.unsupported(node, "not a TestStream: " + node.getTransform().getClass().getName());
    }
    context.sourceStage(node, new SourceSpec.Test(testStream.getEvents()), "TestStream");
  }
}
