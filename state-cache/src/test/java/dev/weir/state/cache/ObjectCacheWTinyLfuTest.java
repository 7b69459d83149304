package dev.weir.state.cache;

/**
 * Every {@link ObjectCacheTest} again with Caffeine's W-TinyLFU as the eviction policy (that class
 * runs the default, LRU): the cache's contract (write-back, deferral, tombstones, bounds) must not
 * depend on which entry a full cache picks.
 */
class ObjectCacheWTinyLfuTest extends ObjectCacheTest {
  ObjectCacheWTinyLfuTest() {
    eviction = ObjectCacheSettings.Eviction.W_TINY_LFU;
  }
}
