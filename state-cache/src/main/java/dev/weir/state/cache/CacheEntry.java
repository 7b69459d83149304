package dev.weir.state.cache;

import org.apache.beam.sdk.coders.Coder;

/**
 * A cached state cell: the decoded value (or {@code null} for "absent"), or its encoded bytes
 * after a sealed put ({@link #encoded}); the coder that encodes it; and its {@link State}.
 * Mutated in place by the owning thread only.
 */
final class CacheEntry {

  /** Where an entry stands relative to the byte store. */
  enum State {
    /** The value equals what the byte store holds (null: the store has no such key). */
    CLEAN,
    /** The value (null: a delete, i.e. a tombstone) has not yet been written to the byte store. */
    DIRTY,
    /** Evicted from the cache (and written back first if it was dirty); no longer authoritative. */
    EVICTED
  }

  final StateKey key;
  /** The value, or null for absent; a {@code byte[]} of its encoding if {@link #encoded}. */
  Object value;
  /**
   * Whether {@link #value} holds the value's encoded bytes rather than the value (a sealed put,
   * CachedStore#putSealed): a read decodes them and caches the object again; a write-back writes
   * them as they are.
   */
  boolean encoded;
  Coder<?> coder;
  State state;
  /**
   * Whether the byte store may hold a value for this key. False only when known: the entry was
   * loaded by a miss that found nothing, written without a read while the filter of stored keys
   * ruled the key out, or its last write-back was a delete. A delete of an entry
   * whose store holds nothing needs no tombstone: the entry just leaves the cache. State
   * that lives and dies between two commits (a window's cells, a merged-away session) therefore
   * never reaches the byte store at all.
   */
  boolean inStore;
  /**
   * Whether the entry is in its store's dirty list (possibly in a stale slot, after a delete
   * made it clean again): a transition to DIRTY adds it only if not, so the list holds each entry
   * at most once and its length stays bounded by the dirty entries (see CachedStore#markedDirty).
   */
  boolean listed;
  /**
   * The cache's safe-point epoch when a caller last read or wrote the entry: if it equals the
   * current one, a caller may still be changing the value in place (ObjectCache#safePoint), so the
   * entry is not encoded before the next safe point.
   */
  int touched;
  /**
   * The value's encoded size in bytes when it was last decoded from or encoded for the byte store,
   * or the writer's estimate since (CachedStore#put with a hint), or -1 if neither (a value written
   * since and not yet written back). Feeds the byte bound's estimate (ObjectCacheSettings#bounded).
   */
  int encodedBytes = -1;
  /** The byte estimate this entry had when the cache last weighed it (byte-bounded caches only). */
  int weighedBytes;
  /** Whether the entry waits in ObjectCache's list of entries to weigh again (so it is listed once). */
  boolean reweighQueued;
  /** {@link LruEntryTable}: the neighbours in its recency list (null at the ends, or when not in it). */
  CacheEntry newer;
  CacheEntry older;
  /** {@link LruEntryTable}: the weight it counts this entry at while it holds it. */
  int tableWeight;

  CacheEntry(StateKey key, Object value, Coder<?> coder, State state, boolean inStore, int touched) {
    this.key = key;
    this.touched = touched;
    this.value = value;
    this.coder = coder;
    this.state = state;
    this.inStore = inStore;
  }
}
