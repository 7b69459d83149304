package dev.weir.runner.translation;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.reflect.DoFnSignature;
import org.apache.beam.sdk.transforms.reflect.DoFnSignatures;
import org.apache.beam.sdk.values.WindowingStrategy;

/**
 * The state schema of each kind of node with keyed state ({@link NodeSpec#stateSchema()}): one line
 * naming every coder whose bytes the node's state cells hold, so that a restore can tell, by
 * comparing lines, whether the job being started reads a checkpoint's state with the coders that
 * wrote it. Coders are described by {@link NodeSpec#describeCoder}; a custom coder without a
 * {@code toString()} is known by its class only, so a changed encoding under the same class and
 * {@code toString()} is not seen here (the object cache's readable-state check catches what it can).
 *
 * <p>Threading: stateless; translation thread.
 */
final class StateSchemas {
  private StateSchemas() {}

  /** A GroupByKey's: its key, window and value coders. */
  static String grouping(Coder<?> keyCoder, Coder<?> valueCoder, WindowingStrategy<?, ?> windowing) {
    return "key " + NodeSpec.describeCoder(keyCoder) + ", windows " + windows(windowing)
        + ", values " + NodeSpec.describeCoder(valueCoder);
  }

  /** A combining GroupByKey's (or a lifted combine's merge): its key, window and accumulator coders. */
  static String combining(Coder<?> keyCoder, Coder<?> accumulatorCoder, WindowingStrategy<?, ?> windowing) {
    return "key " + NodeSpec.describeCoder(keyCoder) + ", windows " + windows(windowing)
        + ", accumulators " + NodeSpec.describeCoder(accumulatorCoder);
  }

  /** A splittable DoFn's process step: its key, window and element coders (restrictions ride in elements). */
  static String splittable(Coder<?> keyCoder, Coder<?> elementCoder, WindowingStrategy<?, ?> windowing) {
    return "key " + NodeSpec.describeCoder(keyCoder) + ", windows " + windows(windowing)
        + ", elements " + NodeSpec.describeCoder(elementCoder);
  }

  /**
   * A stateful DoFn's: its key and window coders, then each {@code @StateId} with its kind and
   * coders, and each timer and timer family id (in name order).
   */
  static String statefulParDo(Coder<?> keyCoder, WindowingStrategy<?, ?> windowing, DoFn<?, ?> fn) {
    DoFnSignature signature = DoFnSignatures.getSignature(fn.getClass());
    List<String> parts = new ArrayList<>();
    parts.add("key " + NodeSpec.describeCoder(keyCoder));
    parts.add("windows " + windows(windowing));
    for (Map.Entry<String, DoFnSignature.StateDeclaration> e : new java.util.TreeMap<>(
        signature.stateDeclarations()).entrySet()) {
      StateSpec<?> spec = DoFnSignatures.getStateSpecOrThrow(e.getValue(), fn);
      parts.add(e.getKey() + "=" + spec.match(new Describer()));
    }
    List<String> timers = new ArrayList<>(signature.timerDeclarations().keySet());
    timers.addAll(signature.timerFamilyDeclarations().keySet());
    java.util.Collections.sort(timers);
    if (!timers.isEmpty()) {
      parts.add("timers " + String.join(" ", timers));
    }
    return String.join(", ", parts);
  }

  private static String windows(WindowingStrategy<?, ?> windowing) {
    return NodeSpec.describeCoder(windowing.getWindowFn().windowCoder());
  }

  /** One state spec as {@code kind(coders)}. */
  private static final class Describer implements StateSpec.Cases<String> {
    @Override
    public String dispatchValue(Coder<?> valueCoder) {
      return "value(" + NodeSpec.describeCoder(valueCoder) + ")";
    }

    @Override
    public String dispatchBag(Coder<?> elementCoder) {
      return "bag(" + NodeSpec.describeCoder(elementCoder) + ")";
    }

    @Override
    public String dispatchOrderedList(Coder<?> elementCoder) {
      return "orderedList(" + NodeSpec.describeCoder(elementCoder) + ")";
    }

    @Override
    public String dispatchCombining(Combine.CombineFn<?, ?, ?> combineFn, Coder<?> accumCoder) {
      return "combining(" + NodeSpec.describeCoder(accumCoder) + ")";
    }

    @Override
    public String dispatchMap(Coder<?> keyCoder, Coder<?> valueCoder) {
      return "map(" + NodeSpec.describeCoder(keyCoder) + ", " + NodeSpec.describeCoder(valueCoder) + ")";
    }

    @Override
    public String dispatchSet(Coder<?> elementCoder) {
      return "set(" + NodeSpec.describeCoder(elementCoder) + ")";
    }

    @Override
    public String dispatchMultimap(Coder<?> keyCoder, Coder<?> valueCoder) {
      return "multimap(" + NodeSpec.describeCoder(keyCoder) + ", " + NodeSpec.describeCoder(valueCoder) + ")";
    }
  }
}
