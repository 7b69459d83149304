package dev.weir.state.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import java.util.function.ToIntFunction;

/**
 * An {@link EntryTable} on Caffeine's bounded cache: W-TinyLFU (a small LRU window in front of a
 * segmented LRU whose admission compares a count-min sketch of each key's recent frequency; Einziger,
 * Friedman and Manes, "TinyLFU: A Highly Efficient Cache Admission Policy", 2017). A new key enters
 * the main region only if it has been used more often than the victim it would replace.
 *
 * <p>Threading: the owning thread; maintenance runs on the calling thread
 * ({@code executor(Runnable::run)}), so evictions happen inside the call that went over the bound.
 */
final class CaffeineEntryTable implements EntryTable {

  private final Cache<StateKey, CacheEntry> cache;
  private final Policy.Eviction<StateKey, CacheEntry> eviction;

  /**
   * @param maximumWeight the bound on the entries' total weight
   * @param weigher an entry's weight, or null to count entries
   * @param listener receives each victim
   */
  CaffeineEntryTable(long maximumWeight, ToIntFunction<CacheEntry> weigher, EvictionListener listener) {
    Caffeine<Object, Object> builder = Caffeine.newBuilder().executor(Runnable::run);
    Caffeine<StateKey, CacheEntry> typed = weigher == null
        ? builder.maximumSize(maximumWeight).evictionListener((k, e, cause) -> listen(listener, k, e))
        : builder.maximumWeight(maximumWeight)
            .<StateKey, CacheEntry>weigher((k, e) -> weigher.applyAsInt(e))
            .evictionListener((k, e, cause) -> listen(listener, k, e));
    this.cache = typed.build();
    this.eviction = cache.policy().eviction().orElseThrow();
  }

  private static void listen(EvictionListener listener, StateKey key, CacheEntry entry) {
    if (key != null && entry != null) {
      listener.evicted(key, entry);
    }
  }

  @Override
  public CacheEntry get(StateKey key) {
    return cache.getIfPresent(key);
  }

  @Override
  public CacheEntry peek(StateKey key) {
    return cache.policy().getIfPresentQuietly(key);
  }

  @Override
  public void put(StateKey key, CacheEntry entry) {
    cache.put(key, entry);
  }

  @Override
  public boolean remove(StateKey key, CacheEntry entry) {
    return cache.asMap().remove(key, entry);
  }

  @Override
  public CacheEntry remove(StateKey key) {
    return cache.asMap().remove(key);
  }

  @Override
  public void evictAll() {
    long maximum = eviction.getMaximum();
    eviction.setMaximum(0);
    cache.cleanUp();
    eviction.setMaximum(maximum);
  }

  @Override
  public long size() {
    return cache.estimatedSize();
  }

  @Override
  public void clear() {
    cache.asMap().clear();
  }
}
