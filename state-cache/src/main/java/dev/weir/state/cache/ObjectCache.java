package dev.weir.state.cache;

import dev.weir.state.store.StateStorage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A write-back cache of decoded state values, each held with its Beam {@code Coder}, in front of
 * the byte stores of one {@link StateStorage}.
 *
 * <h2>Why objects, not bytes</h2>
 *
 * A Beam runner reads and writes state once or more per element: a counter's read-modify-write,
 * a bag append, a timer. A byte cache (Kafka Streams' {@code ThreadCache}) still decodes on every
 * read and encodes on every write; in LinkedIn's 2020 Nexmark profiles of Beam's Samza runner that
 * was 38% of CPU in Q4. This cache keeps the decoded object and the coder that can encode it
 * later, so a hit costs a hash lookup, and a value written many times between two commits is
 * encoded once. The idea is the one Beam's Samza runner used ({@code SamzaStoreStateInternals}
 * stores {@code StateValue.of(value, coder)}); the cache in front of the store is Samza's
 * {@code CachedStore} (a write-behind LRU with a dirty list).
 *
 * <h2>Which entry leaves</h2>
 *
 * The table of entries and its eviction order are an {@link EntryTable}, chosen by {@link
 * ObjectCacheSettings#eviction()}: least recently used by default ({@link LruEntryTable}), or
 * Caffeine's W-TinyLFU ({@link CaffeineEntryTable}), which this cache used until 2026-11. Stream
 * state is touched in bursts per key and window, and merging windows move a key's state to new
 * cells on every element; frequency-based admission turned those new cells away (evicted dirty,
 * written back and read again by the key's next element), and its sketch and buffers cost more
 * per access than a linked list. Measured interleaved at 1,000,000 events: Nexmark Q11 1.23x and
 * Q5 1.14x faster with LRU, at the same number of evictions (runner/BENCHMARKS.md).
 *
 * <h2>Entry states</h2>
 *
 * Each entry ({@link CacheEntry}) is CLEAN (equal to the byte store; a null value caches "absent",
 * so repeated reads of a key the store was asked for and lacks do not hit RocksDB again), DIRTY (a
 * put or a delete, the latter a tombstone, not yet written to the byte store) or EVICTED (gone
 * from the cache).
 *
 * <ul>
 *   <li><b>Read hit</b>: return the object, no decoding. <b>Miss</b>: if the store's filter of
 *       stored keys ({@link StoredKeyFilter}) rules the key out, answer "absent" and cache nothing;
 *       else read the bytes, decode once with the caller's coder, cache as CLEAN.
 *   <li><b>Write or delete</b>: cache the object (or tombstone) as DIRTY and append the entry to its
 *       store's dirty list; nothing is encoded. A delete of a key the byte store is known not to
 *       hold (it was loaded absent, written while the filter ruled it out, or its last write-back
 *       was a delete) drops the entry from the cache instead: a cell created and cleared between
 *       two write-backs never costs the store a put or a tombstone, nor a live cell its place.
 *   <li><b>Sealed write</b> ({@link CachedStore#putSealed}): for a value its writer will not
 *       change again and does not expect to read soon (a bag's full chunk), encode it at once and
 *       cache only the bytes, DIRTY as any write: the heap then holds the value at its encoded
 *       size, and young collections copy one array instead of its objects. Write-backs write those
 *       bytes as they are; a read decodes them once and caches the object in their place. With a
 *       sealer executor the encoding runs on its threads instead, and the bytes replace the
 *       object at the owning thread's next safe point if the entry still holds it ({@link
 *       BackgroundSealer}): a value read before that costs no decode at all.
 *   <li><b>Flush</b> (and {@link #commit}): walk each store's dirty list, encode every entry still
 *       DIRTY, write them to the byte store in one {@code putAll}/{@code deleteAll}, mark them CLEAN.
 *   <li><b>Eviction</b>: the table's eviction listener runs synchronously, right after the victim
 *       left the table, inside the call that went over the bound; a DIRTY victim is encoded and
 *       written to the byte store there, before that call returns, so a later miss reads it back.
 *       An evicted dirty entry is never lost.
 * </ul>
 *
 * With a RocksDB storage, "written to the byte store" means staged in the storage's write batch;
 * {@link #commit} then makes everything durable atomically together with the caller's metadata.
 *
 * <h2>Hazards (as in Samza's CachedStore)</h2>
 *
 * <ul>
 *   <li>Values are cached <em>by reference</em> but stored <em>by value</em>: a caller must treat a
 *       value as immutable once it has passed it to {@code put} or received it from {@code get}.
 *       To change state, put a new object. Mutating a cached value in place silently changes what
 *       is written back later (or not, if the entry was already flushed).
 *   <li>A key must be read and written with equal coders.
 *   <li>Range and prefix reads flush the store's dirty entries first (all but those touched since
 *       the last safe point outside the range, see below), then iterate the byte store (decoding
 *       only entries not in the cache). Merging a sorted view of the dirty objects into the byte
 *       iterator would need an ordered index of dirty keys, paid on every write, for reads that
 *       are rare on hot paths; a flush costs encodes that the next commit would pay anyway.
 *   <li><b>Changes in place between safe points.</b> Not every caller keeps the rule above:
 *       runners-core's {@code MergingActiveWindowSet} reads its window map, changes it in place
 *       while it merges (a NEW window maps to an empty set for a moment), cleans up, and writes
 *       only if the map then differs from a copy it took at the read. Encoding that object in
 *       between (an eviction, a flush for a range read) stored the half-merged map while the
 *       entry looked clean, and a later read failed with "Unexpected empty state address window
 *       set" (Nexmark Q4, about one run in two). So the caller marks the points where no value is
 *       half-changed ({@link #safePoint()}: the runner calls it after every element and timer
 *       firing), every read and write stamps the entry with the current epoch, and an entry
 *       touched since the last safe point is never encoded before the next one: a dirty victim of
 *       eviction waits in a small map (still readable; the next safe point writes it with what the
 *       object holds then), and range reads leave such entries outside their range dirty. Flink's
 *       heap state backend hands out objects by reference too, and is safe only because it
 *       snapshots between elements.
 *   <li>A coder that throws during an eviction write-back must not throw out of the eviction (Caffeine
 *       would log and swallow it, and the value would be lost; the LRU table would be left
 *       mid-eviction); the failure is kept and rethrown by the next
 *       {@link #flush()} or {@link #commit}, so a broken state value never becomes durable.
 * </ul>
 *
 * <h2>Bounds</h2>
 *
 * By entries, or by entries and estimated bytes ({@link ObjectCacheSettings#bounded}): an entry's
 * bytes are its value's size when last decoded or encoded plus its key and a fixed overhead, since
 * a decoded object's heap size is unknown without walking it; values encoded by a flush are weighed
 * again if their size moved. A writer that grows a value in place between write-backs (a bag's
 * last chunk) gives its own estimate with each put ({@link CachedStore#put(StateKey, Object,
 * org.apache.beam.sdk.coders.Coder, int)}), weighed again the same way. Dirty victims are written
 * back under either bound.
 *
 * <h2>Readable before stored</h2>
 *
 * A value is only ever decoded after it left the cache, possibly in another run after a restore;
 * a coder whose {@code decode} cannot read what its {@code encode} wrote would go unnoticed while
 * its values fit in the cache, and then make every checkpoint holding them useless. So the first
 * encoding of each coder (by identity) that is written to the storage is decoded back first
 * ({@link #checkReadable}); if that fails, the write fails, naming the value's key as the owner
 * renders it ({@link #describeKeysWith}) and the coder, and nothing unreadable is stored. Cost:
 * one decode per coder over the cache's life, and one identity-map lookup per value written, so
 * callers reuse coder instances: the runner's per-operator {@code StateCoders} keeps one wrapper
 * per state coder (a wrapper per key and window once slowed Nexmark Q5).
 *
 * <h2>Threading</h2>
 *
 * Confined to one thread (the container's run loop), like its storage, except the encoding of
 * sealed values when a sealer executor is given ({@link BackgroundSealer}: its threads only read
 * the values and hand bytes back through a queue the owning thread drains). Eviction and its
 * write-back happen synchronously inside the call that went over the bound (for entries touched
 * since the last safe point, at that safe point); the Caffeine table runs its maintenance on the
 * calling thread ({@code executor(Runnable::run)}) for that. {@link #stats()} may
 * be called from any thread and may see slightly stale counts.
 */
public final class ObjectCache implements AutoCloseable {

  private final StateStorage storage;
  private final ObjectCacheSettings settings;
  /** Encodes sealed values off the owning thread ({@link BackgroundSealer}); null: sealed puts encode inline. */
  final BackgroundSealer sealer;
  /** The live entries and the eviction policy ({@link ObjectCacheSettings#eviction()}). */
  final EntryTable table;
  /** Stores by name. Only from the owning thread. */
  private final Map<String, CachedStore> stores = new LinkedHashMap<>();
  /** The same stores, republished on each new store, for {@link #stats()} from other threads. */
  private volatile CachedStore[] storesForStats = new CachedStore[0];
  /** A failure inside the eviction listener, rethrown by the next flush. Only from the owning thread. */
  private RuntimeException writeBackFailure;
  /** The safe-point epoch (see the class comment); entries touched since the last safe point carry it. Owning thread only. */
  int epoch;
  /**
   * Dirty entries evicted while touched in the current epoch, not yet encoded: readable (a read or
   * write takes the entry back into the cache) until the next safe point writes them back. At
   * most the entries one element evicts. Owning thread only.
   */
  private final HashMap<StateKey, CacheEntry> deferred = new HashMap<>();
  private boolean closed;
  /** {@link ObjectCacheSettings#byteBounded()}. */
  final boolean byteBounded;
  /**
   * Byte-bounded caches: entries whose byte estimate moved away from the one they were weighed
   * with (they were just encoded), to be weighed again at the next flush or safe point. Owning
   * thread only.
   */
  private final ArrayList<CacheEntry> resized = new ArrayList<>();
  /**
   * Byte-bounded caches: the sum of the cached entries' byte estimates, without the per-entry floor
   * (the table's weight includes it). Written by the owning thread only, read racily by stats().
   */
  long estimatedBytes;

  // Counters: written by the owning thread only, read racily by stats().
  long hits;
  long misses;
  long evictions;
  long dirtyWriteBacks;
  long flushedEntries;
  long elidedDeletes;
  long absentByFilter;
  long bytesEncoded;
  long bytesDecoded;
  /**
   * Coders one of whose encodings was decoded back ({@link #checkReadable}); owning thread. Cleared
   * when it reaches {@value #MAX_CHECKED_CODERS} coders: a caller that builds a coder per value
   * then pays a decode per write (and is a bug to fix), but never unbounded memory.
   */
  private final java.util.IdentityHashMap<org.apache.beam.sdk.coders.Coder<?>, Boolean> readableCoders =
      new java.util.IdentityHashMap<>();
  /** Renders a value's key in the error of {@link #checkReadable}. */
  static final int MAX_CHECKED_CODERS = 4096;
  private java.util.function.Function<StateKey, String> keyDescriber = StateKey::toString;
  private long flushes;
  private long flushNanos;

  /**
   * Creates a cache in front of {@code storage}. The cache does not own the storage: closing the
   * cache leaves the storage open.
   *
   * @param storage the byte stores to cache
   * @param settings the size bound
   */
  public ObjectCache(StateStorage storage, ObjectCacheSettings settings) {
    this(storage, settings, null);
  }

  /**
   * Creates a cache in front of {@code storage} whose sealed puts ({@link CachedStore#putSealed})
   * are encoded on {@code sealer}'s threads rather than the caller's ({@link BackgroundSealer}).
   * The cache does not own the storage or the executor: closing the cache leaves both as they are.
   *
   * @param storage the byte stores to cache
   * @param settings the size bound
   * @param sealer runs the encodings of sealed values (e.g. a {@link SealerQueue}), or null to
   *     encode them on the owning thread at the put
   */
  public ObjectCache(StateStorage storage, ObjectCacheSettings settings, java.util.concurrent.Executor sealer) {
    this.storage = Objects.requireNonNull(storage, "storage");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.sealer = sealer == null ? null : new BackgroundSealer(sealer);
    this.byteBounded = settings.byteBounded();
    long maximumWeight;
    java.util.function.ToIntFunction<CacheEntry> weigher;
    if (byteBounded) {
      int floor = (int) Math.min(Integer.MAX_VALUE, settings.entryFloorBytes());
      maximumWeight = settings.maximumBytes();
      weigher = e -> Math.max(floor, weighBytes(e));
    } else if (settings.weighted()) {
      ObjectCacheSettings.Weigher byCaller = settings.weigher();
      maximumWeight = settings.maximumWeight();
      weigher = e -> byCaller.weigh(e.key.bytes, e.value);
    } else {
      maximumWeight = settings.maximumEntries();
      weigher = null;
    }
    this.table = switch (settings.eviction()) {
      case LRU -> new LruEntryTable(maximumWeight, weigher, this::onEviction);
      case W_TINY_LFU -> new CaffeineEntryTable(maximumWeight, weigher, this::onEviction);
    };
  }

  /**
   * Sets how a value's key is named when its coder cannot decode it back ({@link #checkReadable}),
   * e.g. the runner's transform, state id and key as the key coder renders it. Owning thread.
   */
  public void describeKeysWith(java.util.function.Function<StateKey, String> describer) {
    this.keyDescriber = Objects.requireNonNull(describer, "describer");
  }

  /**
   * Decodes {@code encoded} back with {@code coder} unless one of that coder's encodings was
   * before (see the class comment). Owning thread, before the bytes are written to the storage.
   *
   * @throws IllegalStateException naming the key ({@link #describeKeysWith}) and the coder, with
   *     the coder's failure as its cause, if it cannot decode them
   */
  void checkReadable(StateKey key, org.apache.beam.sdk.coders.Coder<?> coder, byte[] encoded) {
    if (readableCoders.containsKey(coder)) {
      return;
    }
    try {
      org.apache.beam.sdk.util.CoderUtils.decodeFromByteArray(coder, encoded);
    } catch (Exception | LinkageError e) {
      throw new IllegalStateException("Cannot store the state " + keyDescriber.apply(key) + ": its coder " + coder
          + " cannot decode what it encoded (" + e + "), so the value could never be read back after an eviction "
          + "or a restore. Fix the coder: decode must read exactly what encode wrote", e);
    }
    if (readableCoders.size() >= MAX_CHECKED_CODERS) {
      readableCoders.clear();
    }
    readableCoders.put(coder, Boolean.TRUE);
  }

  /**
   * Puts the encodings that sealer threads finished in place of their values (see {@link
   * BackgroundSealer}); values replaced, deleted or evicted since keep what they have. Owning thread.
   */
  void installSeals() {
    if (sealer != null && sealer.hasDone()) {
      sealer.drain(job -> job.entry.key.store.installSeal(job));
    }
  }

  /**
   * Returns the cached view of the byte store {@code name} of the storage, creating it on first
   * use.
   *
   * @throws IllegalStateException if the cache is closed
   */
  public CachedStore store(String name) {
    checkOpen();
    Objects.requireNonNull(name, "name");
    CachedStore store = stores.get(name);
    if (store == null) {
      store = new CachedStore(this, storage.store(name));
      stores.put(name, store);
      storesForStats = stores.values().toArray(new CachedStore[0]);
    }
    return store;
  }

  /**
   * Encodes every dirty entry of every store and writes them to the byte stores (staged in the
   * storage until its commit). Entries stay cached, now clean.
   *
   * @throws IllegalStateException if an earlier eviction write-back failed (with that failure as
   *     cause) or the cache is closed
   * @throws org.apache.beam.sdk.coders.CoderException wrapped in an {@link IllegalStateException}
   *     if a coder fails
   */
  public void flush() {
    checkOpen();
    long start = System.nanoTime();
    rethrowWriteBackFailure();
    installSeals(); // finished encodings are written as they are
    writeBackDeferred();
    for (CachedStore store : stores.values()) {
      store.flushDirty();
    }
    reweigh();
    epoch++;
    flushes++;
    flushNanos += System.nanoTime() - start;
  }

  /**
   * Declares that no value handed out by this cache is half-changed now (between two elements or
   * timer firings): dirty entries evicted since the last safe point are encoded and written back,
   * and entries touched from now on count as touched in a new epoch. Callers that change values
   * in place between a read and a write (see the class comment) must call it whenever they are
   * done with a unit of work; {@link #flush()} and {@link #commit} are safe points too. Also puts
   * the encodings background sealers finished in place ({@link BackgroundSealer}). Cheap when
   * nothing was evicted or sealed (a few checks and an increment).
   *
   * @throws IllegalStateException if a coder fails to encode a deferred value (state is then not
   *     committed), or the cache is closed
   */
  public void safePoint() {
    installSeals();
    if (!resized.isEmpty()) {
      reweigh(); // may defer dirty victims touched in this epoch: written just below
    }
    if (!deferred.isEmpty()) {
      checkOpen();
      writeBackDeferred();
    }
    epoch++;
  }

  /**
   * The byte estimate of an entry (see {@link ObjectCacheSettings}): the fixed overhead, the key's
   * length and the value's last encoded size (its store's mean if never encoded; 0 for absent).
   * Called by the table whenever it weighs the entry; remembers the estimate in the entry and keeps
   * {@link #estimatedBytes} up to date.
   */
  private int weighBytes(CacheEntry e) {
    int estimate = (int) Math.min(Integer.MAX_VALUE, estimatedBytesOf(e));
    estimatedBytes += estimate - e.weighedBytes;
    e.weighedBytes = estimate;
    return estimate;
  }

  /**
   * An entry's byte estimate (see {@link ObjectCacheSettings#bounded}): the fixed overhead, its key,
   * and its value's size when last decoded or encoded (its store's mean if never; 0 if absent).
   */
  private static long estimatedBytesOf(CacheEntry e) {
    long value = e.value == null ? 0 : e.encodedBytes >= 0 ? e.encodedBytes : e.key.store.meanValueBytes();
    return ObjectCacheSettings.ENTRY_OVERHEAD_BYTES + (long) e.key.bytes.length + value;
  }

  /** Accounts for an entry removed explicitly (not evicted: the eviction listener does not run). */
  void removed(CacheEntry entry) {
    estimatedBytes -= entry.weighedBytes;
    entry.weighedBytes = 0;
  }

  /**
   * Byte-bounded caches: notes that {@code entry}'s value size is newly known (it was just decoded
   * or encoded) or newly estimated (a put with a size hint); if its estimate moved by more than a
   * quarter (and 64 bytes) from the one it was weighed with, it is weighed again at the next flush
   * or safe point.
   */
  void resized(CacheEntry entry) {
    if (entry.reweighQueued) {
      return; // weighed again soon anyway, with the estimate it has then
    }
    long estimate = estimatedBytesOf(entry);
    long drift = Math.abs(estimate - entry.weighedBytes);
    if (entry.weighedBytes != 0 && drift > 64 && drift > entry.weighedBytes / 4) {
      entry.reweighQueued = true;
      resized.add(entry);
    }
  }

  /**
   * Weighs the {@link #resized} entries again (a put of the same entry makes the table weigh it and
   * evict down to the bound, writing back dirty victims as usual). Entries evicted since are skipped.
   */
  private void reweigh() {
    if (resized.isEmpty()) {
      return;
    }
    try {
      for (int i = 0; i < resized.size(); i++) {
        CacheEntry entry = resized.get(i);
        if (entry.state != CacheEntry.State.EVICTED && table.peek(entry.key) == entry) {
          table.put(entry.key, entry);
        }
      }
    } finally {
      for (int i = 0; i < resized.size(); i++) {
        resized.get(i).reweighQueued = false;
      }
      resized.clear();
    }
    rethrowWriteBackFailure();
  }

  /** Takes a deferred (evicted, not yet written) entry back, or returns null; the caller re-admits it. */
  /** Whether {@code key} is a deferred dirty victim (see {@link #deferred}). Owning thread only. */
  boolean isDeferred(StateKey key) {
    return !deferred.isEmpty() && deferred.containsKey(key);
  }

  CacheEntry takeDeferred(StateKey key) {
    return deferred.isEmpty() ? null : deferred.remove(key);
  }

  private void writeBackDeferred() {
    if (deferred.isEmpty()) {
      return;
    }
    try {
      for (CacheEntry entry : deferred.values()) {
        if (table.peek(entry.key) == entry) {
          continue; // back in the cache (a weighed re-put): stays dirty there
        }
        if (entry.state == CacheEntry.State.DIRTY) {
          dirtyWriteBacks++;
          entry.key.store.writeBack(entry);
        }
        entry.state = CacheEntry.State.EVICTED;
        entry.value = null;
      }
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "an evicted dirty state value could not be written back; state is not committed", e);
    } finally {
      deferred.clear();
    }
  }

  /**
   * Flushes, then commits the storage with {@code metadata}: every dirty value of every store and
   * the metadata become durable in one atomic write (for RocksDB). Reopening the storage restores
   * exactly this state and metadata.
   *
   * @param metadata caller metadata (e.g. source checkpoint marks), replacing the previous commit's
   * @throws IllegalStateException as {@link #flush()}
   * @throws dev.weir.state.store.StateStoreException if the storage fails to commit
   */
  public void commit(Map<String, byte[]> metadata) {
    flush();
    storage.commit(metadata);
  }

  /**
   * Evicts every entry through the size bound (so the eviction listener writes dirty entries
   * back), leaving an empty cache with the same bound. For tests and for shedding memory.
   */
  public void evictAll() {
    checkOpen();
    table.evictAll();
    rethrowWriteBackFailure();
    writeBackDeferred();
  }

  /** The storage under this cache. */
  public StateStorage storage() {
    return storage;
  }

  /** The size bound. */
  public ObjectCacheSettings settings() {
    return settings;
  }

  /**
   * Current counters. Exact on the owning thread; from another thread (a metrics reporter) they
   * may be slightly stale, which is fine for monitoring.
   */
  public ObjectCacheStats stats() {
    long dirty = 0;
    for (CachedStore store : storesForStats) {
      dirty += store.dirtyEntries();
    }
    return new ObjectCacheStats(hits, misses, evictions, dirtyWriteBacks, flushedEntries,
        bytesEncoded, bytesDecoded, flushes, flushNanos, table.size(), dirty, elidedDeletes, absentByFilter,
        byteBounded ? estimatedBytes : -1);
  }

  /**
   * Drops every cached entry <em>without</em> writing dirty ones back (uncommitted state is
   * discarded, as when a storage closes). Does not close the storage. Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    table.clear(); // explicit removal: the eviction listener does not run
    estimatedBytes = 0;
    deferred.clear();
    stores.values().forEach(CachedStore::discardDirty);
  }

  void checkOpen() {
    if (closed) {
      throw new IllegalStateException("object cache is closed");
    }
  }

  /** The table's eviction listener: runs synchronously, right after the entry left the table. */
  private void onEviction(StateKey key, CacheEntry entry) {
    evictions++;
    estimatedBytes -= entry.weighedBytes;
    entry.weighedBytes = 0; // weighed afresh if taken back from the deferred map
    if (entry.state == CacheEntry.State.DIRTY && entry.touched == epoch) {
      deferred.put(key, entry); // possibly half-changed by its reader: written at the next safe point
      return;
    }
    try {
      if (entry.state == CacheEntry.State.DIRTY) {
        dirtyWriteBacks++;
        key.store.writeBack(entry);
      }
    } catch (RuntimeException e) {
      if (writeBackFailure == null) {
        writeBackFailure = e;
      } else {
        writeBackFailure.addSuppressed(e);
      }
    } finally {
      entry.state = CacheEntry.State.EVICTED;
      entry.value = null; // the dirty list may still point at it; let the value go
    }
  }

  private void rethrowWriteBackFailure() {
    RuntimeException failure = writeBackFailure;
    if (failure != null) {
      throw new IllegalStateException(
          "an evicted dirty state value could not be written back; state is not committed", failure);
    }
  }
}
