package dev.weir.runner.state;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.store.ByteKeys;
import dev.weir.state.store.StoreIterator;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CustomCoder;
import org.apache.beam.sdk.values.KV;
import org.apache.samza.storage.kv.Entry;

/**
 * The streamed snapshot reads of one key's state: maps, sets, ordered lists and multimaps read
 * their element cells through here, and call {@link #beforeWrite} before every write to them.
 *
 * <h2>Reads</h2>
 *
 * A read is a {@link Scan} of a range of cells, read a page of {@value #PAGE_CELLS} cells at a
 * time, each page through its own store iterator (so no iterator outlives a call; each page
 * flushes the store's dirty entries first and so sees every earlier write). {@link #snapshot}
 * reads the first page at once: a result that fits in it is returned as an unmodifiable list; a
 * larger one is a {@link View} that streams the remaining pages from the store whenever it is
 * iterated, so a list or multimap far larger than memory is never copied to be read.
 *
 * <h2>Copy on write</h2>
 *
 * Beam requires a result not to change with later writes. Before any write to a range, the
 * outstanding views over that range are copied in full ({@link View#copyAll}) and forgotten;
 * iterators already running continue in the copy where they were. Views are held weakly, so one
 * the DoFn dropped is skipped once the garbage collector has cleared it (until then it is copied
 * too). Reading more than a page of a range and then writing into it (read, then clear) therefore
 * costs one copy of the range. With no view outstanding, the common case, a write checks a
 * field or an empty list.
 *
 * <h2>Leaving the thread</h2>
 *
 * A view reads its container's store, which only the container's thread may touch. Views are
 * copied when the DoFn outputs them or they leave the thread ({@link #detachReads}), and iterating
 * one elsewhere fails with an {@link IllegalStateException} rather than read another thread's
 * store.
 *
 * <p>Threading: confined to the owning task's container thread, like the state.
 */
final class StreamedRead {
  /** Cells read from the store per page of a streamed read: bounds the memory one read holds. */
  static final int PAGE_CELLS = 256;

  private final CachedStore store;
  /**
   * Streamed reads handed out and not yet copied, weakly held so that an abandoned read is not
   * copied. Created with the first one (most keys never read more than a page), so a key's
   * streamed reads cost one object until then.
   */
  private ArrayList<WeakReference<View<?>>> views;
  /** Size of {@link #views} after its last pruning; the next pruning waits until it doubles. */
  private int viewsAfterPrune;

  /** @param store the container's cached store, which holds the key's cells */
  StreamedRead(CachedStore store) {
    this.store = store;
  }

  /** The store the cells are read from. */
  CachedStore store() {
    return store;
  }

  /**
   * Reads {@code scan}: its first page now; if that is all of it, the page is the result, else a
   * {@link View} that streams the rest from the store and is copied if a write touches its range.
   */
  <E> Iterable<E> snapshot(Scan<?, E> scan) {
    List<E> first = new ArrayList<>();
    byte[] next = scan.read(scan.from, first);
    if (next == null) {
      return Collections.unmodifiableList(first);
    }
    View<E> view = new View<>(scan, first, next);
    if (views == null) {
      views = new ArrayList<>(2);
    } else if (views.size() > 2 * viewsAfterPrune + 16) {
      views.removeIf(r -> r.get() == null || r.get().copy != null);
      viewsAfterPrune = views.size();
    }
    views.add(new WeakReference<>(view));
    return view;
  }

  /**
   * Called before every write to the cells of {@code [from, to)}: copies the outstanding streamed
   * reads over that range, so that they keep showing the state as of their {@code read()}.
   *
   * @param to exclusive end; null means unbounded
   */
  void beforeWrite(byte[] from, byte[] to) {
    if (views == null) {
      return;
    }
    for (int i = views.size() - 1; i >= 0; i--) {
      View<?> view = views.get(i).get();
      if (view == null || view.copy != null) {
        dropView(i);
      } else if (overlaps(view.scan.from, view.scan.to, from, to)) {
        view.copyAll();
        dropView(i);
      }
    }
  }

