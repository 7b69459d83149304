package dev.weir.state.cache;

import dev.weir.state.cache.CacheEntry.State;
import dev.weir.state.store.ByteKeys;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StoreIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.samza.storage.kv.Entry;
import org.apache.samza.storage.kv.KeyValueIterator;

/**
 * The cached view of one byte store of an {@link ObjectCache}: typed reads and writes of state
 * cells, each value with its coder. See {@link ObjectCache} for the mechanism and its hazards.
 *
 * <p>Threading: confined to the cache's owning thread.
 */
public final class CachedStore {

  private final ObjectCache owner;
  private final SortedByteStore bytes;
  /**
   * Entries made dirty since the last flush, in the order they became dirty; an entry may have
   * been evicted (and written back) since, which the flush skips. Only from the owning thread.
   */
  private ArrayList<CacheEntry> dirty = new ArrayList<>();
  /**
   * Entries of this store currently DIRTY (in the cache, not yet written back). At most the cache's
   * entry bound, so it also bounds the dirty list after compaction. Only from the owning thread.
   */
  private int dirtyLive;

  /**
   * A running mean (exponentially weighted, 1/16 per value) of the encoded sizes of this store's
   * values, in bytes: the byte bound's estimate for a value never encoded (ObjectCacheSettings).
   * Only from the owning thread.
   */
  private int meanValueBytes = 64;

  /** The keys the byte store may hold (see {@link StoredKeyFilter}); built from the store's keys at construction. */
  private final StoredKeyFilter stored = new StoredKeyFilter(0);

  CachedStore(ObjectCache owner, SortedByteStore bytes) {
    this.owner = owner;
    this.bytes = bytes;
    rebuildFilter();
  }

  /** The store's name. */
  public String name() {
    return bytes.name();
  }

  /**
   * The byte store underneath; writing to it directly bypasses (and may contradict) the cache.
   * Handing it out turns off the filter of stored keys for good, so that keys written there are
   * still found by the cache's reads.
   */
  public SortedByteStore byteStore() {
    stored.disable();
    return bytes;
  }

  /**
   * Wraps encoded key bytes for repeated use with this store (hash computed once).
   *
   * @param key the encoded key, kept by reference: do not modify it afterwards
   */
  public StateKey key(byte[] key) {
    return new StateKey(this, Objects.requireNonNull(key, "key"));
  }

  /** Reads {@code key}; see {@link #get(StateKey, Coder)}. */
  public <V> V get(byte[] key, Coder<V> coder) {
    return get(key(key), coder);
  }

  /**
   * Reads the value of {@code key}: the cached object on a hit, else the stored bytes decoded once
   * with {@code coder} and cached.
   *
   * @return the value, or null if the key has no value; treat it as immutable
   * @throws IllegalStateException if the stored bytes cannot be decoded with {@code coder}
   */
  @SuppressWarnings("unchecked")
  public <V> V get(StateKey key, Coder<V> coder) {
    checkKey(key);
    Objects.requireNonNull(coder, "coder");
    owner.checkOpen();
    CacheEntry entry = owner.table.get(key);
    if (entry != null && entry.state != State.EVICTED) {
      return hit(entry, coder);
    }
    entry = owner.takeDeferred(key);
    if (entry != null) {
      owner.hits++; // evicted since the last safe point, not yet written: still the latest value
      V value = entry.encoded ? unseal(entry, coder) : (V) entry.value;
      entry.touched = owner.epoch;
      owner.table.put(key, entry);
      return value;
    }
    owner.misses++;
    if (!stored.mightContain(key.hashCode())) {
      // Never written: absent without a store lookup, and not cached either. The probe costs less
      // than a cache entry, which a merging-window job would insert and evict for nearly every
      // element (runners-core reads each new proto-window's cells once; runner/BENCHMARKS.md).
      owner.absentByFilter++;
      return null;
    }
    byte[] found = bytes.get(key.bytes);
    V value = found == null ? null : decode(key.bytes, found, coder);
    CacheEntry loaded = new CacheEntry(key, value, coder, State.CLEAN, value != null, owner.epoch);
    if (found != null) {
      sawValueBytes(loaded, found.length);
    }
    owner.table.put(key, loaded);
    return value;
  }

