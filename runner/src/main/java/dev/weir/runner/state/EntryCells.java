package dev.weir.runner.state;

import dev.weir.runner.state.StreamedRead.Scan;
import dev.weir.runner.state.StreamedRead.SkipCoder;
import dev.weir.state.cache.StateKey;
import java.util.List;
import java.util.function.BiFunction;
import org.apache.beam.sdk.coders.Coder;
import org.apache.samza.storage.kv.Entry;

/**
 * What maps and sets share: one cell per distinct key (map key, set element) under
 * {@link CellLayout#entry}, found by encoding the key with the key coder (so keys are equal by
 * structural value), and written only after held reads of that cell were copied.
 *
 * @param <K> the map key or set element type
 */
abstract class EntryCells<K> extends ElementCells {
  final Coder<K> keyCoder;

  EntryCells(StreamedRead reads, byte[] elements, Coder<K> keyCoder) {
    super(reads, elements, null);
    this.keyCoder = keyCoder;
  }

  /** The cell of {@code key} (encodes it: one array for the encoding, one for the cell key). */
  final StateKey entry(K key) {
    return store.key(CellLayout.entry(elements, encodeKey(keyCoder, key)));
  }

  /** Writes one entry cell, after copying held reads that cover it. */
  final <V> void put(StateKey entry, V value, Coder<V> valueCoder) {
    reads.beforeWrite(entry.bytes());
    store.put(entry, value, valueCoder);
  }

  /** Deletes one entry cell, after copying held reads that cover it. */
  final void delete(StateKey entry) {
    reads.beforeWrite(entry.bytes());
    store.delete(entry);
  }

  /** The key of an entry cell (decodes the cell key's suffix). */
  final K keyOf(byte[] cell) {
    return decodeKey(keyCoder, CellLayout.entryKey(cell, elements.length));
  }

  /**
   * A streamed read of all entries in key order ({@link StreamedRead#snapshot}), each turned into
   * an element by {@code element} from its cell key and value.
   *
   * @param valueCoder decodes the cell values; {@link SkipCoder#INSTANCE} reads only the keys
   */
  final <V, E> Iterable<E> readEntries(Coder<V> valueCoder, BiFunction<byte[], V, E> element) {
    return reads.snapshot(new Scan<V, E>(store, elements, elementsEnd, valueCoder) {
      @Override
      void decode(List<Entry<byte[], V>> cells, List<E> out) {
        for (Entry<byte[], V> cell : cells) {
          out.add(element.apply(cell.getKey(), cell.getValue()));
        }
      }
    });
  }

  /** A streamed read of all keys, in the order of their encodings; values are skipped, not decoded. */
  final Iterable<K> readKeys() {
    return reads.snapshot(new Scan<Object, K>(store, elements, elementsEnd, SkipCoder.INSTANCE) {
      @Override
      void decode(List<Entry<byte[], Object>> cells, List<K> out) {
        for (Entry<byte[], Object> cell : cells) {
          out.add(keyOf(cell.getKey()));
        }
      }
    });
  }
}
