package dev.weir.state.store.rocksdb;

import dev.weir.state.store.ByteKeys;
import dev.weir.state.store.StoreIterator;
import java.util.NoSuchElementException;
import java.util.function.Consumer;
import org.apache.samza.storage.kv.Entry;
import org.rocksdb.AbstractRocksIterator;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * Iterates a RocksDB (or staged-batch-over-RocksDB) iterator over {@code [from, to)}.
 *
 * <p>The next entry is copied out of the native iterator as soon as the iterator is positioned on
 * it, so a write to the staged batch between two calls (which RocksDB says invalidates the current
 * key and value of a batch iterator) never corrupts an entry already returned or about to be.
 * Closing releases the native iterator; the owning storage closes iterators left open.
 *
 * <p>Threading: confined to the storage's owning thread.
 */
final class RocksDbIterator implements StoreIterator<byte[], byte[]> {

  private final RocksIterator iterator;
  private final byte[] to;
  private final ReadOptions ownedOptions;
  private final Consumer<AutoCloseable> onClose;
  private Entry<byte[], byte[]> next;
  private boolean closed;

  /**
   * @param iterator the native iterator, owned from now on
   * @param from the first key, inclusive; null to start at the first key
   * @param to the end, exclusive; null for unbounded
   * @param ownedOptions read options to close with the iterator, or null
   * @param onClose told when this iterator closes
   */
  RocksDbIterator(
      RocksIterator iterator, byte[] from, byte[] to, ReadOptions ownedOptions, Consumer<AutoCloseable> onClose) {
    this.iterator = iterator;
    this.to = to;
    this.ownedOptions = ownedOptions;
    this.onClose = onClose;
    if (from == null) {
      iterator.seekToFirst();
    } else {
      iterator.seek(from);
    }
    prefetch();
  }

  private void prefetch() {
    if (iterator.isValid()) {
      byte[] key = iterator.key();
      next = to != null && ByteKeys.ORDER.compare(key, to) >= 0 ? null : new Entry<>(key, iterator.value());
    } else {
      next = null;
      checkStatus(iterator);
    }
  }

  private static void checkStatus(AbstractRocksIterator<?> iterator) {
    try {
      iterator.status();
    } catch (RocksDBException e) {
      throw new IllegalStateException("RocksDB iteration failed: " + e.getMessage(), e);
    }
  }

  @Override
  public boolean hasNext() {
    checkOpen();
    return next != null;
  }

  @Override
  public Entry<byte[], byte[]> next() {
    checkOpen();
    Entry<byte[], byte[]> current = next;
    if (current == null) {
      throw new NoSuchElementException();
    }
    iterator.next();
    prefetch();
    return current;
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("iterator is closed");
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    next = null;
    iterator.close();
    if (ownedOptions != null) {
      ownedOptions.close();
    }
    onClose.accept(this);
  }
}
