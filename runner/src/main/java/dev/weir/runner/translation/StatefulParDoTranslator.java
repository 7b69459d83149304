package dev.weir.runner.translation;

import org.apache.beam.sdk.transforms.reflect.DoFnSignature;
import org.apache.beam.sdk.transforms.reflect.DoFnSignatures;
import dev.weir.runner.operators.SerializedCopies;
import dev.weir.runner.operators.keyed.StatefulParDoOperator;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.runners.TransformHierarchy;

/**
 * A stateful ParDo (state, timers, {@code @OnWindowExpiration} or {@code @RequiresTimeSortedInput};
 * chosen by {@link ParDoTranslator}) starts a keyed stage of {@code --parallelism} partitions fed by
 * a SHUFFLE partitioned by the input's key, so that every key's state and timers live in one task,
 * entered by a {@link StatefulParDoOperator}; its side inputs, if any, arrive on one BROADCAST
 * stream per view, as for a stateless ParDo. Not supported: an input that is not KV-coded, and
 * merging windows. With {@code --containerThreadPoolSize} above 0 and {@code --concurrentParDos}
 * selecting it (or unset), one without side inputs, {@code @RequiresTimeSortedInput} or
 * {@code @RequiresStableInput} runs in the operator's concurrent mode (in key order).
 */
final class StatefulParDoTranslator {
  private StatefulParDoTranslator() {}

  /** Translates the stateful ParDo at {@code node}, whose parts are {@code parts}, fed by {@code from}. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static void translate(TransformHierarchy.Node node, TranslationContext context, ParDoParts parts,
      TranslationContext.Producer from) {
    DoFnSignature signature = DoFnSignatures.getSignature(parts.fn().getClass());
    boolean concurrent = context.runsConcurrently(node, !parts.views().isEmpty() ? "stateful DoFn with side inputs"
        : signature.processElement().requiresTimeSortedInput() ? "@RequiresTimeSortedInput"
        : signature.processElement().requiresStableInput() ? "@RequiresStableInput" : null);
    if (!(parts.inputCoder() instanceof KvCoder<?, ?> kvCoder)) {
      throw TranslationContext.unsupported(node, "stateful ParDo input coder is not a KvCoder: " + parts.inputCoder());
    }
    if (!parts.windowing().getWindowFn().isNonMerging()) {
      throw TranslationContext.unsupported(node, "stateful ParDo over merging windows ("
          + parts.windowing().getWindowFn() + ")");
    }
    TranslationContext.Cut cut = context.cutShuffle(from, kvCoder.getKeyCoder(), node);
    KvCoder kv = kvCoder;
    SerializedCopies copies = new SerializedCopies<>(parts.fn()); // one serialized form for all tasks
    NodeSpec spec = cut.enter(node.getFullName(), concurrent ? "StatefulParDo+Concurrent" : "StatefulParDo",
        () -> ParDoTranslator.stable(signature, parts, new StatefulParDoOperator(copies, parts.mainTag(),
            parts.additionalTags(), kv, parts.outputCoders(), parts.windowing(), parts.schema(),
            parts.sideInputMapping(), parts.views(), concurrent)));
    spec.describeState(StateSchemas.statefulParDo(kvCoder.getKeyCoder(), parts.windowing(), parts.fn()));
    context.broadcastViews(node, cut.stage(), spec, parts.views());
    context.registerOutputs(node, cut.stage(), spec);
  }
}