  /**
   * Reads {@code key} as {@link #get(StateKey, Coder)} does, except a miss that the byte store can
   * serve off this thread: that comes back unloaded, as an {@link OffOwnerLoad} to
   * {@linkplain OffOwnerLoad#load load} on any thread and {@linkplain OffOwnerLoad#install
   * install} back on this one. So a hit, a deferred entry and a key the filter of stored keys rules
   * out are answered here as by {@code get} (one cache lookup), and so is a miss the byte store
   * can serve only here (a write of the key is staged, or the store never serves other threads,
   * e.g. the in-memory one). Counts a hit or a miss as {@code get} does.
   *
   * <p>Why: a job whose DoFns run on worker threads (Weir's concurrent {@code @ProcessElement})
   * keeps this cache on the container thread, but RocksDB reads are thread-safe; loading misses on
   * the workers runs them in parallel, as Samza's study of asynchronous processing did with a
   * thread-safe store (2017: 1.6x with a pool of 8, 2.2x with 3 in flight per task, every read a miss).
   *
   * <p>Threading: the owning thread.
   *
   * @return the value (null if the key has none; treat it as immutable), or an {@link OffOwnerLoad}
   * @throws IllegalStateException if stored bytes read here cannot be decoded with {@code coder}
   */
  public <V> Object getOrOffOwnerLoad(StateKey key, Coder<V> coder) {
    checkKey(key);
    Objects.requireNonNull(coder, "coder");
    owner.checkOpen();
    CacheEntry entry = owner.table.get(key);
    if (entry != null && entry.state != State.EVICTED) {
      return hit(entry, coder);
    }
    if (!owner.isDeferred(key) && stored.mightContain(key.hashCode()) && bytes.readableOffOwner(key.bytes)) {
      owner.misses++;
      return new OffOwnerLoad<>(this, key, coder);
    }
    return get(key, coder); // deferred, ruled out, or only readable here
  }

  /**
   * A miss of one key that any thread may load from the byte store ({@link #getOrOffOwnerLoad}); the
   * loaded value is cached once the owner {@linkplain #install installs} it. Until then the owner
   * must not write the key (Weir: the key's call is in flight, and the install is posted before
   * any write the call makes).
   *
   * @param <V> the value's type
   */
  public static final class OffOwnerLoad<V> {
    private final CachedStore store;
    private final StateKey key;
    private final Coder<V> coder;
    /** Bytes {@link #load} read; -1 if the key had no value. Written by the loading thread, read by the owner after a hand-over. */
    private int loadedBytes = -1;

    OffOwnerLoad(CachedStore store, StateKey key, Coder<V> coder) {
      this.store = store;
      this.key = key;
      this.coder = coder;
    }

    /**
     * Reads the key's committed bytes and decodes them with the coder; any thread.
     *
     * @return the value, or null if the key has none; treat it as immutable
     * @throws IllegalStateException if the bytes cannot be decoded with the coder
     */
    public V load() {
      byte[] found = store.bytes.getOffOwner(key.bytes);
      if (found == null) {
        return null;
      }
      loadedBytes = found.length;
      return decodeValue(store.name(), key.bytes, found, coder);
    }

    /**
     * Caches {@code value} (what {@link #load} returned) as the key's clean value, unless the key
     * has an entry again. Owning thread only.
     */
    public void install(V value) {
      store.owner.checkOpen();
      CacheEntry present = store.owner.table.get(key);
      if ((present != null && present.state != State.EVICTED) || store.owner.isDeferred(key)) {
        return;
      }
      CacheEntry loaded = new CacheEntry(key, value, coder, State.CLEAN, value != null, store.owner.epoch);
      if (loadedBytes >= 0) {
        store.owner.bytesDecoded += loadedBytes;
        store.sawValueBytes(loaded, loadedBytes);
      }
      store.owner.table.put(key, loaded);
    }
  }

