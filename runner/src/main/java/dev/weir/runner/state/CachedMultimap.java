package dev.weir.runner.state;

import dev.weir.runner.state.StreamedRead.Scan;
import dev.weir.runner.state.StreamedRead.SkipCoder;
import dev.weir.state.cache.StateKey;
import dev.weir.state.store.ByteKeys;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.state.MultimapState;
import org.apache.beam.sdk.state.ReadableState;
import org.apache.samza.storage.kv.Entry;

/**
 * Beam's {@link MultimapState}: one cell per (key, value) pair.
 *
 * <ul>
 *   <li><b>Stores</b> pairs; keys are equal when their encodings are, and a key's values come
 *       back in insertion order, duplicates and nulls included.
 *   <li><b>Cells</b>: pair cells under {@link CellLayout#multimapCell}: the elements prefix,
 *       {@code len(k) | k} ({@code k} in the key coder), then a sequence number from the counter
 *       in the state's single cell; the value in the value coder, null as the coder's null.
 *   <li><b>Writes</b>: {@code put} is two cell writes (counter and pair); {@code remove} deletes
 *       the key's prefix; {@code clear} the elements prefix and the counter.
 *   <li><b>Reads</b>: {@code get}, {@code keys} and {@code entries} are streamed range scans
 *       ({@link StreamedRead}), materialised if they fit in one page; {@code keys} skips values
 *       undecoded and returns each key once (a page ends after its last key's values).
 *   <li><b>Held reads</b> are snapshots: a write into a range a streamed read covers copies the
 *       read first.
 * </ul>
 *
 * <p>Threading: confined to the owning task's container thread.
 */
final class CachedMultimap<K, V> extends ElementCells implements MultimapState<K, V> {
  private final Coder<K> keyCoder;
  private final Coder<V> valueCoder;
  private final NullElementCoder<V> nullValueCoder;

  /**
   * @param sequenceCell the state's single cell, which counts insertions
   * @param nullValueCoder writes a null value ({@link StateCoders#nullElement} of {@code valueCoder})
   */
  CachedMultimap(StreamedRead reads, StateKey sequenceCell, byte[] elements, Coder<K> keyCoder,
      Coder<V> valueCoder, NullElementCoder<V> nullValueCoder) {
    super(reads, elements, sequenceCell);
    this.keyCoder = keyCoder;
    this.valueCoder = valueCoder;
    this.nullValueCoder = nullValueCoder;
  }

  /** {@code elements | len(k) | k}: the prefix of the cells of map key {@code k}. */
  private byte[] keyPrefix(K k) {
    return CellLayout.multimapKeyPrefix(elements, encodeKey(keyCoder, k));
  }

  private int keyEnd(byte[] cell) {
    return CellLayout.multimapKeyEnd(cell, elements.length);
  }

  private K keyOf(byte[] cell, int keyEnd) {
    return decodeKey(keyCoder, CellLayout.multimapKey(cell, elements.length, keyEnd));
  }

  /** Whether {@code cell} belongs to another key than {@code previous}'s, whose key ends at {@code previousEnd}. */
  private static boolean newKey(byte[] previous, int previousEnd, byte[] cell, int end) {
    return previous == null || !Arrays.equals(previous, 0, previousEnd, cell, 0, end);
  }

  @Override
  public void put(K key, V value) {
    byte[] cell = CellLayout.multimapCell(elements, encodeKey(keyCoder, key), nextSequence());
    reads.beforeWrite(cell);
    putNullable(store, store.key(cell), value, valueCoder, nullValueCoder);
  }

  @Override
  public ReadableState<Iterable<V>> get(K key) {
    byte[] prefix = keyPrefix(key);
    byte[] end = ByteKeys.prefixEnd(prefix);
    return lazy(() -> reads.snapshot(new Scan<V, V>(store, prefix, end, valueCoder) {
      @Override
      void decode(List<Entry<byte[], V>> cells, List<V> out) {
        for (Entry<byte[], V> cell : cells) {
          out.add(unmask(cell.getValue()));
        }
      }
    }));
  }

  @Override
  public void remove(K key) {
    byte[] prefix = keyPrefix(key);
    if (reads.hasViews()) {
      reads.beforeWrite(prefix, ByteKeys.prefixEnd(prefix));
    }
    store.deletePrefix(prefix);
  }

  @Override
  public ReadableState<Iterable<K>> keys() {
    return lazy(() -> reads.snapshot(new Scan<Object, K>(store, elements, elementsEnd, SkipCoder.INSTANCE) {
      @Override
      void decode(List<Entry<byte[], Object>> cells, List<K> out) {
        byte[] previous = null;
        int previousEnd = 0;
        for (Entry<byte[], Object> cell : cells) {
          byte[] k = cell.getKey();
          int end = keyEnd(k);
          if (newKey(previous, previousEnd, k, end)) {
            out.add(keyOf(k, end));
            previous = k;
            previousEnd = end;
          }
        }
      }

      @Override
      byte[] after(byte[] last) {
        // Skip the rest of the last key's values: its key was emitted on this page.
        byte[] next = ByteKeys.prefixEnd(Arrays.copyOf(last, keyEnd(last)));
        return next == null ? elementsEnd : next;
      }
    }));
  }

  @Override
  public ReadableState<Iterable<Map.Entry<K, V>>> entries() {
    return lazy(() -> reads.snapshot(new Scan<V, Map.Entry<K, V>>(store, elements, elementsEnd, valueCoder) {
      @Override
      void decode(List<Entry<byte[], V>> cells, List<Map.Entry<K, V>> out) {
        byte[] previous = null;
        int previousEnd = 0;
        K key = null;
        for (Entry<byte[], V> cell : cells) {
          byte[] k = cell.getKey();
          int end = keyEnd(k);
          if (newKey(previous, previousEnd, k, end)) {
            key = keyOf(k, end); // once per run of cells of the same key
            previous = k;
            previousEnd = end;
          }
          out.add(new SimpleImmutableEntry<>(key, unmask(cell.getValue())));
        }
      }
    }));
  }

  @Override
  public ReadableState<Boolean> containsKey(K key) {
    byte[] prefix = keyPrefix(key);
    byte[] end = ByteKeys.prefixEnd(prefix);
    return lazy(() -> !reads.noCells(prefix, end));
  }
}
