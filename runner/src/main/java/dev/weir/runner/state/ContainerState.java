package dev.weir.runner.state;

import dev.weir.state.StateBackend;
import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.ObjectCache;
import dev.weir.state.cache.ObjectCacheSettings;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StateStorage;
import dev.weir.state.store.StateStoreException;
import dev.weir.state.store.rocksdb.RocksDbSettings;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.beam.sdk.annotations.Internal;

/**
 * The state of one container (one run-loop thread): one {@link StateStorage} of the configured
 * backend, one {@link ObjectCache} of {@code --objectCacheSize} entries in front of it, and one
 * cached store that every keyed operator of the container's tasks shares, plus one raw store of
 * event-time timer indexes ({@link #timerStore()}, see {@link TimerIndex}) committed with it.
 * Operators are told apart by 4-byte prefixes handed out by {@link #newOperatorPrefix()} in open
 * order, so the same job reopened over the same directory finds its cells and timers again;
 * {@link CellLayout} lays out every key under those prefixes.
 *
 * <p>Commits: operators call {@link #requestCommit()} when they finish a bundle that wrote state;
 * the container calls {@link #commitIfRequested()} once per run-loop iteration, so that several
 * tasks finishing bundles in one iteration cost one commit. A commit flushes the object cache's
 * dirty values in one batch and commits the storage atomically with a small metadata record.
 * RocksDB commits are not fsynced: Weir does not restore state after a crash yet (working state
 * left in a job's directory is wiped at its next start, see {@code executor.JobStateDirectory}),
 * so durability across crashes buys nothing yet.
 *
 * <p>Threading: confined to the container's thread; {@link #close()} runs there too, at the end of
 * the run loop (normal end, failure or cancel).
 */
@Internal
public final class ContainerState implements AutoCloseable {
  /** The name of the one store all operators of a container share. */
  public static final String STORE = "beam-state";
  /** The name of the store of event-time timer indexes. */
  public static final String TIMER_STORE = "beam-timers";

  private final StateStorage storage;
  private final ObjectCache cache;
  private final CachedStore store;
  private final String owner;
  private int nextOperator;
  private boolean commitRequested;
  private long commits;
  private boolean closed;

  /**
   * Opens the storage.
   *
   * @param backend which backend to open
   * @param directory the container's own directory (ignored by the memory backend)
   * @param cacheEntries object-cache bound in entries (at least 1)
   * @param owner a name for the commit metadata, e.g. the container's thread name
   * @throws StateStoreException if RocksDB cannot open the directory
   */
  public ContainerState(StateBackend backend, Path directory, long cacheEntries, String owner) {
    this.owner = owner;
    this.storage = backend.open(directory, RocksDbSettings.defaults().withSyncCommits(false));
    this.cache = new ObjectCache(storage, ObjectCacheSettings.maximumEntries(Math.max(1, cacheEntries)));
    this.store = cache.store(STORE);
  }

  /** A heap-only container state (memory backend), for tests and stateless setups. */
  public static ContainerState inMemory(long cacheEntries) {
    return new ContainerState(StateBackend.MEMORY, null, cacheEntries, "memory");
  }

  /**
   * The dedicated raw byte store of event-time timer indexes ({@link TimerIndex}), in the same
   * storage (so committed atomically with the state), not behind the object cache: the index is
   * read by range scans, which must not flush the state cache.
   */
  public SortedByteStore timerStore() {
    return storage.store(TIMER_STORE);
  }

  /** The shared cached store. */
  public CachedStore store() {
    return store;
  }

  /** The object cache (for statistics and tests). */
  public ObjectCache cache() {
    return cache;
  }

  /** The storage (for tests). */
  public StateStorage storage() {
    return storage;
  }

  /**
   * A fresh 4-byte prefix (big-endian int, 0, 1, ... in call order) that separates one operator
   * instance's cells from all others; see {@link CellLayout}.
   */
  public byte[] newOperatorPrefix() {
    return ByteBuffer.allocate(4).putInt(nextOperator++).array();
  }

  /** Asks for a commit at the end of the current run-loop iteration. */
  public void requestCommit() {
    commitRequested = true;
  }

  /**
   * Commits if a commit was requested since the last one.
   *
   * @return whether it committed (so that what waited for this commit, e.g. source checkpoint
   *     marks, may be finalized)
   */
  public boolean commitIfRequested() {
    if (commitRequested && !closed) {
      commitRequested = false;
      commit();
      return true;
    }
    return false;
  }

  /** Flushes the object cache and commits the storage atomically. */
  public void commit() {
    Map<String, byte[]> metadata = new LinkedHashMap<>(2);
    metadata.put("weir.owner", owner.getBytes(StandardCharsets.UTF_8));
    metadata.put("weir.commit", Long.toString(++commits).getBytes(StandardCharsets.UTF_8));
    cache.commit(metadata);
  }

  /** Number of commits so far. */
  public long commits() {
    return commits;
  }

  /** Drops the cache and closes the storage (uncommitted writes are discarded). Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      cache.close();
    } finally {
      storage.close();
    }
  }
}
