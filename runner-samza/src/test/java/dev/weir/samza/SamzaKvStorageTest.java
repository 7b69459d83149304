package dev.weir.samza;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.ObjectCache;
import dev.weir.state.cache.ObjectCacheSettings;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StoreIterator;
import dev.weir.state.store.memory.InMemoryStorage;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.samza.storage.kv.KeyValueStore;
import org.junit.jupiter.api.Test;

/**
 * {@link SamzaKvStorage} over a byte {@link KeyValueStore} (here Weir's in-memory store, which
 * orders keys as Samza's RocksDB store does): logical stores kept apart, ranges and prefixes within
 * one store, commit records and store names read back by a new storage over the same Samza store
 * (as after a changelog restore), and Weir's object cache on top.
 */
class SamzaKvStorageTest {

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static List<String> keys(StoreIterator<byte[], byte[]> it) {
    List<String> keys = new ArrayList<>();
    try (it) {
      while (it.hasNext()) {
        keys.add(new String(it.next().getKey(), StandardCharsets.UTF_8));
      }
    }
    return keys;
  }

  private static KeyValueStore<byte[], byte[]> samzaStore() {
    return new InMemoryStorage().store("samza");
  }

  @Test
  void logicalStores_areSeparate_rangesPrefixesAndAllStayInTheirStore() {
    SamzaKvStorage storage = new SamzaKvStorage(samzaStore());
    SortedByteStore a = storage.store("a");
    SortedByteStore ab = storage.store("ab");
    a.put(b("k1"), b("1"));
    a.put(b("k2"), b("2"));
    a.put(b("x"), b("3"));
    ab.put(b("k1"), b("other"));
    assertThat(a.get(b("k1"))).isEqualTo(b("1"));
    assertThat(ab.get(b("k1"))).isEqualTo(b("other"));
    assertThat(keys(a.all())).containsExactly("k1", "k2", "x");
    assertThat(keys(ab.all())).containsExactly("k1");
    assertThat(keys(a.prefix(b("k")))).containsExactly("k1", "k2");
    assertThat(keys(a.range(b("k2"), null))).containsExactly("k2", "x");
    assertThat(keys(a.range(b("k1"), b("x")))).containsExactly("k1", "k2");
    a.delete(b("k1"));
    assertThat(a.get(b("k1"))).isNull();
    assertThat(keys(a.all())).containsExactly("k2", "x");
    assertThat(storage.storeNames()).containsExactlyInAnyOrder("a", "ab");
    assertThatThrownBy(() -> storage.store("__weir.x")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void commitRecordAndStoreNames_areReadBackFromTheSameSamzaStore() {
    KeyValueStore<byte[], byte[]> kv = samzaStore();
    SamzaKvStorage first = new SamzaKvStorage(kv);
    first.store("cells").put(b("k"), b("v"));
    first.commit(Map.of("m", b("1")));
    first.commit(Map.of("m", b("2")));
    first.close();
    assertThatThrownBy(() -> first.store("cells")).isInstanceOf(IllegalStateException.class);

    SamzaKvStorage restored = new SamzaKvStorage(kv);
    assertThat(restored.commitSequence()).isEqualTo(2);
    assertThat(restored.committedMetadata()).containsOnlyKeys("m");
    assertThat(restored.committedMetadata().get("m")).isEqualTo(b("2"));
    assertThat(restored.storeNames()).containsExactly("cells");
    assertThat(restored.store("cells").get(b("k"))).isEqualTo(b("v"));
  }

  @Test
  void objectCache_onTop_writesBackOnlyAtItsCommit() {
    KeyValueStore<byte[], byte[]> kv = samzaStore();
    SamzaKvStorage storage = new SamzaKvStorage(kv);
    ObjectCache cache = new ObjectCache(storage, ObjectCacheSettings.maximumEntries(100));
    CachedStore store = cache.store("beam-state");
    store.put(b("k"), "v1", org.apache.beam.sdk.coders.StringUtf8Coder.of());
    assertThat(new SamzaKvStorage(kv).store("beam-state").get(b("k"))).isNull();
    cache.commit(Map.of());
    assertThat(new SamzaKvStorage(kv).store("beam-state").get(b("k"))).isNotNull();
  }
}