  /** A read of a live cached entry: counted, stamped with the epoch, its object (decoded once if sealed). */
  @SuppressWarnings("unchecked")
  private <V> V hit(CacheEntry entry, Coder<V> coder) {
    owner.hits++;
    entry.touched = owner.epoch;
    return entry.encoded ? unseal(entry, coder) : (V) entry.value;
  }

  /** Writes {@code key}; see {@link #put(StateKey, Object, Coder)}. */
  public <V> void put(byte[] key, V value, Coder<V> coder) {
    put(key(key), value, coder);
  }

  /**
   * Sets the value of {@code key}. Nothing is encoded until the entry is flushed, committed or
   * evicted.
   *
   * @param value the new value, kept by reference: do not modify it afterwards
   * @param coder encodes {@code value} at write-back
   */
  public <V> void put(StateKey key, V value, Coder<V> coder) {
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(coder, "coder");
    write(key, value, coder, -1, false);
  }

  /**
   * Sets the value of {@code key} and encodes it now, keeping only its encoded bytes in the cache:
   * for a value that will not change again and will probably not be read before it is written
   * back, such as a full chunk of a bag that only grows at its end. Such a value held as objects
   * costs the heap several times its encoded size, and every young collection it survives copies
   * its whole object graph; held encoded it costs one array, weighed exactly by the byte bound.
   * The encoding happens once either way: a write-back (flush, commit or eviction) writes these
   * bytes as they are. A later read decodes them once and caches the object again, as a miss
   * would, so a value that is read after all costs one decode, without a store lookup. In a cache
   * bounded by a caller's weigher ({@link ObjectCacheSettings#maximumWeight}), which weighs
   * objects, this is a plain {@link #put(StateKey, Object, Coder)}.
   *
   * <p>With a sealer executor ({@link ObjectCache#ObjectCache(dev.weir.state.store.StateStorage,
   * ObjectCacheSettings, java.util.concurrent.Executor)}) the value is cached as an object and
   * encoded on a sealer thread; its bytes take its place at a later safe point, unless the key was
   * written, deleted or evicted since ({@link BackgroundSealer}). Only when too many values already
   * wait for a sealer is it encoded here. A coder failure then surfaces at the write-back instead.
   *
   * <p>The idea is the byte-serialized entry of a cache such as Kafka Streams' {@code ThreadCache},
   * applied only where the object would not be used again.
   *
   * @param value the new value; not kept once encoded (only its encoding is); must not change
   * @param coder encodes {@code value} (now, or on a sealer thread), and decodes it at a later read
   * @throws IllegalStateException if {@code coder} cannot encode {@code value} on this thread (the
   *     key's value is then unchanged)
   */
  public <V> void putSealed(StateKey key, V value, Coder<V> coder) {
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(coder, "coder");
    if (owner.settings().weighted()) {
      write(key, value, coder, -1, false);
      return;
    }
    checkKey(key);
    owner.checkOpen();
    BackgroundSealer sealer = owner.sealer;
    if (sealer != null) {
      owner.installSeals(); // frees room, and lets finished bytes go before more objects come
      if (sealer.hasRoom()) {
        CacheEntry entry = write(key, value, coder, -1, false);
        if (entry != null && sealer.trySubmit(entry, value, coder)) {
          return;
        }
      }
    }
    byte[] encoded = encode(key, value, coder);
    sawSize(encoded.length);
    write(key, encoded, coder, encoded.length, true);
  }

