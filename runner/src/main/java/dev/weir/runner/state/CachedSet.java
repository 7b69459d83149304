package dev.weir.runner.state;

import dev.weir.state.cache.StateKey;
import org.apache.beam.sdk.coders.BooleanCoder;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.state.ReadableState;
import org.apache.beam.sdk.state.ReadableStates;
import org.apache.beam.sdk.state.SetState;

/**
 * Beam's {@link SetState}: one cell per element.
 *
 * <ul>
 *   <li><b>Stores</b> distinct elements; elements are equal when their encodings are.
 *   <li><b>Cells</b>: element {@code e} under {@link CellLayout#entry} (the elements prefix, then
 *       {@code e} in the element coder), the value {@code true} in {@code BooleanCoder}.
 *   <li><b>Point operations</b> ({@code contains}, {@code add}, {@code addIfAbsent},
 *       {@code remove}) are one cell read or write each.
 *   <li><b>Reads</b> are streamed range scans in encoding order ({@link StreamedRead}) that decode
 *       only cell keys, materialised if the set fits in one page.
 *   <li><b>Held reads</b> are snapshots: a write to an element a streamed read covers copies the
 *       read first.
 * </ul>
 *
 * <p>Threading: confined to the owning task's container thread.
 */
final class CachedSet<T> extends EntryCells<T> implements SetState<T> {
  CachedSet(StreamedRead reads, byte[] elements, Coder<T> coder) {
    super(reads, elements, coder);
  }

  @Override
  public ReadableState<Boolean> contains(T t) {
    StateKey e = entry(t);
    return lazy(() -> store.get(e, BooleanCoder.of()) != null);
  }

  @Override
  public ReadableState<Boolean> addIfAbsent(T t) {
    StateKey e = entry(t);
    boolean absent = store.get(e, BooleanCoder.of()) == null;
    if (absent) {
      put(e, Boolean.TRUE, BooleanCoder.of());
    }
    return ReadableStates.immediate(absent);
  }

  @Override
  public void remove(T t) {
    delete(entry(t));
  }

  @Override
  public void add(T t) {
    put(entry(t), Boolean.TRUE, BooleanCoder.of());
  }

  @Override
  public Iterable<T> read() {
    return readKeys();
  }

  @Override
  public SetState<T> readLater() {
    return this;
  }
}
