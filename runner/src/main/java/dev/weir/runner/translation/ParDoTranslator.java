package dev.weir.runner.translation;

import dev.weir.runner.operators.ConcurrentParDoOperator;
import dev.weir.runner.operators.Operator;
import dev.weir.runner.operators.ParDoOperator;
import dev.weir.runner.operators.SerializedCopies;
import dev.weir.runner.operators.StableInputOperator;
import java.util.List;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.reflect.DoFnSignature;
import org.apache.beam.sdk.transforms.reflect.DoFnSignatures;

/**
 * {@code ParDo.MultiOutput}. A DoFn using state, timers or {@code @OnWindowExpiration}, or whose
 * {@code @ProcessElement} is {@code @RequiresTimeSortedInput} (sorting needs keyed state), goes to
 * {@link StatefulParDoTranslator}. Otherwise a {@link ParDoOperator} is fused into the producing
 * stage; with side inputs it instead starts a new stage fed by a FORWARD stream (main input) and
 * one BROADCAST stream per view. Cutting there keeps the producer stages independent of the views
 * (no stage waits for its own output), and the pushed-back elements' hold only holds what is
 * downstream of this ParDo. A splittable DoFn must arrive expanded (see {@code WeirRunner}'s
 * overrides): one that does not fails here.
 *
 * <p>With {@code --containerThreadPoolSize} above 0, a stateless ParDo without side inputs or
 * {@code @RequiresStableInput} that {@code --concurrentParDos} selects (all, if unset) becomes a
 * {@link ConcurrentParDoOperator} instead, fused the same way (stateful ones: see
 * {@link StatefulParDoTranslator}).
 */
final class ParDoTranslator implements TransformTranslator {
  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public void translate(TransformHierarchy.Node node, TranslationContext context) {
    if (!(node.getTransform() instanceof ParDo.MultiOutput<?, ?> parDo)) {
      throw TranslationContext.unsupported(node, "no translation for " + node.getTransform().getClass().getName());
    }
    DoFn<?, ?> fn = parDo.getFn();
    DoFnSignature signature = DoFnSignatures.getSignature(fn.getClass());
    if (signature.processElement().isSplittable()) {
      throw TranslationContext.unsupported(node, "splittable DoFn reached translation unexpanded (WeirRunner runs "
          + "SDFs through SplittableParDo's expansion)");
    }
    ParDoParts parts = ParDoParts.of(node, parDo);
    TranslationContext.Producer from = context.producerOf(parts.input(), node);
    if (signature.usesState() || signature.usesTimers() || signature.onWindowExpiration() != null
        || signature.processElement().requiresTimeSortedInput()) {
      StatefulParDoTranslator.translate(node, context, parts, from);
      return;
    }
    SerializedCopies copies = new SerializedCopies<>(parts.fn()); // one serialized form for all tasks
    if (context.runsConcurrently(node, !parts.views().isEmpty() ? "has side inputs"
        : signature.processElement().requiresStableInput() ? "@RequiresStableInput" : null)) {
      NodeSpec spec = context.fuse(from, node.getFullName(), "ParDo+Concurrent", () -> new ConcurrentParDoOperator(
          copies, parts.mainTag(), parts.additionalTags(), parts.inputCoder(), parts.outputCoders(), parts.windowing(),
          parts.schema(), parts.sideInputMapping()));
      context.registerOutputs(node, from.stage(), spec);
      return;
    }
    if (parts.views().isEmpty()) {
      NodeSpec spec = context.fuse(from, node.getFullName(), "ParDo", () -> stable(signature, parts,
          new ParDoOperator(copies, parts.mainTag(), parts.additionalTags(), parts.inputCoder(),
              parts.outputCoders(), parts.windowing(), parts.schema(), parts.sideInputMapping(), List.of())));
      context.registerOutputs(node, from.stage(), spec);
      return;
    }
    TranslationContext.Cut cut = context.cutForward(from, node);
    NodeSpec spec = cut.enter(node.getFullName(), "ParDo+SideInputs", () -> stable(signature, parts,
        new ParDoOperator(copies, parts.mainTag(), parts.additionalTags(), parts.inputCoder(),
            parts.outputCoders(), parts.windowing(), parts.schema(), parts.sideInputMapping(), parts.views())));
    context.broadcastViews(node, cut.stage(), spec, parts.views());
    context.registerOutputs(node, cut.stage(), spec);
  }

  /**
   * The DoFn's operator, wrapped in a {@link StableInputOperator} if its {@code @ProcessElement} is
   * {@code @RequiresStableInput} (its input is then held until a checkpoint containing it completed).
   */
  static Operator stable(DoFnSignature signature, ParDoParts parts, Operator operator) {
    if (!signature.processElement().requiresStableInput()) {
      return operator;
    }
    return new StableInputOperator(operator, parts.inputCoder(), parts.windowing().getWindowFn().windowCoder());
  }
}