  /**
   * Sets the value of {@code key} as {@link #put(StateKey, Object, Coder)} does, with the caller's
   * estimate of its encoded size for a byte-bounded cache ({@link ObjectCacheSettings#bounded}). A
   * value changed in place between write-backs, such as a bag's last chunk growing by one element
   * per add, otherwise keeps weighing what it weighed when last decoded or encoded (or its store's
   * mean, if never). The estimate stands until the value is next encoded or decoded, which measures
   * it; a change of more than a quarter (and 64 bytes) is weighed at the next flush or safe point.
   * Caches bounded by entries alone ignore it.
   *
   * @param value the new value, kept by reference: do not modify it afterwards
   * @param coder encodes {@code value} at write-back
   * @param encodedBytesHint the estimated encoded size of {@code value}, in bytes
   * @throws IllegalArgumentException if {@code encodedBytesHint} is negative
   */
  public <V> void put(StateKey key, V value, Coder<V> coder, int encodedBytesHint) {
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(coder, "coder");
    if (encodedBytesHint < 0) {
      throw new IllegalArgumentException("encodedBytesHint must be >= 0, was " + encodedBytesHint);
    }
    write(key, value, coder, encodedBytesHint, false);
  }

  /** Deletes {@code key}; see {@link #delete(StateKey)}. */
  public void delete(byte[] key) {
    delete(key(key));
  }

  /** Deletes {@code key}: a cached tombstone until the entry is flushed, committed or evicted. */
  public void delete(StateKey key) {
    write(key, null, null, -1, false);
  }

  /**
   * @param encodedBytesHint the caller's estimate of the value's encoded size in bytes, or -1 for none
   * @param encoded whether {@code value} is the value's encoded bytes ({@link #putSealed})
   * @return the key's live entry, now holding {@code value}; null after a delete (which may leave no entry)
   */
  private CacheEntry write(StateKey key, Object value, Coder<?> coder, int encodedBytesHint, boolean encoded) {
    checkKey(key);
    owner.checkOpen();
    CacheEntry entry = owner.table.get(key);
    if (entry == null || entry.state == State.EVICTED) {
      entry = owner.takeDeferred(key);
      if (entry != null) {
        entry.touched = owner.epoch;
        owner.table.put(key, entry); // may evict it again at once: then it is deferred again, or EVICTED if clean
      }
      if (entry == null || entry.state == State.EVICTED) {
        // No live entry: insert one. The filter of stored keys says whether the store may hold the
        // key; a write without a read first (runners-core writes a new window's hold, trigger bits
        // and timer slots blind) is thus known to be new, so its later delete needs no tombstone.
        boolean mayBeStored = stored.mightContain(key.hashCode());
        if (value == null && !mayBeStored) {
          owner.elidedDeletes++; // a delete of a key neither cached nor stored: nothing to do
          return null;
        }
        // Mark it dirty before the put, which may evict it at once (into the deferred map).
        entry = new CacheEntry(key, value, coder, State.DIRTY, mayBeStored, owner.epoch);
        entry.encoded = encoded;
        if (encodedBytesHint >= 0) {
          entry.encodedBytes = encodedBytesHint; // weighed by the hint, not by the store's mean
        }
        markedDirty(entry);
        owner.table.put(key, entry);
        return entry;
      }
    }
    // Update in place: no allocation on the hot path. The entry cannot be evicted between the
    // lookup above and here, because eviction only runs inside cache calls on this thread (an
    // entry just taken back from the deferred map and evicted again by its re-admission is dirty
    // and deferred again, so updating it in place is still right).
    entry.touched = owner.epoch;
    entry.value = value;
    entry.encoded = encoded;
    if (coder != null) {
      entry.coder = coder;
    }
    if (encodedBytesHint >= 0 && owner.byteBounded) {
      entry.encodedBytes = encodedBytesHint;
      owner.resized(entry); // weighed again at the next safe point if the estimate moved enough
    }
    if (value == null && !entry.inStore) {
      // A delete of a key the store does not hold: nothing to write, now or later. The entry
      // leaves the cache at once: left there, such dead cells (a merged-away session's
      // accumulator, hold and timer slots: several per element under merging windows) would take
      // the place of live ones until evicted. Reads of the key are answered by the filter of
      // stored keys, or by the store on a false positive.
      if (entry.state == State.DIRTY) {
        dirtyLive--;
        owner.elidedDeletes++;
      }
      entry.state = State.EVICTED; // its stale dirty-list slot, if any, is skipped by the flush
      entry.value = null;
      if (owner.table.remove(key, entry)) {
        owner.removed(entry);
      } else {
        owner.takeDeferred(key); // evicted again by its re-admission above: must not be taken back
      }
      return null;
    } else if (entry.state != State.DIRTY) {
      entry.state = State.DIRTY;
      markedDirty(entry);
    }
    if (owner.settings().weighted()) {
      owner.table.put(key, entry); // re-weigh: the value changed
    }
    return value == null ? null : entry;
  }

