package dev.weir.runner.state;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.StateKey;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.ReadableState;

/**
 * Beam's {@link BagState}: one cell per element.
 *
 * <ul>
 *   <li><b>Stores</b> the elements in insertion order, nulls included (e.g. {@code VoidCoder}).
 *   <li><b>Cells</b>: the length in the state's single cell ({@link CellLayout#cell},
 *       {@code VarLongCoder}); element {@code i} under {@link CellLayout#bagElement} (an 8-byte
 *       index), in the element coder, a null element as the coder's null.
 *   <li><b>Writes</b>: {@code add} writes one new element cell and bumps the length, O(1), no
 *       rewrite of the bag; {@code clear} deletes the cells point-wise (cached tombstones, written
 *       back with the next batch).
 *   <li><b>Reads</b> materialise: point reads of the element cells (object-cache hits for recent
 *       elements; no range scan, so no flush of dirty state) into a new list, because
 *       runners-core clears a GroupByKey's bag right after handing its contents downstream.
 *   <li><b>Held reads</b>: a read is a list of its own, so later writes never show in it.
 * </ul>
 *
 * <p>Threading: confined to the owning task's container thread.
 */
final class CachedBag<T> extends Cells implements BagState<T> {
  private final CachedStore store;
  private final StateKey lengthCell;
  private final byte[] elements;
  private final Coder<T> coder;

  /**
   * @param lengthCell the state's single cell
   * @param elements the state's elements prefix ({@link CellLayout#elements})
   */
  CachedBag(CachedStore store, StateKey lengthCell, byte[] elements, Coder<T> coder) {
    super(lengthCell.bytes());
    this.store = store;
    this.lengthCell = lengthCell;
    this.elements = elements;
    this.coder = coder;
  }

  private long length() {
    Long n = store.get(lengthCell, VarLongCoder.of());
    return n == null ? 0 : n;
  }

  private StateKey element(long index) {
    return store.key(CellLayout.bagElement(elements, index));
  }

  @Override
  public void add(T value) {
    long n = length();
    putNullable(store, element(n), value, coder);
    store.put(lengthCell, n + 1, VarLongCoder.of());
  }

  @Override
  public ReadableState<Boolean> isEmpty() {
    return lazy(() -> length() == 0);
  }

  @Override
  public Iterable<T> read() {
    long n = length();
    if (n == 0) {
      return List.of();
    }
    List<T> result = new ArrayList<>((int) Math.min(n, Integer.MAX_VALUE));
    for (long i = 0; i < n; i++) {
      result.add(unmask(store.get(element(i), coder)));
    }
    return result;
  }

  @Override
  public BagState<T> readLater() {
    return this;
  }

  @Override
  public void clear() {
    long n = length();
    for (long i = 0; i < n; i++) {
      store.delete(element(i));
    }
    if (n > 0) {
      store.delete(lengthCell);
    }
  }
}
