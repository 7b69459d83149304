package dev.weir.runner.state;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.StateKey;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.ReadableState;
import org.apache.beam.sdk.util.common.ElementByteSizeObserver;

/**
 * Beam's {@link BagState}: elements in chunks of up to {@value #CHUNK_ELEMENTS}, one cell per chunk.
 *
 * <ul>
 *   <li><b>Stores</b> the elements in insertion order, nulls included (e.g. {@code VoidCoder}).
 *   <li><b>Cells</b>: the length in the state's single cell ({@link CellLayout#cell},
 *       {@code VarLongCoder}); element {@code i} in chunk {@code i / }{@value #CHUNK_ELEMENTS}
 *       under {@link CellLayout#bagChunk} (an 8-byte chunk index), a {@link ListCoder} of the
 *       element coder. Every chunk but the last is full.
 *   <li><b>Why chunks</b>: a cell per element made every element of a buffering GroupByKey (Nexmark
 *       Q4, Q6, Q9, Q14) its own cache entry, each put into Caffeine, evicted, encoded, inserted
 *       into RocksDB, read back and finally tombstoned on its own; in Q14's profile at 1,000,000
 *       events that was a third of the CPU (runner/BENCHMARKS.md, issue 14, session 9). A chunk
 *       pays those costs once per {@value #CHUNK_ELEMENTS} elements; the price is that a partly
 *       filled chunk evicted and appended to again is decoded and encoded whole.
 *   <li><b>Writes</b>: {@code add} reads the length, appends to the last chunk in place (it is the
 *       cached object; see "in place" below) or starts a new one with a blind write, and puts both
 *       back: O(1) cache operations, no rewrite of the bag; {@code clear} deletes the chunks
 *       point-wise (a chunk never written back is simply dropped from the cache).
 *   <li><b>Reads</b> materialise: point reads of the chunks (object-cache hits for recent ones; no
 *       range scan, so no flush of dirty state) into a new list, because runners-core clears a
 *       GroupByKey's bag right after handing its contents downstream.
 *   <li><b>Held reads</b>: a read is a list of its own, so later writes never show in it.
 *   <li><b>In place</b>: the last chunk is changed in place and put again in the same call, so the
 *       object cache never encodes it half-changed (entries touched since the last safe point are
 *       not encoded before the next one, see {@code ObjectCache}); no read hands a chunk out.
 *   <li><b>Weight</b>: each put of a chunk tells a byte-bounded object cache the chunk's estimated
 *       encoded size, its element count times the encoded size of the element that started it (or
 *       of the first element this instance added to it), measured with the coder's byte-size
 *       observer once per chunk. Without it a chunk weighed what it did when last encoded: a chunk
 *       grown from one element to 64 since counted for one (runner/BENCHMARKS.md, issue 14,
 *       session 10).
 *   <li><b>Sealed chunks</b>: the add that fills a chunk puts it sealed ({@link
 *       CachedStore#putSealed}): encoded at once, only its bytes cached. A full chunk never
 *       changes again, and a bag that outgrows one chunk is mostly one that buffers until a pane
 *       or timer reads it whole (a GroupByKey's window, a stateful DoFn's batch), so the chunk's
 *       objects would only wait in the heap, and every young collection would copy them, until
 *       the read or the chunk's eviction encodes it anyway. Held as objects, Nexmark Q10's
 *       buffered events took about three times their encoded size and the young collections that
 *       copied them grew the heap to 2.1–2.4 GB; sealed, 1.2–1.6 GB, and 11–29% more events/s
 *       (runner/BENCHMARKS.md, issue 14, session 18). A read decodes each sealed chunk once and
 *       caches its objects again; the last chunk, still growing, stays an object. Under
 *       {@code --backgroundSealing} (the default) the encoding is done by whichever container's
 *       run loop is idle, or a thread on a core no container uses ({@code SealerQueue}), and the
 *       bytes replace the chunk at the container's next safe point: Nexmark Q10's GroupByKey
 *       spent 14% of its busiest container's CPU samples encoding chunks at 1,000,000 events
 *       while the other container idled (runner/BENCHMARKS.md, issue 14, session 21).
 * </ul>
 *
 * <p>Threading: confined to the owning task's container thread.
 */
final class CachedBag<T> extends Cells implements BagState<T> {
  /**
   * Elements per chunk. Large enough that per-cell costs (a Caffeine node, a RocksDB key, a
   * tombstone) vanish per element; small enough that re-encoding a partly filled chunk after an
   * eviction stays cheap, and that a full chunk of Nexmark-sized elements (~100 bytes encoded, so
   * ~6.4 KB) is about the object cache's per-entry byte floor under the defaults (64 MiB /
   * 10,000 entries, ~6.7 KB).
   */
  static final int CHUNK_ELEMENTS = 64;
  /** First capacity of a new chunk: most bags of windowed GroupByKeys hold a few elements. */
  private static final int FIRST_CAPACITY = 4;