  /** {@link #beforeWrite(byte[], byte[])} of one cell; allocates only when a read is outstanding. */
  void beforeWrite(byte[] cell) {
    if (hasViews()) {
      beforeWrite(cell, ByteKeys.successor(cell));
    }
  }

  /** Whether a streamed read may be outstanding (a write that would allocate its range may skip). */
  boolean hasViews() {
    return views != null && !views.isEmpty();
  }

  private void dropView(int i) {
    int last = views.size() - 1;
    views.set(i, views.get(last));
    views.remove(last);
  }

  /** Whether {@code [aFrom, aTo)} and {@code [bFrom, bTo)} intersect; a null end is unbounded. */
  private static boolean overlaps(byte[] aFrom, byte[] aTo, byte[] bFrom, byte[] bTo) {
    return (aTo == null || Arrays.compareUnsigned(bFrom, aTo) < 0)
        && (bTo == null || Arrays.compareUnsigned(aFrom, bTo) < 0);
  }

  /** Whether {@code [from, to)} holds no cell (one seek; flushes the store's dirty entries). */
  boolean noCells(byte[] from, byte[] to) {
    try (StoreIterator<byte[], Object> it = store.range(from, to, SkipCoder.INSTANCE)) {
      return !it.hasNext();
    }
  }

  /**
   * Deletes the cells of {@code [from, to)} a page at a time (cached tombstones, written back with
   * the next batch), so a large range is never held in memory. The caller has called
   * {@link #beforeWrite(byte[], byte[])}.
   */
  void deleteRange(byte[] from, byte[] to) {
    List<byte[]> page = new ArrayList<>();
    byte[] cursor = from;
    while (true) {
      page.clear();
      try (StoreIterator<byte[], Object> it = store.range(cursor, to, SkipCoder.INSTANCE)) {
        while (page.size() < PAGE_CELLS && it.hasNext()) {
          page.add(it.next().getKey());
        }
      }
      for (byte[] k : page) {
        store.delete(store.key(k));
      }
      if (page.size() < PAGE_CELLS) {
        return;
      }
      cursor = ByteKeys.successor(page.get(page.size() - 1));
    }
  }

  /**
   * Makes the streamed state reads in an element's value safe to hand on: a read larger than one
   * page (a {@link View}) found as the value itself or as a {@code KV}'s key or value is copied in
   * full now. Other values cost two type checks. Only from the thread that made the read. Reads
   * nested deeper are caught by the view's own thread check instead.
   */
  static void detachReads(Object value) {
    if (value instanceof View<?> view) {
      view.copyAll();
    } else if (value instanceof KV<?, ?> kv) {
      if (kv.getKey() instanceof View<?> key) {
        key.copyAll();
      }
      if (kv.getValue() instanceof View<?> v) {
        v.copyAll();
      }
    }
  }

  /** The value a {@link SkipCoder} reads in place of a cell's value. */
  static final Object UNREAD = new Object();

  /** Reads past a value without decoding it, for scans that only need cell keys. Never writes. */
  static final class SkipCoder extends CustomCoder<Object> {
    static final SkipCoder INSTANCE = new SkipCoder();

    @Override
    public void encode(Object value, OutputStream out) {
      throw new UnsupportedOperationException("SkipCoder only reads");
    }

    @Override
    public Object decode(InputStream in) throws IOException {
      while (in.skip(Long.MAX_VALUE) > 0 || in.read() >= 0) {
        // consume everything: CoderUtils rejects unread bytes
      }
      return UNREAD;
    }
  }

  /**
   * One streamed read: the cells of {@code [from, to)} in key order, a page of at most
   * {@link #PAGE_CELLS} at a time, turned into elements by {@link #decode}.
   *
   * @param <V> the cell value type ({@link #UNREAD} with a {@link SkipCoder})
   * @param <E> the element type of the result
   */
  abstract static class Scan<V, E> {
    private final CachedStore store;
    final byte[] from;
    final byte[] to;
    private final Coder<V> coder;

