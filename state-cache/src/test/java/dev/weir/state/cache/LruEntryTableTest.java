package dev.weir.state.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The LRU table's order, bounds and listener calls, on its own (no store behind it). */
class LruEntryTableTest {

  private final List<String> evicted = new ArrayList<>();

  private static StateKey key(String name) {
    return new StateKey(null, name.getBytes(StandardCharsets.UTF_8));
  }

  private static CacheEntry entry(String name, Object value) {
    return new CacheEntry(key(name), value, null, CacheEntry.State.CLEAN, false, 0);
  }

  private LruEntryTable table(long maximumWeight, java.util.function.ToIntFunction<CacheEntry> weigher) {
    return new LruEntryTable(maximumWeight, weigher,
        (k, e) -> evicted.add(new String(k.bytes, StandardCharsets.UTF_8)));
  }

  private static void put(LruEntryTable table, CacheEntry e) {
    table.put(e.key, e);
  }

  @Test
  void overTheBound_evictsTheLeastRecentlyUsed_andAReadCountsAsAUse() {
    LruEntryTable table = table(3, null);
    put(table, entry("a", 1));
    put(table, entry("b", 2));
    put(table, entry("c", 3));
    assertThat(table.get(key("a"))).isNotNull(); // a is now the most recent; b the least

    put(table, entry("d", 4));
    put(table, entry("e", 5));

    assertThat(evicted).containsExactly("b", "c");
    assertThat(table.size()).isEqualTo(3);
    assertThat(table.peek(key("a"))).isNotNull();
    assertThat(table.peek(key("b"))).isNull();
  }

  @Test
  void aNewEntry_isKeptOverOftenReadOldOnes() {
    // What W-TinyLFU would not do: a key written once displaces a key read many times before.
    LruEntryTable table = table(2, null);
    put(table, entry("hot", 1));
    for (int i = 0; i < 100; i++) {
      table.get(key("hot"));
    }
    put(table, entry("warm", 2));
    put(table, entry("new", 3));

    assertThat(evicted).containsExactly("hot");
    assertThat(table.peek(key("new"))).isNotNull();
  }

  @Test
  void peek_doesNotCountAsAUse() {
    LruEntryTable table = table(2, null);
    put(table, entry("a", 1));
    put(table, entry("b", 2));
    table.peek(key("a"));
    put(table, entry("c", 3));

    assertThat(evicted).containsExactly("a");
  }

  @Test
  void putOfAPresentKey_weighsItAgain_andMakesItTheMostRecent() {
    LruEntryTable table = table(10, e -> ((String) e.value).length());
    CacheEntry a = entry("a", "xx");
    put(table, a);
    put(table, entry("b", "xxxx"));
    a.value = "xxxxxx"; // grew in place: 6 + 4 = 10, still within the bound
    put(table, a);
    assertThat(evicted).isEmpty();

    put(table, entry("c", "x")); // 11: the least recent (b) goes, not the re-weighed a
    assertThat(evicted).containsExactly("b");
    assertThat(table.peek(key("a"))).isSameAs(a);
  }

  @Test
  void anEntryHeavierThanTheBound_evictsEverythingIncludingItself() {
    LruEntryTable table = table(5, e -> ((String) e.value).length());
    put(table, entry("a", "xx"));
    put(table, entry("big", "xxxxxxxx"));

    assertThat(evicted).containsExactly("a", "big");
    assertThat(table.size()).isZero();
  }

  @Test
  void remove_takesTheEntryOut_withoutTheListener_andOnlyIfItIsTheSameEntry() {
    LruEntryTable table = table(3, null);
    CacheEntry a = entry("a", 1);
    put(table, a);
    put(table, entry("b", 2));

    assertThat(table.remove(key("a"), entry("a", 1))).isFalse(); // another entry object
    assertThat(table.remove(key("a"), a)).isTrue();
    assertThat(table.remove(key("b"))).isNotNull();
    assertThat(table.remove(key("b"))).isNull();
    assertThat(evicted).isEmpty();
    assertThat(table.size()).isZero();

    put(table, entry("c", 3)); // the list is still consistent after removing its ends
    put(table, entry("d", 4));
    put(table, entry("e", 5));
    put(table, entry("f", 6));
    assertThat(evicted).containsExactly("c");
  }

  @Test
  void evictAll_passesEveryEntryToTheListener_oldestFirst_andKeepsTheBound() {
    LruEntryTable table = table(2, null);
    put(table, entry("a", 1));
    put(table, entry("b", 2));
    table.evictAll();
    assertThat(evicted).containsExactly("a", "b");

    put(table, entry("c", 3));
    put(table, entry("d", 4));
    assertThat(evicted).containsExactly("a", "b");
  }

  @Test
  void clear_dropsEverything_withoutTheListener() {
    LruEntryTable table = table(2, null);
    put(table, entry("a", 1));
    put(table, entry("b", 2));
    table.clear();
    assertThat(table.size()).isZero();
    assertThat(table.get(key("a"))).isNull();

    put(table, entry("c", 3));
    put(table, entry("d", 4));
    put(table, entry("e", 5));
    assertThat(evicted).containsExactly("c");
  }
}
