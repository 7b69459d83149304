package dev.weir.state.cache;

import static dev.weir.state.store.TestBytes.b;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.state.store.Backend;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Misses loaded off the owning thread ({@link CachedStore#getOrOffOwnerLoad}): only where the byte
 * store can serve them there and nothing newer exists on the owner; loaded on another thread,
 * installed as a clean entry the next read hits.
 */
class OffOwnerLoadTest extends CacheFixture {

  /** Writes {@code k}=42 through a cache, commits, and opens a fresh cache over the same storage (so k misses). */
  private CachedStore committedThenReopened(Backend backend) {
    CachedStore store = open(backend, ObjectCacheSettings.maximumEntries(100), null);
    store.put(b("k"), 42L, coder);
    cache.commit(Map.of());
    cache.close();
    cache = new ObjectCache(storage, ObjectCacheSettings.maximumEntries(100));
    return cache.store("s");
  }

  /** The read's miss to load off the owner, or null if it was answered on the owner. */
  private CachedStore.OffOwnerLoad<Long> miss(CachedStore store, StateKey key) {
    Object answer = store.getOrOffOwnerLoad(key, coder);
    @SuppressWarnings("unchecked")
    CachedStore.OffOwnerLoad<Long> miss = answer instanceof CachedStore.OffOwnerLoad<?> m
        ? (CachedStore.OffOwnerLoad<Long>) m : null;
    return miss;
  }

  @ParameterizedTest
  @EnumSource(value = Backend.class, names = {"ROCKSDB", "ROCKSDB_DIRECT"})
  void aCommittedMissLoadsOnAnotherThreadAndTheNextReadHits(Backend backend) throws Exception {
    CachedStore store = committedThenReopened(backend);
    StateKey k = store.key(b("k"));
    CachedStore.OffOwnerLoad<Long> miss = miss(store, k);
    assertThat(miss).as("a miss RocksDB can serve off the owner").isNotNull();
    AtomicReference<String> loadedOn = new AtomicReference<>();
    Long value = CompletableFuture.supplyAsync(() -> {
      loadedOn.set(Thread.currentThread().getName());
      return miss.load();
    }).get();
    assertThat(value).isEqualTo(42L);
    assertThat(loadedOn.get()).isNotEqualTo(Thread.currentThread().getName());
    miss.install(value);
    assertThat(store.get(k, coder)).as("installed: a hit, the same object").isSameAs(value);
    assertThat(coder.decodes).as("decoded once by the loader (and once by the writing cache's read-back check)")
        .hasValue(2);
    assertThat(cache.stats().misses()).isEqualTo(1);
    assertThat(cache.stats().hits()).isEqualTo(1);
  }

  @Test
  void aKeyWithAStagedWriteIsReadOnTheOwner() {
    CachedStore store = committedThenReopened(Backend.ROCKSDB);
    StateKey k = store.key(b("k"));
    store.byteStore().put(b("k"), new byte[] {44}); // staged in RocksDB's batch, not committed
    assertThat(store.getOrOffOwnerLoad(k, coder)).as("a staged write only the owner sees, read there").isEqualTo(44L);
  }

  @Test
  void onceTheStagedKeysAreTrackedOnlyTheKeysStagedHoldTheirReadsOnTheOwner() {
    CachedStore store = committedThenReopened(Backend.ROCKSDB);
    StateKey k = store.key(b("k"));
    assertThat(miss(store, k)).as("nothing staged: the filter starts complete").isNotNull();
    store.byteStore().put(b("other"), new byte[] {1});
    assertThat(miss(store, k)).as("another key staged").isNotNull();
    store.byteStore().put(b("k"), new byte[] {45});
    assertThat(store.getOrOffOwnerLoad(k, coder)).as("k itself staged: read on the owner").isEqualTo(45L);
    cache.commit(Map.of());
    cache.close();
    cache = new ObjectCache(storage, ObjectCacheSettings.maximumEntries(100));
    CachedStore reopened = cache.store("s");
    assertThat(miss(reopened, reopened.key(b("k")))).as("committed: RocksDB alone is current again").isNotNull();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void hitsAndNeverWrittenKeysAreAnsweredOnTheOwner(Backend backend) {
    CachedStore store = open(backend, ObjectCacheSettings.maximumEntries(100), null);
    store.put(b("cached"), 1L, coder);
    assertThat(store.getOrOffOwnerLoad(store.key(b("cached")), coder)).as("a hit").isEqualTo(1L);
    assertThat(store.getOrOffOwnerLoad(store.key(b("never")), coder)).as("ruled out by the filter of stored keys")
        .isNull();
  }

  @Test
  void theInMemoryStoreIsAlwaysReadOnTheOwner() {
    CachedStore store = committedThenReopened(Backend.MEMORY);
    assertThat(store.getOrOffOwnerLoad(store.key(b("k")), coder)).isEqualTo(42L);
  }

  @ParameterizedTest
  @EnumSource(value = Backend.class, names = {"ROCKSDB", "ROCKSDB_DIRECT"})
  void anInstallNeverReplacesAnEntryTheOwnerHasSince(Backend backend) {
    CachedStore store = committedThenReopened(backend);
    StateKey k = store.key(b("k"));
    CachedStore.OffOwnerLoad<Long> miss = miss(store, k);
    Long loaded = miss.load();
    store.put(k, 7L, coder);
    miss.install(loaded);
    assertThat(store.get(k, coder)).isEqualTo(7L);
  }
}
