package dev.weir.runner.state;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.beam.sdk.annotations.Internal;

/**
 * A keyed operator's recently used {@link KeyContext}s, bounded: at most {@code capacity} keys,
 * least recently used dropped first. A key context is only a handle (key object, state view,
 * pending processing-time timer count) over cells and timers that live in the store, so dropping
 * one loses nothing; keeping the hot ones saves re-creating the key's state view per element.
 * Event-time timers do not pin their key: a fired timer's key is found again from its bytes.
 *
 * <p>Threading: confined to the task's container thread.
 */
@Internal
public final class KeyContexts<K> {
  /**
   * Default bound, in keys per operator instance. A kept context pins its key's state view (state
   * objects, cell keys, window namespaces: hundreds of objects under merging windows); kept for
   * seconds, they outlive young collections, which copy them, and then die in the old generation,
   * which grows the heap. 4,096 made Nexmark Q11's young pauses ~75 ms each and its peak RSS
   * 2.2 GB; 256 keeps the contexts of a bundle's hot keys (runner/BENCHMARKS.md, issue 14,
   * session 12).
   */
  public static final int DEFAULT_CAPACITY = 256;

  private final LinkedHashMap<ByteKey, KeyContext<K>> map;

  /** At most {@code capacity} (at least 1) key contexts. */
  public KeyContexts(int capacity) {
    int bound = Math.max(1, capacity);
    this.map = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<ByteKey, KeyContext<K>> eldest) {
        return size() > bound;
      }
    };
  }

  /** The context of {@code id}, or null. */
  public KeyContext<K> get(ByteKey id) {
    return map.get(id);
  }

  /** Remembers {@code context} under its id. */
  public void put(KeyContext<K> context) {
    map.put(context.id(), context);
  }

  /** Forgets every context. */
  public void clear() {
    map.clear();
  }

  /** Number of contexts held. */
  public int size() {
    return map.size();
  }
}