  /**
   * Iterates, in key order, over the entries with keys in {@code [from, to)} (null {@code to}:
   * unbounded), decoding with {@code coder}. Flushes this store's dirty entries first, so the
   * iteration sees every write made before the call. Values are the cached objects where cached,
   * else decoded from the bytes (without caching them, so that a scan does not flush the cache).
   *
   * @return an iterator the caller must close
   */
  public <V> StoreIterator<byte[], V> range(byte[] from, byte[] to, Coder<V> coder) {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(coder, "coder");
    owner.checkOpen();
    flushDirty(from, to);
    return new DecodingIterator<>(bytes.range(from, to), coder);
  }

  /** Like {@link #range} over the keys that start with {@code prefix}. */
  public <V> StoreIterator<byte[], V> prefix(byte[] prefix, Coder<V> coder) {
    Objects.requireNonNull(prefix, "prefix");
    return range(prefix, ByteKeys.prefixEnd(prefix), coder);
  }

  /**
   * Deletes every key that starts with {@code prefix} (e.g. all cells of one bag or map), without
   * decoding their values.
   *
   * @return the number of keys deleted
   */
  public int deletePrefix(byte[] prefix) {
    Objects.requireNonNull(prefix, "prefix");
    owner.checkOpen();
    flushDirty(prefix, ByteKeys.prefixEnd(prefix)); // every entry under the prefix is clean, the byte store complete there
    List<byte[]> keys = new ArrayList<>();
    try (StoreIterator<byte[], byte[]> it = bytes.prefix(prefix)) {
      while (it.hasNext()) {
        keys.add(it.next().getKey());
      }
    }
    for (byte[] k : keys) {
      StateKey key = new StateKey(this, k);
      CacheEntry removed = owner.table.remove(key); // clean entries: nothing to write back
      if (removed != null) {
        owner.removed(removed);
      }
      CacheEntry deferred = owner.takeDeferred(key); // clean too (flushed above), but must not be read back
      if (deferred != null) {
        deferred.state = State.EVICTED;
        deferred.value = null;
      }
    }
    bytes.deleteAll(keys);
    return keys.size();
  }

  private void markedDirty(CacheEntry entry) {
    dirtyLive++;
    if (entry.listed) {
      return; // still in the list from an earlier dirty spell (a delete made it clean since)
    }
    entry.listed = true;
    dirty.add(entry);
    // Evicted and cleaned entries stay in the list until the next flush; without this the list
    // would grow with the writes between two commits instead of with the cache's bound. Each entry
    // is listed once, so after a compaction the list is dirtyLive long and the next one is at
    // least dirtyLive + 1024 additions away: amortised O(1) per write.
    if (dirty.size() > 2 * dirtyLive + 1024) {
      dirty.removeIf(CachedStore::unlistIfNotDirty);
    }
  }

  private static boolean unlistIfNotDirty(CacheEntry e) {
    if (e.state == State.DIRTY) {
      return false;
    }
    e.listed = false;
    return true;
  }

  /** Number of entries of this store waiting to be written back. */
  int dirtyEntries() {
    return dirtyLive;
  }

  /** Length of the dirty list, evicted entries included (for tests of its bound). */
  int dirtyListLength() {
    return dirty.size();
  }

  /** Encodes and writes this store's dirty entries, in one putAll and one deleteAll (a safe point: all of them). */
  void flushDirty() {
    flushDirty(null, null);
  }

