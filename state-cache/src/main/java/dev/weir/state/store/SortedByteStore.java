package dev.weir.state.store;

import java.util.List;
import java.util.Objects;
import org.apache.samza.storage.kv.Entry;
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

  /**
   * Puts every entry; on RocksDB they are staged in the storage's write batch and become durable
   * together at its commit.
   */
  @Override
  default void putAll(List<Entry<byte[], byte[]>> entries) {
    Objects.requireNonNull(entries, "entries");
    for (Entry<byte[], byte[]> entry : entries) {
      Objects.requireNonNull(entry, "entry");
      put(entry.getKey(), entry.getValue());
    }
  }

  /** Deletes every key; see {@link #putAll(List)}. */
  @Override
  default void deleteAll(List<byte[]> keys) {
    Objects.requireNonNull(keys, "keys");
    for (byte[] key : keys) {
      delete(key);
    }
  }

  /**
   * Whether {@link #getOffOwner} may read {@code key} on another thread now: the store can serve
   * reads concurrently with its owner's work, and no write of {@code key} waits in memory for the
   * next commit (a read off the owner sees only committed data). The answer stays true until the
   * owner next writes {@code key}. False by default.
   *
   * <p>Threading: the owning thread.
   */
  default boolean readableOffOwner(byte[] key) {
    return false;
  }

  /**
   * Reads {@code key}'s committed value from any thread, for a key {@link #readableOffOwner} just
   * allowed, while the owner does not write it (it may write other keys, commit, or read).
   *
   * @return the value bytes, or null if the key has none
   * @throws UnsupportedOperationException if this store never serves reads off its owner
   */
  default byte[] getOffOwner(byte[] key) {
    throw new UnsupportedOperationException(getClass().getSimpleName() + " serves reads on its owning thread only");
  }

  /**
   * Checks a store name a caller asked for: non-empty and not in the reserved {@code __weir}
   * namespace.
   *
   * @throws IllegalArgumentException naming the bad name
   */
  static String checkName(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isEmpty() || name.startsWith("__weir")) {
      throw new IllegalArgumentException(
          "store name must be non-empty and not start with '__weir', was '" + name + "'");
    }
    return name;
  }

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