    /**
     * @param to exclusive end; null means unbounded
     * @param coder decodes the cell values ({@link SkipCoder#INSTANCE} to skip them)
     */
    Scan(CachedStore store, byte[] from, byte[] to, Coder<V> coder) {
      this.store = store;
      this.from = from;
      this.to = to;
      this.coder = coder;
    }

    /** Appends the elements of one page of cells (in key order) to {@code out}. */
    abstract void decode(List<Entry<byte[], V>> cells, List<E> out);

    /**
     * Where the page after one whose last cell is {@code last} starts: its successor (not its
     * prefix end: a map key may extend another).
     */
    byte[] after(byte[] last) {
      return ByteKeys.successor(last);
    }

    /**
     * Reads the page starting at {@code cursor} into {@code out}.
     *
     * @return where the next page starts, or null if the range is exhausted
     */
    final byte[] read(byte[] cursor, List<E> out) {
      if (to != null && Arrays.compareUnsigned(cursor, to) >= 0) {
        return null;
      }
      List<Entry<byte[], V>> cells = new ArrayList<>();
      try (StoreIterator<byte[], V> it = store.range(cursor, to, coder)) {
        while (cells.size() < PAGE_CELLS && it.hasNext()) {
          cells.add(it.next());
        }
      }
      decode(cells, out);
      return cells.size() < PAGE_CELLS ? null : after(cells.get(cells.size() - 1).getKey());
    }
  }

  /**
   * The result of a read larger than one page: holds the first page and streams the rest from the
   * store on each iteration, until a write to its range copies it in full first
   * ({@link #copyAll}); iterators then continue in the copy at the position they reached.
   * Single-threaded, like the state.
   */
  static final class View<E> implements Iterable<E> {
    final Scan<?, E> scan;
    private final List<E> first;
    private final byte[] afterFirst;
    /** All elements, once a write touched the range; null while streaming. */
    List<E> copy;

    /** The container thread whose store the remaining pages are read from. */
    private final Thread owner = Thread.currentThread();

    View(Scan<?, E> scan, List<E> first, byte[] afterFirst) {
      this.scan = scan;
      this.first = first;
      this.afterFirst = afterFirst;
    }

    void copyAll() {
      if (copy == null) {
        List<E> all = new ArrayList<>(first);
        byte[] cursor = afterFirst;
        while (cursor != null) {
          cursor = scan.read(cursor, all);
        }
        copy = all;
      }
    }

    /**
     * @throws IllegalStateException if iterated on another thread than the one that read it while
     *     it still streams from the store (the store is confined to its container's thread)
     */
    @Override
    public Iterator<E> iterator() {
      if (copy == null && Thread.currentThread() != owner) {
        throw new IllegalStateException("a state read of more than " + PAGE_CELLS + " cells streams from its "
            + "container's store and cannot be iterated on another thread (" + Thread.currentThread().getName()
            + "); copy it (e.g. into a List) before putting it into an output that is nested deeper than a KV");
      }
      return new Iterator<E>() {
        private List<E> page = first;
        private int at;
        private byte[] next = afterFirst;
        private long emitted;

        @Override
        public boolean hasNext() {
          if (copy != null) {
            return emitted < copy.size();
          }
          while (at == page.size()) {
            if (next == null) {
              return false;
            }
            page = new ArrayList<>();
            at = 0;
            next = scan.read(next, page);
          }
          return true;
        }

        @Override
        public E next() {
          if (!hasNext()) {
            throw new NoSuchElementException();
          }
          if (copy != null) {
            return copy.get((int) emitted++);
          }
          emitted++;
          return page.get(at++);
        }
      };
    }

    @Override
    public String toString() {
      StringBuilder b = new StringBuilder("[");
      for (E e : this) {
        b.append(b.length() == 1 ? "" : ", ").append(e);
      }
      return b.append(']').toString();
    }
  }
}