  /**
   * Encodes and writes this store's dirty entries in one putAll and one deleteAll: with a null
   * {@code from}, all (at a safe point); else those in {@code [from, to)} (null {@code to}:
   * unbounded) and those not touched since the last safe point. Entries outside the range that a
   * caller may be changing in place stay dirty (see ObjectCache's class comment).
   */
  private void flushDirty(byte[] from, byte[] to) {
    if (dirty.isEmpty()) {
      return;
    }
    List<Entry<byte[], byte[]>> puts = new ArrayList<>();
    List<byte[]> deletes = new ArrayList<>();
    ArrayList<CacheEntry> kept = null;
    int epoch = owner.epoch;
    for (CacheEntry entry : dirty) {
      if (entry.state != State.DIRTY) {
        entry.listed = false;
        continue; // evicted and written back since, or made clean by a delete of an unstored key
      }
      if (from != null && entry.touched == epoch && !ByteKeys.inRange(entry.key.bytes, from, to)) {
        if (kept == null) {
          kept = new ArrayList<>();
        }
        kept.add(entry); // still listed, still dirty
        continue;
      }
      entry.listed = false;
      if (entry.value == null) {
        if (entry.inStore) {
          deletes.add(entry.key.bytes);
        }
        entry.inStore = false;
      } else {
        puts.add(new Entry<>(entry.key.bytes, encode(entry)));
        stored.add(entry.key.hashCode());
        entry.inStore = true;
      }
      entry.state = State.CLEAN;
    }
    // An entry is in the dirty list at most once, so puts and deletes are disjoint.
    bytes.putAll(puts);
    bytes.deleteAll(deletes);
    owner.flushedEntries += puts.size() + deletes.size();
    if (kept == null) {
      dirtyLive = 0;
      dirty = new ArrayList<>(Math.min(Math.max(16, dirty.size()), 1 << 16));
      if (stored.wantsRebuild()) {
        rebuildFilter(); // a full flush: the store now holds every key it should
      }
    } else {
      dirtyLive = kept.size();
      dirty = kept;
    }
  }

  /** Writes one dirty entry during its eviction. */
  void writeBack(CacheEntry entry) {
    dirtyLive--;
    if (entry.value == null) {
      if (entry.inStore) {
        bytes.delete(entry.key.bytes);
      }
    } else {
      bytes.put(entry.key.bytes, encode(entry));
      stored.add(entry.key.hashCode());
    }
  }

  /** Rebuilds the filter of stored keys from the keys the byte store holds now, sized to them. */
  private void rebuildFilter() {
    if (stored.disabled()) {
      return; // for good: the byte store was handed out, or it held too many keys
    }
    int[] hashes = new int[1024];
    int n = 0;
    try (StoreIterator<byte[], byte[]> it = bytes.all()) {
      while (it.hasNext()) {
        if (n == hashes.length) {
          hashes = java.util.Arrays.copyOf(hashes, n * 2);
        }
        hashes[n++] = new StateKey(this, it.next().getKey()).hashCode();
      }
    }
    stored.resize(n);
    for (int i = 0; i < n; i++) {
      stored.add(hashes[i]);
    }
  }

  void discardDirty() {
    dirtyLive = 0;
    dirty = new ArrayList<>();
  }

  /**
   * The entry's value encoded, for the storage: its bytes as they are if it was sealed
   * ({@link #putSealed}), else encoded now; checked to decode back ({@link ObjectCache#checkReadable}).
   */
  private byte[] encode(CacheEntry entry) {
    if (entry.encoded) {
      byte[] sealed = (byte[]) entry.value; // encoded (and counted) by putSealed
      owner.checkReadable(entry.key, entry.coder, sealed);
      return sealed;
    }
    byte[] encoded = encode(entry.key, entry.value, entry.coder);
    sawValueBytes(entry, encoded.length);
    owner.checkReadable(entry.key, entry.coder, encoded);
    return encoded;
  }

