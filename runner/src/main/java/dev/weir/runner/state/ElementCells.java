package dev.weir.runner.state;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.StateKey;
import dev.weir.state.store.ByteKeys;
import org.apache.beam.sdk.state.ReadableState;

/**
 * Base of the state kinds that keep one cell per element under the state's elements prefix
 * ({@link CellLayout#elements}) and read them by range scans through {@link StreamedRead}: maps,
 * sets, ordered lists and multimaps. Owns what they share: the prefix and its exclusive end,
 * {@code isEmpty} (one seek) and {@code clear} (copy held reads, delete the prefix, and reset the
 * sequence counter of kinds that have one).
 *
 * <p>Threading: confined to the owning task's container thread.
 */
abstract class ElementCells extends Cells {
  final StreamedRead reads;
  final CachedStore store;
  /** The elements prefix: every element cell's key starts with it. */
  final byte[] elements;
  /** Exclusive end of the element cells' range ({@link ByteKeys#prefixEnd}). */
  final byte[] elementsEnd;
  /** The single cell counting insertions (ties broken in insertion order), or null if none. */
  final StateKey sequenceCell;

  /**
   * @param reads the key's streamed reads
   * @param elements the state's elements prefix
   * @param sequenceCell the state's single cell if it keeps a sequence counter there, else null
   */
  ElementCells(StreamedRead reads, byte[] elements, StateKey sequenceCell) {
    super(elements);
    this.reads = reads;
    this.store = reads.store();
    this.elements = elements;
    this.elementsEnd = ByteKeys.prefixEnd(elements);
    this.sequenceCell = sequenceCell;
  }

  /** Whether the state has no element cell: lazy, one seek (which flushes the store's dirty entries). */
  public ReadableState<Boolean> isEmpty() {
    return lazy(() -> reads.noCells(elements, elementsEnd));
  }

  /** Copies the reads held over the state, then deletes every element cell (and the counter). */
  public void clear() {
    reads.beforeWrite(elements, elementsEnd);
    store.deletePrefix(elements);
    if (sequenceCell != null) {
      store.delete(sequenceCell);
    }
  }

  /** The next sequence number from {@link #sequenceCell}. */
  final long nextSequence() {
    return nextSequence(store, sequenceCell);
  }
}
