package dev.weir.runner.operators.keyed;

import dev.weir.runner.state.KeyContext;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * Work a {@link GroupByKeyOperator} has not yet handed to runners-core, grouped by key: the
 * elements of its open bundle, or the ready timers of one firing. At a drain each key gets one
 * {@code KeyedWorkItem} holding all of its items, in arrival order, so {@code ReduceFnRunner} reads
 * the key's window set, trigger state and holds once per key and drain instead of once per item.
 *
 * <h2>Why</h2>
 *
 * For merging windows runners-core's {@code MergingActiveWindowSet} copies the key's whole window
 * map when it is built and checks it when it is persisted; with a hot key of many windows that copy
 * was about 70% of the bytes allocated by Nexmark Q4 on Weir (allocation profile at 1,000,000
 * events). Grouping a bundle's elements per key is what Beam's Direct runner does too (a
 * {@code KeyedWorkItem} per key and bundle); a per-element runner such as Flink's pays the copy per
 * element.
 *
 * <h2>Order and cost</h2>
 *
 * Elements of one key keep their arrival order; keys are drained in the order of their first
 * item. Keys are {@link KeyContext}s compared by identity: if a key's context was dropped from the
 * operator's cache and rebuilt while the key had buffered items, the key appears twice, each with
 * its part of the items, still drained in arrival order. Per item: one identity-hash lookup and an
 * {@code ArrayList} append; the per-key lists are reused across drains.
 *
 * <p>Threading: the operator's container thread only.
 *
 * @param <K> the key type
 * @param <T> the item type: {@code WindowedValue<V>} elements or {@code TimerData}
 */
final class KeyedBatch<K, T> {
  /** Per-key lists, keyed by context identity ({@link KeyContext} keeps {@code Object.equals}). */
  private final HashMap<KeyContext<K>, ArrayList<T>> byKey = new HashMap<>();
  /** Keys in the order of their first buffered element. */
  private final ArrayList<KeyContext<K>> order = new ArrayList<>();
  /** Lists kept for reuse at most: a flush over more keys allocates the rest. */
  private static final int MAX_SPARE_LISTS = 1024;
  /** Emptied lists for the next flush's keys. */
  private final ArrayDeque<ArrayList<T>> spare = new ArrayDeque<>();
  private int size;
  private long minTimestampMs = Long.MAX_VALUE;

  /** Buffers {@code item} for {@code key}; {@code timestampMs} (epoch ms) counts for {@link #minTimestampMs}. */
  void add(KeyContext<K> key, T item, long timestampMs) {
    ArrayList<T> items = byKey.get(key);
    if (items == null) {
      items = spare.isEmpty() ? new ArrayList<>() : spare.poll();
      byKey.put(key, items);
      order.add(key);
    }
    items.add(item);
    size++;
    if (timestampMs < minTimestampMs) {
      minTimestampMs = timestampMs;
    }
  }

  /** Items buffered. */
  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /**
   * The earliest timestamp given to {@link #add} since the last drain, in epoch ms, or
   * {@link Long#MAX_VALUE} when empty. For elements: a lower bound of the watermark holds
   * runners-core will set for them (a hold is never before its element's timestamp).
   */
  long minTimestampMs() {
    return minTimestampMs;
  }

  /**
   * Hands every key with its items to {@code process}, in first-arrival order, and empties the
   * batch. The list is only valid during the call (it is reused). The batch is emptied before the
   * first call, so items {@code process} causes to be added (none for a GroupByKey) form the next
   * batch.
   */
  void drain(BiConsumer<KeyContext<K>, List<T>> process) {
    if (size == 0) {
      return;
    }
    int keys = order.size();
    @SuppressWarnings("unchecked")
    KeyContext<K>[] drainedKeys = order.toArray(new KeyContext[keys]);
    @SuppressWarnings("unchecked")
    ArrayList<T>[] lists = new ArrayList[keys];
    for (int i = 0; i < keys; i++) {
      lists[i] = byKey.get(drainedKeys[i]);
    }
    byKey.clear();
    order.clear();
    size = 0;
    minTimestampMs = Long.MAX_VALUE;
    for (int i = 0; i < keys; i++) {
      try {
        process.accept(drainedKeys[i], lists[i]);
      } finally {
        lists[i].clear();
        if (spare.size() < MAX_SPARE_LISTS) {
          spare.push(lists[i]);
        }
      }
    }
  }
}
