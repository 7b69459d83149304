package dev.weir.state.cache;

import static dev.weir.state.store.TestBytes.b;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.state.store.Backend;
import dev.weir.state.store.StateStorage;
import java.nio.file.Path;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/** One object cache over one backend per test, with a counting coder; closed after each test. */
abstract class CacheFixture {
  @TempDir Path dir;
  StateStorage storage;
  ObjectCache cache;
  final CountingCoder coder = new CountingCoder();
  /** The eviction policy {@link #open} gives every cache, whatever its settings say. */
  ObjectCacheSettings.Eviction eviction = ObjectCacheSettings.Eviction.LRU;

  /** Opens the cache over {@code backend} with {@code settings} and {@link #eviction}, sealing on {@code sealer} (null: inline). */
  CachedStore open(Backend backend, ObjectCacheSettings settings, Executor sealer) {
    storage = backend.open(dir);
    cache = new ObjectCache(storage, settings.withEviction(eviction), sealer);
    return cache.store("s");
  }

  /** Seals keys {@code k0 … k<n-1>} to their index ({@link CachedStore#putSealed}), with a safe point after each. */
  void putSealedIndexes(CachedStore store, long n) {
    for (long i = 0; i < n; i++) {
      store.putSealed(store.key(b("k" + i)), i, coder);
      cache.safePoint();
    }
  }

  /** Asserts that keys {@code k0 … k<n-1>} read back as their index. */
  void assertReadsBackTheirIndex(CachedStore store, long n) {
    for (long i = 0; i < n; i++) {
      assertThat(store.get(b("k" + i), coder)).as("key k%d", i).isEqualTo(i);
    }
  }

  @AfterEach
  void closeCache() {
    if (cache != null) {
      cache.close();
    }
    if (storage != null) {
      storage.close();
    }
  }
}