  /** ListCoder's length prefix: a 4-byte int. */
  private static final int CHUNK_HEADER_BYTES = 4;

  private final CachedStore store;
  private final StateKey lengthCell;
  private final byte[] elements;
  private final Coder<T> elementCoder;
  private final Coder<List<T>> chunkCoder;
  /**
   * The encoded size of the element that started the chunk being filled (or of the first one this
   * instance added to it), in bytes: the estimate for each of its elements; -1 until measured.
   */
  private int elementBytes = -1;
  /** Index of the chunk {@link #elementBytes} was measured for. */
  private long measuredChunk = -1;

  /**
   * @param lengthCell the state's single cell
   * @param elements the state's elements prefix ({@link CellLayout#elements})
   * @param coder the element coder
   * @param chunkCoder the operator's {@link StateCoders#chunk} of {@code coder}, shared by its bags
   */
  CachedBag(CachedStore store, StateKey lengthCell, byte[] elements, Coder<T> coder, Coder<List<T>> chunkCoder) {
    super(lengthCell.bytes());
    this.store = store;
    this.lengthCell = lengthCell;
    this.elements = elements;
    this.elementCoder = coder;
    this.chunkCoder = chunkCoder;
  }

  private long length() {
    Long n = store.get(lengthCell, VarLongCoder.of());
    return n == null ? 0 : n;
  }

  private StateKey chunk(long index) {
    return store.key(CellLayout.bagChunk(elements, index));
  }

  @Override
  public void add(T value) {
    long n = length();
    long chunkIndex = n / CHUNK_ELEMENTS;
    StateKey cell = chunk(chunkIndex);
    List<T> chunk;
    if (n % CHUNK_ELEMENTS == 0) {
      chunk = new ArrayList<>(FIRST_CAPACITY);
    } else {
      chunk = store.get(cell, chunkCoder);
      if (chunk == null) {
        throw missingChunk(n, chunkIndex);
      }
      if (!(chunk instanceof ArrayList)) {
        chunk = new ArrayList<>(chunk); // ListCoder decodes to an ArrayList; this is only a guard
      }
    }
    chunk.add(value);
    if (measuredChunk != chunkIndex && chunk.size() < CHUNK_ELEMENTS) {
      elementBytes = encodedSize(value);
      measuredChunk = chunkIndex;
    }
    if (chunk.size() == CHUNK_ELEMENTS) {
      store.putSealed(cell, chunk, chunkCoder); // full: it never changes again (see "Sealed chunks")
    } else if (elementBytes >= 0) {
      store.put(cell, chunk, chunkCoder,
          (int) Math.min(Integer.MAX_VALUE, CHUNK_HEADER_BYTES + (long) chunk.size() * elementBytes));
    } else {
      store.put(cell, chunk, chunkCoder);
    }
    store.put(lengthCell, n + 1, VarLongCoder.of());
  }

  /**
   * {@code value}'s encoded size in bytes by the element coder's byte-size observer (which encodes
   * into a counter where the coder has no cheaper way), or -1 where the coder reports it lazily or
   * fails: then the chunk is weighed as the object cache knows it.
   */
  private int encodedSize(T value) {
    SizeObserver observer = new SizeObserver();
    try {
      elementCoder.registerByteSizeObserver(value, observer);
    } catch (Exception e) {
      return -1; // the write-back encodes it and reports a real failure then
    }
    if (observer.getIsLazy()) {
      return -1;
    }
    observer.advance();
    return (int) Math.min(Integer.MAX_VALUE, observer.size);
  }

  /** Receives one element's encoded size. */
  private static final class SizeObserver extends ElementByteSizeObserver {
    long size;

    @Override
    protected void reportElementSize(long elementByteSize) {
      size = elementByteSize;
    }
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
    long chunks = (n + CHUNK_ELEMENTS - 1) / CHUNK_ELEMENTS;
    for (long c = 0; c < chunks; c++) {
      List<T> chunk = store.get(chunk(c), chunkCoder);
      if (chunk == null) {
        throw missingChunk(n, c);
      }
      result.addAll(chunk);
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
    long chunks = (n + CHUNK_ELEMENTS - 1) / CHUNK_ELEMENTS;
    for (long c = 0; c < chunks; c++) {
      store.delete(chunk(c));
    }
    if (n > 0) {
      store.delete(lengthCell);
    }
  }

  /** A length cell that names a chunk the store lacks: state written by something else, or damaged. */
  private IllegalStateException missingChunk(long length, long chunkIndex) {
    return new IllegalStateException("bag state " + this + " has length " + length + " but no chunk " + chunkIndex
        + " in store " + store.name());
  }

  @Override
  public String toString() {
    return "CachedBag " + HexFormat.of().formatHex(elements);
  }
}
