package dev.weir.runner.state;

import dev.weir.state.cache.StateKey;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.Map;
import java.util.function.Function;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.state.MapState;
import org.apache.beam.sdk.state.ReadableState;
import org.apache.beam.sdk.state.ReadableStates;

/**
 * Beam's {@link MapState}: one cell per entry.
 *
 * <ul>
 *   <li><b>Stores</b> key/value entries; keys are equal when their encodings are.
 *   <li><b>Cells</b>: entry {@code k} under {@link CellLayout#entry} (the elements prefix, then
 *       {@code k} in the key coder), the value in the value coder.
 *   <li><b>Point operations</b> ({@code get}, {@code put}, {@code remove}, ...) are one cell read
 *       or write each, object-cache hits for hot entries.
 *   <li><b>Reads</b> of {@code keys}, {@code values} and {@code entries} are streamed range scans
 *       in key-encoding order ({@link StreamedRead}): a page of cells at a time, materialised if
 *       the map fits in one page; {@code keys} skips values undecoded.
 *   <li><b>Held reads</b> are snapshots: a write to an entry a streamed read covers copies the
 *       read first.
 * </ul>
 *
 * <p>Threading: confined to the owning task's container thread.
 */
final class CachedMap<K, V> extends EntryCells<K> implements MapState<K, V> {
  private final Coder<V> valueCoder;

  CachedMap(StreamedRead reads, byte[] elements, Coder<K> keyCoder, Coder<V> valueCoder) {
    super(reads, elements, keyCoder);
    this.valueCoder = valueCoder;
  }

  @Override
  public void put(K k, V v) {
    put(entry(k), v, valueCoder);
  }

  @Override
  public ReadableState<V> putIfAbsent(K k, V v) {
    StateKey e = entry(k);
    V old = store.get(e, valueCoder);
    if (old == null) {
      put(e, v, valueCoder);
    }
    return ReadableStates.immediate(old);
  }

  @Override
  public ReadableState<V> computeIfAbsent(K k, Function<? super K, ? extends V> f) {
    StateKey e = entry(k);
    V old = store.get(e, valueCoder);
    if (old == null) {
      put(e, f.apply(k), valueCoder);
    }
    return ReadableStates.immediate(old);
  }

  @Override
  public void remove(K k) {
    delete(entry(k));
  }

  @Override
  public ReadableState<V> get(K k) {
    StateKey e = entry(k);
    return lazy(() -> store.get(e, valueCoder));
  }

  @Override
  public ReadableState<V> getOrDefault(K k, V defaultValue) {
    StateKey e = entry(k);
    return lazy(() -> {
      V v = store.get(e, valueCoder);
      return v == null ? defaultValue : v;
    });
  }

  @Override
  public ReadableState<Iterable<K>> keys() {
    return lazy(this::readKeys);
  }

  @Override
  public ReadableState<Iterable<V>> values() {
    return lazy(() -> readEntries(valueCoder, (cell, v) -> v));
  }

  @Override
  public ReadableState<Iterable<Map.Entry<K, V>>> entries() {
    return lazy(() -> readEntries(valueCoder, (cell, v) -> new SimpleImmutableEntry<>(keyOf(cell), v)));
  }
}
