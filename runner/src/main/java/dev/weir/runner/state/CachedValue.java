package dev.weir.runner.state;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.StateKey;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.state.ValueState;

/**
 * Beam's {@link ValueState}.
 *
 * <ul>
 *   <li><b>Stores</b> one value, or nothing (Beam lets a nullable coder write null; it is stored
 *       as nothing and reads back as null).
 *   <li><b>Cells</b>: the state's single cell ({@link CellLayout#cell}), the value in the state's
 *       coder.
 *   <li><b>Reads</b>: one cache lookup, returning the cached object itself (values are never
 *       mutated after a put).
 *   <li><b>Held reads</b>: none; a read returns the object, not a view.
 *   <li><b>Reads off the container thread</b>: a miss may be loaded by a worker
 *       ({@link #readOrMiss}).
 * </ul>
 *
 * <p>Threading: confined to the owning task's container thread.
 */
final class CachedValue<T> extends Cells implements CachedStateInternals.LoadableValue<T> {
  private final CachedStore store;
  private final StateKey cell;
  private final Coder<T> coder;

  CachedValue(CachedStore store, StateKey cell, Coder<T> coder) {
    super(cell.bytes());
    this.store = store;
    this.cell = cell;
    this.coder = coder;
  }

  @Override
  public void write(T input) {
    if (input == null) {
      store.delete(cell); // Beam allows null for nullable coders; absent reads back as null too
    } else {
      store.put(cell, input, coder);
    }
  }

  @Override
  public T read() {
    return store.get(cell, coder);
  }

  @Override
  public Object readOrMiss() {
    return store.getOrOffOwnerLoad(cell, coder);
  }

  @Override
  public ValueState<T> readLater() {
    return this;
  }

  @Override
  public void clear() {
    store.delete(cell);
  }
}
