package dev.weir.state.store.memory;

import dev.weir.state.store.ByteKeys;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StoreIterator;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.apache.samza.checkpoint.CheckpointId;
import org.apache.samza.storage.kv.Entry;
import org.apache.samza.storage.kv.KeyValueIterator;
import org.apache.samza.storage.kv.KeyValueSnapshot;

/**
 * A sorted in-memory byte store: a {@link ConcurrentSkipListMap} in unsigned lexicographic key
 * order. Iterators are weakly consistent (they may or may not see writes made while they are
 * open, and never throw because of them).
 *
 * <p>Arrays are kept by reference, as in Samza's in-memory store: do not mutate a key or value
 * after passing it to a put, nor an array returned by a get.
 *
 * <p>Threading: confined to the storage's owning thread.
 */
final class InMemoryStore implements SortedByteStore {

  private final String name;
  private final InMemoryStorage storage;
  private final ConcurrentSkipListMap<byte[], byte[]> map = new ConcurrentSkipListMap<>(ByteKeys.ORDER);

  InMemoryStore(String name, InMemoryStorage storage) {
    this.name = name;
    this.storage = storage;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public byte[] get(byte[] key) {
    Objects.requireNonNull(key, "key");
    storage.checkOpen();
    return map.get(key);
  }

  @Override
  public void put(byte[] key, byte[] value) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    storage.checkOpen();
    map.put(key, value);
  }

  @Override
  public void delete(byte[] key) {
    Objects.requireNonNull(key, "key");
    storage.checkOpen();
    map.remove(key);
  }

  @Override
  public StoreIterator<byte[], byte[]> range(byte[] from, byte[] to) {
    Objects.requireNonNull(from, "from");
    storage.checkOpen();
    return new MapIterator(to == null ? map.tailMap(from, true) : map.subMap(from, true, to, false));
  }

  @Override
  public StoreIterator<byte[], byte[]> all() {
    storage.checkOpen();
    return new MapIterator(map);
  }

  @Override
  public StoreIterator<byte[], byte[]> prefix(byte[] prefix) {
    Objects.requireNonNull(prefix, "prefix");
    return range(prefix, ByteKeys.prefixEnd(prefix));
  }

  /** Copies the range: in-memory state is small by contract, and a copy is trivially consistent. */
  @Override
  public KeyValueSnapshot<byte[], byte[]> snapshot(byte[] from, byte[] to) {
    Objects.requireNonNull(from, "from");
    storage.checkOpen();
    TreeMap<byte[], byte[]> copy =
        new TreeMap<>(to == null ? map.tailMap(from, true) : map.subMap(from, true, to, false));
    return new KeyValueSnapshot<>() {
      @Override
      public StoreIterator<byte[], byte[]> iterator() {
        return new MapIterator(copy);
      }

      @Override
      public void close() {
        copy.clear();
      }
    };
  }

  /** Nothing to flush: writes apply at once. */
  @Override
  public void flush() {
    storage.checkOpen();
  }

  /** Stores are closed with their storage. */
  @Override
  public void close() {}

  /** In-memory state has no files to checkpoint. */
  @Override
  public Optional<Path> checkpoint(CheckpointId id) {
    return Optional.empty();
  }

  void clear() {
    map.clear();
  }

  /** Adapts a map's entry iterator to samza-api's closeable iterator. */
  private final class MapIterator implements StoreIterator<byte[], byte[]> {
    private final Iterator<Map.Entry<byte[], byte[]>> entries;
    private boolean closed;

    MapIterator(NavigableMap<byte[], byte[]> view) {
      this.entries = view.entrySet().iterator();
    }

    @Override
    public boolean hasNext() {
      check();
      return entries.hasNext();
    }

    @Override
    public Entry<byte[], byte[]> next() {
      check();
      if (!entries.hasNext()) {
        throw new NoSuchElementException();
      }
      Map.Entry<byte[], byte[]> e = entries.next();
      return new Entry<>(e.getKey(), e.getValue());
    }

    private void check() {
      if (closed) {
        throw new IllegalStateException("iterator is closed");
      }
      storage.checkOpen();
    }

    @Override
    public void close() {
      closed = true;
    }
  }
}
