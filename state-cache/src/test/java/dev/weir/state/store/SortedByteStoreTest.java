package dev.weir.state.store;

import static dev.weir.state.store.TestBytes.b;
import static dev.weir.state.store.TestBytes.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.samza.storage.kv.Entry;
import org.apache.samza.storage.kv.KeyValueSnapshot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The samza-api KeyValueStore contract plus Weir's additions, on every backend. */
class SortedByteStoreTest {

  @TempDir Path dir;
  private StateStorage storage;

  private SortedByteStore open(Backend backend) {
    storage = backend.open(dir);
    return storage.store("s");
  }

  @AfterEach
  void close() {
    if (storage != null) {
      storage.close();
    }
  }

  static List<String> keys(StoreIterator<byte[], byte[]> it) {
    try (it) {
      List<String> out = new ArrayList<>();
      while (it.hasNext()) {
        Entry<byte[], byte[]> e = it.next();
        out.add(s(e.getKey()) + "=" + s(e.getValue()));
      }
      return out;
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void get_afterPut_returnsValue(Backend backend) {
    SortedByteStore store = open(backend);
    store.put(b("a"), b("1"));
    assertThat(s(store.get(b("a")))).isEqualTo("1");
    assertThat(store.get(b("missing"))).isNull();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void put_overwrites_andDeleteRemoves(Backend backend) {
    SortedByteStore store = open(backend);
    store.put(b("a"), b("1"));
    store.put(b("a"), b("2"));
    assertThat(s(store.get(b("a")))).isEqualTo("2");
    store.delete(b("a"));
    assertThat(store.get(b("a"))).isNull();
    store.delete(b("never-there")); // no error
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void putAll_getAll_deleteAll(Backend backend) {
    SortedByteStore store = open(backend);
    store.putAll(List.of(new Entry<>(b("a"), b("1")), new Entry<>(b("b"), b("2")), new Entry<>(b("c"), b("3"))));
    Map<byte[], byte[]> got = store.getAll(List.of(b("a"), b("c"), b("z")));
    // samza-api's getAll leaves out keys that have no value
    assertThat(got.values().stream().map(TestBytes::s)).containsExactlyInAnyOrder("1", "3");
    store.deleteAll(List.of(b("a"), b("b")));
    assertThat(keys(store.all())).containsExactly("c=3");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void range_isHalfOpen_inUnsignedByteOrder(Backend backend) {
    SortedByteStore store = open(backend);
    byte[] high = {(byte) 0xF0};
    store.put(high, b("high"));
    for (String k : List.of("b", "a", "d", "c")) {
      store.put(b(k), b(k.toUpperCase()));
    }
    assertThat(keys(store.range(b("b"), b("d")))).containsExactly("b=B", "c=C");
    assertThat(keys(store.range(b("c"), null))).hasSize(3).startsWith("c=C", "d=D");
    // 0xF0 sorts after ASCII: unsigned order, as RocksDB's bytewise comparator.
    try (StoreIterator<byte[], byte[]> it = store.all()) {
      byte[] last = null;
      while (it.hasNext()) {
        last = it.next().getKey();
      }
      assertThat(last).isEqualTo(high);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void prefix_returnsExactlyKeysWithPrefix(Backend backend) {
    SortedByteStore store = open(backend);
    for (String k : List.of("ab", "abc", "abd", "ac", "a", "b")) {
      store.put(b(k), b("v"));
    }
    byte[] ff = {(byte) 0xFF, (byte) 0xFF};
    byte[] ff1 = {(byte) 0xFF, (byte) 0xFF, 1};
    store.put(ff, b("v"));
    store.put(ff1, b("v"));
    assertThat(keys(store.prefix(b("ab")))).containsExactly("ab=v", "abc=v", "abd=v");
    assertThat(keys(store.prefix(new byte[0]))).hasSize(8);
    try (StoreIterator<byte[], byte[]> it = store.prefix(new byte[] {(byte) 0xFF})) {
      assertThat(it.next().getKey()).isEqualTo(ff);
      assertThat(it.next().getKey()).isEqualTo(ff1);
      assertThat(it.hasNext()).isFalse();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void range_seesCommittedAndStagedWrites_andDeletes(Backend backend) {
    SortedByteStore store = open(backend);
    store.put(b("a"), b("1"));
    store.put(b("b"), b("2"));
    storage.commit(Map.of());
    store.put(b("c"), b("3"));
    store.delete(b("a"));
    store.put(b("b"), b("22"));
    assertThat(keys(store.all())).containsExactly("b=22", "c=3");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void snapshot_doesNotSeeLaterWrites(Backend backend) {
    SortedByteStore store = open(backend);
    store.put(b("a"), b("1"));
    storage.commit(Map.of());
    store.put(b("b"), b("2"));
    KeyValueSnapshot<byte[], byte[]> snapshot = store.snapshot(b("a"), null);
    store.put(b("c"), b("3"));
    store.delete(b("a"));
    List<String> seen = new ArrayList<>();
    var it = snapshot.iterator();
    while (it.hasNext()) {
      var e = it.next();
      seen.add(s(e.getKey()) + "=" + s(e.getValue()));
    }
    it.close();
    snapshot.close();
    assertThat(seen).containsExactly("a=1", "b=2");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void nullArguments_throwNpeNamingTheArgument(Backend backend) {
    SortedByteStore store = open(backend);
    assertThatThrownBy(() -> store.put(null, b("v"))).isInstanceOf(NullPointerException.class).hasMessage("key");
    assertThatThrownBy(() -> store.put(b("k"), null)).isInstanceOf(NullPointerException.class).hasMessage("value");
    assertThatThrownBy(() -> store.get(null)).isInstanceOf(NullPointerException.class).hasMessage("key");
    assertThatThrownBy(() -> store.delete(null)).isInstanceOf(NullPointerException.class).hasMessage("key");
    assertThatThrownBy(() -> store.range(null, b("z"))).isInstanceOf(NullPointerException.class).hasMessage("from");
    assertThatThrownBy(() -> store.prefix(null)).isInstanceOf(NullPointerException.class).hasMessage("prefix");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void closedStorage_throwsIllegalState(Backend backend) {
    SortedByteStore store = open(backend);
    store.put(b("a"), b("1"));
    StoreIterator<byte[], byte[]> open = store.all();
    storage.close();
    assertThatThrownBy(() -> store.get(b("a"))).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    assertThatThrownBy(() -> store.put(b("a"), b("1"))).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> storage.store("t")).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> storage.commit(Map.of())).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(open::hasNext).isInstanceOf(IllegalStateException.class);
    storage.close(); // idempotent
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void storesAreIndependentNamespaces(Backend backend) {
    SortedByteStore one = open(backend);
    SortedByteStore two = storage.store("t");
    one.put(b("k"), b("1"));
    two.put(b("k"), b("2"));
    assertThat(s(one.get(b("k")))).isEqualTo("1");
    assertThat(s(two.get(b("k")))).isEqualTo("2");
    assertThat(storage.storeNames()).containsExactly("s", "t");
    assertThat(storage.store("s")).isSameAs(one);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void reservedOrEmptyStoreNames_areRejected(Backend backend) {
    open(backend);
    assertThatThrownBy(() -> storage.store("")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> storage.store("__weir.commit")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("__weir");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void emptyKeysAndValues_areAllowed(Backend backend) {
    SortedByteStore store = open(backend);
    store.put(new byte[0], new byte[0]);
    assertThat(store.get(new byte[0])).isEqualTo(new byte[0]);
    assertThat(Arrays.equals(store.all().next().getKey(), new byte[0])).isTrue();
  }
}