  /** Encodes {@code value} of {@code key}, counting the bytes; a coder's failure names the key and coder. */
  @SuppressWarnings("unchecked")
  private byte[] encode(StateKey key, Object value, Coder<?> coder) {
    try {
      byte[] encoded = CoderUtils.encodeToByteArray((Coder<Object>) coder, value);
      owner.bytesEncoded += encoded.length;
      return encoded;
    } catch (CoderException | RuntimeException e) {
      throw new IllegalStateException("cannot encode the value of " + key + " with " + coder, e);
    }
  }

  /** Records that {@code entry}'s value is {@code size} bytes encoded (decoded or encoded just now). */
  private void sawValueBytes(CacheEntry entry, int size) {
    entry.encodedBytes = size;
    sawSize(size);
    if (owner.byteBounded) {
      owner.resized(entry);
    }
  }

  /** Moves this store's running mean value size ({@link #meanValueBytes}) 1/16 toward {@code size} bytes. */
  private void sawSize(int size) {
    meanValueBytes += (size - meanValueBytes) >> 4;
  }

  /** The mean encoded size of this store's values, in bytes (see {@link #meanValueBytes}). */
  int meanValueBytes() {
    return meanValueBytes;
  }

  /**
   * Puts a sealer's encoding in place of the value it encoded, if the entry still holds that very
   * object (not replaced, deleted or evicted since; see {@link BackgroundSealer}); the entry keeps
   * its state, so a DIRTY one writes these bytes as they are. A failed encoding leaves the object,
   * whose write-back reports the failure. Owning thread.
   */
  void installSeal(BackgroundSealer.Job job) {
    CacheEntry entry = job.entry;
    byte[] encoded = job.encoded;
    if (encoded == null || entry.encoded || entry.value != job.value || entry.state == State.EVICTED) {
      return;
    }
    entry.value = encoded;
    entry.encoded = true;
    owner.bytesEncoded += encoded.length;
    sawValueBytes(entry, encoded.length);
  }

  /** Decodes a sealed entry's bytes and caches the object in their place (same state, same weight). */
  private <V> V unseal(CacheEntry entry, Coder<V> coder) {
    V value = decode(entry.key.bytes, (byte[]) entry.value, coder);
    entry.value = value;
    entry.encoded = false;
    return value;
  }

  private <V> V decode(byte[] key, byte[] stored, Coder<V> coder) {
    V value = decodeValue(name(), key, stored, coder);
    owner.bytesDecoded += stored.length;
    return value;
  }

  /** Decodes {@code stored} with {@code coder}; any thread. */
  private static <V> V decodeValue(String store, byte[] key, byte[] stored, Coder<V> coder) {
    try {
      return CoderUtils.decodeFromByteArray(coder, stored);
    } catch (CoderException | RuntimeException e) {
      throw new IllegalStateException(
          "cannot decode the value of " + store + ":" + java.util.Arrays.toString(key) + " with " + coder, e);
    }
  }

  private void checkKey(StateKey key) {
    Objects.requireNonNull(key, "key");
    if (key.store != this) {
      throw new IllegalArgumentException("key " + key + " belongs to another store than '" + name() + "'");
    }
  }

  /** Decodes a byte iterator lazily, preferring cached objects. */
  private final class DecodingIterator<V> implements StoreIterator<byte[], V> {
    private final StoreIterator<byte[], byte[]> source;
    private final Coder<V> coder;

    DecodingIterator(StoreIterator<byte[], byte[]> source, Coder<V> coder) {
      this.source = source;
      this.coder = coder;
    }

    @Override
    public boolean hasNext() {
      return source.hasNext();
    }

    @Override
    @SuppressWarnings("unchecked")
    public Entry<byte[], V> next() {
      if (!source.hasNext()) {
        throw new NoSuchElementException();
      }
      Entry<byte[], byte[]> e = source.next();
      CacheEntry cached = owner.table.peek(new StateKey(CachedStore.this, e.getKey()));
      V value = cached != null && cached.state == State.CLEAN && cached.value != null && !cached.encoded
          ? (V) cached.value
          : decode(e.getKey(), e.getValue(), coder);
      return new Entry<>(e.getKey(), value);
    }

    @Override
    public void close() {
      source.close();
    }
  }
}
