package dev.weir.runner.translation;

import dev.weir.runner.operators.WindowAssignOperator;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.transforms.windowing.Window;

/** {@code Window.Assign}: a {@link WindowAssignOperator} fused into the producing stage. */
final class WindowAssignTranslator implements TransformTranslator {
  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public void translate(TransformHierarchy.Node node, TranslationContext context) {
    if (!(node.getTransform() instanceof Window.Assign<?> assign)) {
      throw TranslationContext.unsupported(node, "not a Window.Assign: " + node.getTransform().getClass().getName());
    }
    TranslationContext.Producer from = context.producerOf(TranslationContext.mainInput(node), node);
    var windowFn = assign.getWindowFn();
    NodeSpec spec = context.fuse(from, node.getFullName(), "Window.Assign", () -> new WindowAssignOperator(windowFn));
    context.registerOutputs(node, from.stage(), spec);
  }
}
