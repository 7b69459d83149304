package dev.weir.runner.operators;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.TimestampCombiner;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.joda.time.Instant;

/**
 * The producer half of a lifted {@code Combine.perKey}: folds the elements of one bundle into one
 * accumulator per (key, window) and emits {@code KV<key, accumulator>} per pair when the bundle
 * finishes, so that only accumulators cross the shuffle. The consumer half
 * ({@link GroupByKeyOperator} with a combining reduce function) merges them.
 *
 * <p>Windowing: used only for non-merging WindowFns (the translator checks), so an element's
 * windows are final here. Each partial output carries the (key, window)'s output timestamp as the
 * strategy's {@link TimestampCombiner} computes it over the bundle's inputs, so the GroupByKey's
 * own combination of timestamps (and its watermark holds) come out as without lifting. Partial
 * outputs are emitted before the task forwards any watermark (bundles finish first), so they are
 * never late downstream.
 *
 * <p>Memory: at most one entry per distinct (key, window) of a bundle; bundles are bounded by
 * {@code maxBundleSize}, and the map is also flushed at {@value #MAX_ENTRIES} entries.
 * Allocation: one small entry object per new (key, window) per bundle, none per element of an
 * existing pair (the accumulator is updated in place by {@code addInput}).
 *
 * <p>Threading: confined to the task's container thread.
 */
@Internal
public final class PartialCombineOperator<K, InputT, AccumT> implements Operator {
  static final int MAX_ENTRIES = 10_000;

  /** Identity of a (key, window) pair: the key's structural value and the window. */
  private record PairId(Object structuralKey, BoundedWindow window) {}

  private static final class Partial<K, AccumT> {
    final K key;
    final BoundedWindow window;
    AccumT accumulator;
    Instant timestamp;

    Partial(K key, BoundedWindow window, AccumT accumulator, Instant timestamp) {
      this.key = key;
      this.window = window;
      this.accumulator = accumulator;
      this.timestamp = timestamp;
    }
  }

  private final Coder<K> keyCoder;
  private final CombineFn<InputT, AccumT, ?> combineFn;
  private final TimestampCombiner timestampCombiner;
  private final Map<PairId, Partial<K, AccumT>> partials = new HashMap<>();
  private OperatorContext context;
  private Receiver output;
  private long inputs;
  private long outputs;

  /**
   * @param keyCoder the key coder (its structural value identifies keys)
   * @param combineFn the user's combine function (cloned per task is not needed: CombineFns are
   *     used through their methods only and Beam requires them to be thread-compatible)
   * @param windowingStrategy the input's (non-merging) windowing strategy
   */
  @SuppressWarnings("unchecked")
  public PartialCombineOperator(Coder<K> keyCoder, CombineFn<InputT, AccumT, ?> combineFn,
      WindowingStrategy<?, ?> windowingStrategy) {
    this.keyCoder = keyCoder;
    this.combineFn = combineFn;
    this.timestampCombiner = windowingStrategy.getTimestampCombiner();
  }

  @Override
  public void open(OperatorContext context) {
    this.context = context;
    this.output = context.singleOutput();
  }

  @Override
  @SuppressWarnings("unchecked")
  public void accept(WindowedValue<?> element) {
    KV<K, InputT> kv = (KV<K, InputT>) element.getValue();
    Object structural = keyCoder.structuralValue(kv.getKey());
    inputs++;
    for (BoundedWindow window : element.getWindows()) {
      Instant ts = timestampCombiner.assign(window, element.getTimestamp());
      PairId id = new PairId(structural, window);
      Partial<K, AccumT> partial = partials.get(id);
      if (partial == null) {
        partial = new Partial<>(kv.getKey(), window, combineFn.createAccumulator(), ts);
        partials.put(id, partial);
      } else {
        partial.timestamp = timestampCombiner.combine(partial.timestamp, ts);
      }
      partial.accumulator = combineFn.addInput(partial.accumulator, kv.getValue());
    }
    if (partials.size() >= MAX_ENTRIES) {
      finishBundle();
    }
  }

  /** Whether accumulators wait for {@link #finishBundle} (e.g. of panes a processing-time firing emitted). */
  @Override
  public boolean inBundle() {
    return !partials.isEmpty();
  }

  @Override
  public void finishBundle() {
    if (partials.isEmpty()) {
      return;
    }
    for (Partial<K, AccumT> partial : partials.values()) {
      AccumT accumulator = partial.accumulator;
      accumulator = combineFn.compact(accumulator);
      output.accept(WindowedValues.of(KV.of(partial.key, accumulator), partial.timestamp, partial.window,
          PaneInfo.NO_FIRING));
      outputs++;
    }
    partials.clear();
  }

  /** Elements folded in so far (for tests). */
  public long inputCount() {
    return inputs;
  }

  /** Accumulators emitted so far (for tests). */
  public long outputCount() {
    return outputs;
  }

  @Override
  public String toString() {
    return "PartialCombine(" + Objects.toString(context == null ? null : context.stepName()) + ")";
  }
}
