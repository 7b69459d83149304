package dev.weir.runner.translation;

import dev.weir.runner.operators.SerializedCopies;
import dev.weir.runner.operators.keyed.SplittableProcessOperator;
import java.util.HashMap;
import java.util.Map;
import org.apache.beam.runners.core.SplittableParDoViaKeyedWorkItems;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.transforms.reflect.DoFnSignature;
import org.apache.beam.sdk.transforms.reflect.DoFnSignatures;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowingStrategy;

/**
 * The {@code ProcessElements} of an unbounded splittable DoFn (or of a bounded one taking a
 * {@code BundleFinalizer}) starts a keyed stage of {@code --parallelism} partitions, fed by the
 * SHUFFLE its {@code GBKIntoKeyedWorkItems} deferred ({@link KeyedWorkItemsTranslator}, on the
 * unique key of each element and restriction) and one BROADCAST stream per side input, running a
 * {@link SplittableProcessOperator}; one call's outputs and duration are bounded by
 * {@code --maxBundleSize} and {@code --maxBundleTimeMs}. Not supported: a DoFn taking a
 * {@code BundleFinalizer} in {@code @StartBundle} or {@code @FinishBundle} (runners-core's
 * {@code ProcessFn} offers none there).
 */
final class SplittableProcessTranslator implements TransformTranslator {
  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public void translate(TransformHierarchy.Node node, TranslationContext context) {
    if (!(node.getTransform() instanceof SplittableParDoViaKeyedWorkItems.ProcessElements<?, ?, ?, ?, ?> process)) {
      throw TranslationContext.unsupported(node, "no translation for " + node.getTransform().getClass().getName());
    }
    PCollection<?> input = TranslationContext.mainInput(node);
    KeyedWorkItemsTranslator.Deferred keyed = context.keyedWorkItemsOf(input);
    if (keyed == null) {
      throw TranslationContext.unsupported(node, "its input does not come from GBKIntoKeyedWorkItems");
    }
    DoFnSignature signature = DoFnSignatures.getSignature(process.getFn().getClass());
    for (DoFnSignature.BundleMethod method : new DoFnSignature.BundleMethod[] {signature.startBundle(),
        signature.finishBundle()}) {
      if (method != null && method.extraParameters().stream()
          .anyMatch(p -> p instanceof DoFnSignature.Parameter.BundleFinalizerParameter)) {
        throw TranslationContext.unsupported(node, "splittable DoFn " + process.getFn().getClass().getName()
            + " takes a BundleFinalizer in " + method.targetMethod().getName() + " (a @StartBundle/@FinishBundle "
            + "method); splittable DoFns get one only in @ProcessElement");
      }
    }
    Map<TupleTag<?>, Coder<?>> outputCoders = new HashMap<>();
    WindowingStrategy<?, ?> windowing = null;
    for (Map.Entry<TupleTag<?>, PCollection<?>> e : node.getOutputs().entrySet()) {
      outputCoders.put(e.getKey(), e.getValue().getCoder());
      windowing = e.getValue().getWindowingStrategy();
    }
    if (windowing == null) {
      throw TranslationContext.unsupported(node, "no outputs");
    }
    WindowingStrategy<?, ?> elementWindowing = windowing;
    Coder inputCoder = input.getCoder();
    SplittableParDoViaKeyedWorkItems.ProcessElements transform = process;
    int maxOutputs = context.settings().maxBundleSize();
    org.joda.time.Duration maxDuration = org.joda.time.Duration.millis(context.settings().maxBundleTimeMs());
    TranslationContext.Cut cut = context.cutShuffle(keyed.from(), keyed.keyCoder(), keyed.node());
    SerializedCopies fn = new SerializedCopies<>(process.getFn()); // one serialized form for all tasks
    NodeSpec spec = cut.enter(node.getFullName(), "SplittableProcess", () -> new SplittableProcessOperator(transform,
        fn, inputCoder, outputCoders, elementWindowing, maxOutputs, maxDuration));
    spec.describeState(StateSchemas.splittable(keyed.keyCoder(), inputCoder, elementWindowing));
    context.broadcastViews(node, cut.stage(), spec, process.getSideInputs());
    context.registerOutputs(node, cut.stage(), spec);
  }
}
