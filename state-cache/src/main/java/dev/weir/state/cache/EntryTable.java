package dev.weir.state.cache;

/**
 * The object cache's table of live entries and its eviction order: what {@link ObjectCache} asks
 * of a cache library, narrowed to the calls it makes, so the policy that picks victims is a setting
 * ({@link ObjectCacheSettings.Eviction}) rather than a rewrite.
 *
 * <p>Every implementation bounds a total weight (one per entry when the cache is bounded by count)
 * and hands each victim to the cache's eviction listener synchronously, inside the call that went
 * over the bound, before that call returns; the listener must not call back into the table.
 *
 * <p>Threading: confined to the cache's owning thread, like the cache.
 */
interface EntryTable {

  /** Receives an entry the table removed to stay within its bound. */
  @FunctionalInterface
  interface EvictionListener {
    void evicted(StateKey key, CacheEntry entry);
  }

  /** The entry of {@code key}, or null; counts as a use of the entry for the eviction order. */
  CacheEntry get(StateKey key);

  /** The entry of {@code key}, or null, without counting as a use (for scans). */
  CacheEntry peek(StateKey key);

  /**
   * Inserts {@code entry} under {@code key}, or weighs it again if it is already there (its value
   * changed), then evicts down to the bound. May evict {@code entry} itself.
   */
  void put(StateKey key, CacheEntry entry);

  /** Removes {@code key} if it maps to exactly {@code entry}; no listener call. */
  boolean remove(StateKey key, CacheEntry entry);

  /** Removes {@code key}; no listener call. @return the removed entry, or null */
  CacheEntry remove(StateKey key);

  /** Evicts every entry through the listener, keeping the bound. */
  void evictAll();

  /** The number of entries (may be approximate). */
  long size();

  /** Drops every entry without calling the listener. */
  void clear();
}
