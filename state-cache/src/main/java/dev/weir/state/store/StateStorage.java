package dev.weir.state.store;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One unit of state storage: a set of named logical byte stores that commit together.
 *
 * <p>For RocksDB a storage is one RocksDB instance in one directory, and each logical store is a
 * column family. Writes to any of its stores are <em>staged</em>: they are visible to reads of the
 * same storage at once, but become durable only when {@link #commit(Map)} writes all of them,
 * together with the caller's metadata (source checkpoint marks, a timer index, ...), as one atomic
 * write batch. Reopening the directory restores exactly the state and metadata of the last commit;
 * staged writes that were never committed are gone. This is the same contract as Samza's
 * store-then-checkpoint commit, but atomic in one batch instead of ordered across two systems.
 *
 * <p>The in-memory storage has the same API but is not durable: writes apply at once, commit
 * only records the metadata, and close discards everything.
 *
 * <p>Threading: a storage and its stores are confined to one thread at a time (in the runner, the
 * container's run loop thread). {@link #stagedBytes()} may be read from any thread (possibly stale).
 */
public interface StateStorage extends AutoCloseable {

  /**
   * Returns the logical store with the given name, creating it on first use.
   *
   * @param name a non-empty store name; the prefix {@code __weir} is reserved
   * @return the store; the same instance for the same name while the storage is open
   * @throws IllegalArgumentException if the name is empty or reserved
   * @throws IllegalStateException if the storage is closed
   * @throws StateStoreException if the backend fails to create the store
   */
  SortedByteStore store(String name);

  /** Names of all logical stores that exist, including ones restored from disk. */
  Set<String> storeNames();

  /**
   * Atomically makes every staged write of every store durable together with {@code metadata},
   * which replaces the metadata of the previous commit.
   *
   * @param metadata caller metadata, key to bytes; may be empty, never null
   * @throws StateStoreException if the backend write fails; staged writes are then kept
   * @throws IllegalStateException if the storage is closed
   */
  void commit(Map<String, byte[]> metadata);

  /**
   * The metadata of the last successful commit (after reopening: the one restored from disk), or an
   * empty map if nothing was ever committed. The returned map is unmodifiable.
   */
  Map<String, byte[]> committedMetadata();

  /** Number of successful commits since the directory was created (restored across reopen). */
  long commitSequence();

  /**
   * Approximate size in bytes of keys and values staged since the last commit. A caller that holds
   * staged writes in memory (RocksDB keeps them in an indexed write batch) should commit when this
   * grows past its budget.
   */
  long stagedBytes();

  /** The directory this storage lives in, if it has one. */
  Optional<Path> directory();

  /**
   * Writes a self-contained copy of the last commit (stores and metadata) into the new directory
   * {@code target}, from which {@code open} restores exactly that commit; cheap where the backend
   * can share immutable files (RocksDB hard-links its SST files).
   *
   * @throws UnsupportedOperationException if the backend keeps nothing on disk (in-memory)
   * @throws IllegalStateException if writes are staged since the last commit, or the storage is closed
   * @throws StateStoreException naming {@code target} if the copy cannot be written
   */
  default void checkpointTo(Path target) {
    throw new UnsupportedOperationException("a " + getClass().getSimpleName() + " keeps nothing on disk and "
        + "cannot write a checkpoint to " + target);
  }

  /** Whether staged writes survive a crash only after {@link #commit(Map)} (true for RocksDB). */
  boolean isDurable();

  /**
   * Releases the backend. Uncommitted staged writes are discarded, open iterators are closed.
   * Idempotent.
   */
  @Override
  void close();
}
