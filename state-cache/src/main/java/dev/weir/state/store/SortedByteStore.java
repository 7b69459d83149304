package dev.weir.state.store;

import org.apache.samza.storage.kv.KeyValueIterator;
import org.apache.samza.storage.kv.KeyValueStore;

/**
 * A logical byte store of a {@link StateStorage}: samza-api's {@link KeyValueStore} over
 * {@code byte[]} keys and values, ordered by unsigned lexicographic key order (RocksDB's default
 * bytewise comparator), plus prefix iteration.
 *
 * <p>Contract beyond samza-api's:
 *
 * <ul>
 *   <li>{@code null} keys or values throw {@link NullPointerException} naming the argument.
 *   <li>Any call after the owning storage is closed throws {@link IllegalStateException}.
 *   <li>{@link #range(Object, Object)} is {@code [from, to)}; {@code null} {@code to} means
 *       unbounded. Iterators must be closed; the storage closes any still open when it closes.
 *   <li>Writes are staged in the owning storage until its commit; {@link #flush()} commits the
 *       owning storage with its previous metadata unchanged (see {@link StateStorage#commit}).
 *   <li>Returned arrays are owned by the caller; arrays passed in are not retained after the call
 *       returns, except by the in-memory store, which keeps them (do not mutate them after a put).
 * </ul>
 *
 * <p>Threading: confined to the owning storage's thread.
 */
public interface SortedByteStore extends KeyValueStore<byte[], byte[]> {

  /** The store's name within its storage. */
  String name();

  /**
   * Iterates, in key order, over all entries whose key starts with {@code prefix}.
   *
   * @param prefix the key prefix; an empty prefix iterates over the whole store
   * @return an iterator the caller must close
   */
  StoreIterator<byte[], byte[]> prefix(byte[] prefix);

  /** {@inheritDoc} The iterator is closeable by try-with-resources. */
  @Override
  StoreIterator<byte[], byte[]> range(byte[] from, byte[] to);

  /** {@inheritDoc} The iterator is closeable by try-with-resources. */
  @Override
  StoreIterator<byte[], byte[]> all();
}
