package dev.weir.runner.state;

import dev.weir.state.StateBackend;
import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.ObjectCache;
import dev.weir.state.cache.ObjectCacheSettings;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StateStorage;
import dev.weir.state.store.rocksdb.RocksDbSettings;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import org.apache.beam.sdk.annotations.Internal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of one container (one run-loop thread): one {@link StateStorage} of the configured
 * backend, one {@link ObjectCache} of {@code --objectCacheSize} entries and
 * {@code --objectCacheBytes} in front of it, and one cached store that every keyed operator of the
 * container's tasks shares, plus one raw store of event-time timer indexes ({@link #timerStore()},
 * see {@link dev.weir.runner.timers.TimerIndex}) committed with it. Operators are told apart by 4-byte ids
 * of their PTransforms' full names ({@link #operatorId}), so the same job reopened over the same
 * directory, or restored at another parallelism (keys placed by their
 * {@linkplain #keyGroups() key groups}), finds its cells and timers again; {@link CellLayout} lays
 * out every key under them.
 *
 * <p>Commits: operators call {@link #requestCommit()} when they finish a bundle that wrote state;
 * the container calls {@link #commitIfRequested()} once per run-loop iteration, so that several
 * tasks finishing bundles in one iteration cost one commit. A commit flushes the object cache's
 * dirty values in one batch and commits the storage atomically with a small metadata record.
 * RocksDB commits are not fsynced: a restore never reads the working store, only checkpoints
 * ({@link #checkpoint}, a RocksDB checkpoint of a commit, see {@code checkpoint.CheckpointStore}).
 * In a job that takes checkpoints, commits wait for them: between two checkpoints dirty values stay
 * in the object cache (written back only when evicted) and a hot value is encoded once per
 * checkpoint, not once per bundle.
 *
 * <p>Threading: confined to the container's thread; {@link #close()} runs there too, at the end of
 * the run loop (normal end, failure or cancel).
 */
@Internal
public final class ContainerState implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ContainerState.class);
  /** The name of the one store all operators of a container share. */
  public static final String STORE = "beam-state";
  /** The name of the store of event-time timer indexes. */
  public static final String TIMER_STORE = "beam-timers";
  /**
   * The version of the byte format of state cells and timers ({@link CellLayout}) this runner reads
   * and writes; recorded in every commit's metadata under {@link #LAYOUT_METADATA_KEY} and in every
   * checkpoint's plan fingerprint.
   */
  public static final int CELL_LAYOUT_VERSION = CellLayout.FORMAT_VERSION;
  /** The commit metadata key of {@link #CELL_LAYOUT_VERSION} (decimal, UTF-8); state committed without it is version 1. */
  public static final String LAYOUT_METADATA_KEY = "weir.cell-layout";

  private final StateStorage storage;
  private final ObjectCache cache;
  private final CachedStore store;
  private final String owner;
  /** Whether commits wait for checkpoints (see the constructor). */
  private final boolean commitAtCheckpoints;
  /** Staged bytes above which a job with checkpoints commits its working store between checkpoints. */
  public static final long STAGED_BYTES_LIMIT = 64L << 20;
  /** The job's key groups ({@link #keyGroups(KeyGroups)}); {@link KeyGroups#DEFAULT} until set. */
  private KeyGroups keyGroups = KeyGroups.DEFAULT;
  /** Key coders of keyed operators, by their state id (as an int), for {@link #describeCell}. */
  private final Map<Integer, org.apache.beam.sdk.coders.Coder<?>> keyCoders = new java.util.HashMap<>();
  /** The name behind every operator id handed out, by id (as an int): two names with one id are refused. */
  private final Map<Integer, String> operatorNames = new java.util.HashMap<>();
  private boolean commitRequested;
  private long commits;
  private boolean closed;
  /** Write-back buffers outside the object cache, flushed before every commit ({@link #beforeCommit}). */
  private final List<Runnable> beforeCommit = new ArrayList<>();

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
    this(backend, directory, cacheEntries, owner, false);
  }

  /**
   * Opens the storage; with {@code commitAtCheckpoints}, {@link #commitIfRequested()} leaves dirty
   * state in the object cache and staged writes in the storage until the next
   * {@link #checkpoint}, committing early only to bound the staged writes' memory
   * ({@value #STAGED_BYTES_LIMIT} bytes).
   *
   * @throws StateStoreException if RocksDB cannot open the directory
   */
  public ContainerState(StateBackend backend, Path directory, long cacheEntries, String owner,
      boolean commitAtCheckpoints) {
    this(backend, directory, ObjectCacheSettings.maximumEntries(Math.max(1, cacheEntries)), owner, commitAtCheckpoints);
  }

  /**
   * As {@link #ContainerState(StateBackend, Path, long, String, boolean)}, with the object cache
   * bounded by {@code cacheBounds} (e.g. {@code WeirSettings#objectCacheBounds()}: entries and bytes).
   */
  public ContainerState(StateBackend backend, Path directory, ObjectCacheSettings cacheBounds, String owner,
      boolean commitAtCheckpoints) {
    this(backend, directory, cacheBounds, null, owner, commitAtCheckpoints);
  }

  /**
   * As {@link #ContainerState(StateBackend, Path, ObjectCacheSettings, String, boolean)}, with sealed
   * state values encoded on {@code sealer}'s threads (the job's {@code SealerQueue}), or on the
   * container's thread if null.
   */
  public ContainerState(StateBackend backend, Path directory, ObjectCacheSettings cacheBounds, Executor sealer,
      String owner, boolean commitAtCheckpoints) {
    this.owner = owner;
    this.commitAtCheckpoints = commitAtCheckpoints;
    // No write-ahead log and no staged batch: a working directory is wiped at every start
    // (JobStateDirectory) and a job restores from checkpoints, each taken right after a commit with
    // the memtables flushed first; the log would write every commit twice, and the staged batch
    // (atomic commits of the directory itself) insert every write twice.
    this.storage = backend.open(directory, RocksDbSettings.defaults().withWriteAheadLog(false).withStagedWrites(false));
    checkLayout(storage, owner);
    this.cache = new ObjectCache(storage, cacheBounds, sealer);
    cache.describeKeysWith(key -> describeCell(key.bytes()));
    this.store = cache.store(STORE);
  }

  /**
   * Puts the object cache over a storage the caller opened, e.g. a host's own store (samza-core's
   * changelog-backed store in runner-samza); see the other constructor for {@code commitAtCheckpoints}.
   * {@link #close()} closes {@code storage}.
   */
  public ContainerState(StateStorage storage, ObjectCacheSettings cacheBounds, String owner, boolean commitAtCheckpoints) {
    this(storage, cacheBounds, null, owner, commitAtCheckpoints);
  }

  /**
   * As {@link #ContainerState(StateStorage, ObjectCacheSettings, String, boolean)}, with sealed state
   * values encoded on {@code sealer}'s threads, or on the container's thread if null.
   */
  public ContainerState(StateStorage storage, ObjectCacheSettings cacheBounds, Executor sealer, String owner,
      boolean commitAtCheckpoints) {
    this.owner = owner;
    this.commitAtCheckpoints = commitAtCheckpoints;
    this.storage = storage;
    checkLayout(storage, owner);
    this.cache = new ObjectCache(storage, cacheBounds, sealer);
    cache.describeKeysWith(key -> describeCell(key.bytes()));
    this.store = cache.store(STORE);
  }

  /**
   * Refuses state committed under another {@link CellLayout} version: read with this version's
   * keys it would look empty, or decode as garbage. Closes {@code storage} before throwing.
   *
   * @throws IllegalStateException naming the storage's directory (or {@code owner} if it has none)
   *     and both versions
   */
  private static void checkLayout(StateStorage storage, String owner) {
    Map<String, byte[]> committed = storage.committedMetadata();
    if (committed.isEmpty()) {
      return; // nothing committed yet: new state
    }
    byte[] recorded = committed.get(LAYOUT_METADATA_KEY);
    String version = recorded == null ? "1" : new String(recorded, StandardCharsets.UTF_8);
    if (!version.equals(Integer.toString(CELL_LAYOUT_VERSION))) {
      String where = storage.directory().map(Path::toString).orElse("the state store of " + owner);
      storage.close();
      throw new IllegalStateException("The state in " + where + " was written in Weir's state cell layout version "
          + version + ", but this Weir reads and writes version " + CELL_LAYOUT_VERSION + " (runner/state/CellLayout)"
          + ". Finish or drain the job with the Weir that started it, or start it fresh (--restoreMode=NONE, or "
          + "delete that state)");
    }
  }

  /** Commit metadata: the owner, the cell layout version, and {@code more}. */
  private Map<String, byte[]> commitMetadata(Map<String, byte[]> more) {
    Map<String, byte[]> all = new LinkedHashMap<>(more);
    all.put("weir.owner", owner.getBytes(StandardCharsets.UTF_8));
    all.put(LAYOUT_METADATA_KEY, Integer.toString(CELL_LAYOUT_VERSION).getBytes(StandardCharsets.UTF_8));
    return all;
  }

  /** A heap-only container state (memory backend), for tests and stateless setups. */
  public static ContainerState inMemory(long cacheEntries) {
    return new ContainerState(StateBackend.MEMORY, null, cacheEntries, "memory");
  }

  /**
   * The dedicated raw byte store of event-time timer indexes ({@link dev.weir.runner.timers.TimerIndex}), in the same
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
   * The 4-byte id under which {@code transform}'s keys of one key space live ({@link CellLayout#operatorId}):
   * the same for every instance of the PTransform, on every run.
   *
   * @param transform the PTransform's unique full name
   * @param space {@code "state"}, {@code "timer-index"} or {@code "timer-slot"}
   * @throws IllegalStateException naming both if another PTransform or space of this container has
   *     the same id (a 32-bit hash collision; renaming either PTransform resolves it)
   */
  public byte[] operatorId(String transform, String space) {
    CellLayout.claimOperatorId(operatorNames, transform, space);
    return CellLayout.operatorId(transform, space);
  }

  /**
   * Registers the key coder of the operator whose state id is {@code operatorId}, so that errors
   * about its state name keys as the coder renders them ({@link #describeCell}). Container thread.
   */
  public void keyCoder(byte[] operatorId, org.apache.beam.sdk.coders.Coder<?> keyCoder) {
    keyCoders.put(ByteBuffer.wrap(operatorId).getInt(), keyCoder);
  }

  /**
   * A state cell's key for an error message: the PTransform and state id, the key as its key coder
   * renders it (its bytes in hex if it cannot be decoded), and the namespace (window).
   */
  String describeCell(byte[] cell) {
    try {
      CellLayout.CellKey k = CellLayout.decodeCell(cell);
      String operator = operatorNames.getOrDefault(k.operator(), "operator " + Integer.toHexString(k.operator()));
      String key;
      try {
        org.apache.beam.sdk.coders.Coder<?> coder = keyCoders.get(k.operator());
        key = coder == null ? java.util.HexFormat.of().formatHex(k.keyBytes())
            : String.valueOf(org.apache.beam.sdk.util.CoderUtils.decodeFromByteArray(coder, k.keyBytes()));
      } catch (Exception e) {
        key = java.util.HexFormat.of().formatHex(k.keyBytes());
      }
      return "'" + k.stateId() + "' (" + operator + ") of key " + key + " in namespace " + k.namespace();
    } catch (RuntimeException e) {
      return java.util.HexFormat.of().formatHex(cell); // not a state cell of this format
    }
  }

  /**
   * Sets the job's key groups ({@code --maxParallelism}); before any operator opens over this state.
   * Container thread.
   */
  public void keyGroups(KeyGroups keyGroups) {
    this.keyGroups = keyGroups;
  }

  /** The job's key groups: how keys map to partitions. */
  public KeyGroups keyGroups() {
    return keyGroups;
  }

  /**
   * Registers {@code flush} to run before every commit and checkpoint of this state, so that a
   * write-back buffer kept outside the object cache (the timer indexes' pending writes,
   * {@link dev.weir.runner.timers.TimerIndex}) is in the storage when it commits. Container thread only.
   */
  public void beforeCommit(Runnable flush) {
    beforeCommit.add(flush);
  }

  private void flushBeforeCommit() {
    for (Runnable flush : beforeCommit) {
      flush.run();
    }
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
      if (commitAtCheckpoints) {
        if (storage.stagedBytes() > STAGED_BYTES_LIMIT) {
          // memory valve: the working store is not what a restore reads (checkpoints are), so an
          // early commit changes nothing a restore sees
          storage.commit(commitMetadata(Map.of()));
        }
        return false;
      }
      commit();
      return true;
    }
    return false;
  }

  /**
   * Commits every dirty value and staged write with {@code metadata} (the tasks' heap state and
   * source positions) and writes a self-contained copy of that commit into {@code target} (a RocksDB
   * checkpoint: hard links): the container's part of a job checkpoint.
   *
   * @throws UnsupportedOperationException on the memory backend
   * @throws dev.weir.state.store.StateStoreException naming {@code target} if it cannot be written
   */
  public void checkpoint(Map<String, byte[]> metadata, Path target) {
    Map<String, byte[]> all = commitMetadata(metadata);
    all.put("weir.commit", Long.toString(++commits).getBytes(StandardCharsets.UTF_8));
    long t0 = System.nanoTime();
    flushBeforeCommit();
    cache.flush();
    long t1 = System.nanoTime();
    storage.commit(all);
    long t2 = System.nanoTime();
    storage.checkpointTo(target);
    long t3 = System.nanoTime();
    LOG.debug("{}: checkpoint part written: cache flush {} ms, commit {} ms, RocksDB checkpoint {} ms", owner,
        (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, (t3 - t2) / 1_000_000);
  }

  /**
   * No state value handed out is half-changed now (an element or timer firing is done): see
   * {@link ObjectCache#safePoint()}. Runners-core changes its merging window set in place between
   * reading and writing it, so keyed operators call this after every element and firing, and the
   * run loop after every iteration (which also bounds the evicted values waiting for it).
   */
  public void safePoint() {
    cache.safePoint();
  }

  /** Flushes the object cache and commits the storage atomically. */
  public void commit() {
    commit(Map.of());
  }

  /**
   * Flushes the object cache and commits the storage atomically, with {@code more} in the commit
   * record (read back after a restart through the storage's {@code committedMetadata()}).
   */
  public void commit(Map<String, byte[]> more) {
    Map<String, byte[]> metadata = commitMetadata(more);
    metadata.put("weir.commit", Long.toString(++commits).getBytes(StandardCharsets.UTF_8));
    flushBeforeCommit();
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
