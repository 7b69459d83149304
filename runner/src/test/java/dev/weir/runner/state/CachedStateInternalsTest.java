package dev.weir.runner.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.state.StateBackend;
import dev.weir.state.cache.ObjectCacheSettings;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.runners.core.StateTags;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.ByteArrayCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VoidCoder;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.CombiningState;
import org.apache.beam.sdk.state.MapState;
import org.apache.beam.sdk.state.MultimapState;
import org.apache.beam.sdk.state.OrderedListState;
import org.apache.beam.sdk.state.SetState;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.state.WatermarkHoldState;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.TimestampCombiner;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * StateInternals over the object cache, on both backends, with a roomy cache and with a cache of
 * two entries (so nearly every access goes through eviction write-back and a store read).
 */
class CachedStateInternalsTest {
  private static final StateNamespace W1 =
      StateNamespaces.window(IntervalWindow.getCoder(), new IntervalWindow(new Instant(0), new Instant(10)));
  private static final StateNamespace W2 =
      StateNamespaces.window(IntervalWindow.getCoder(), new IntervalWindow(new Instant(10), new Instant(20)));
  private static final StateTag<ValueState<String>> VALUE = StateTags.value("v", StringUtf8Coder.of());
  private static final StateTag<BagState<Integer>> BAG = StateTags.bag("b", VarIntCoder.of());
  private static final StateTag<BagState<Void>> VOID_BAG = StateTags.bag("vb", VoidCoder.of());
  private static final StateTag<BagState<String>> STRING_BAG = StateTags.bag("sb", StringUtf8Coder.of());
  private static final StateTag<CombiningState<Integer, int[], Integer>> SUM =
      StateTags.combiningValueFromInputInternal("s", VarIntCoder.of(), Sum.ofIntegers());
  private static final StateTag<MapState<String, Integer>> MAP =
      StateTags.map("m", StringUtf8Coder.of(), VarIntCoder.of());
  private static final StateTag<SetState<String>> SET = StateTags.set("set", StringUtf8Coder.of());
  private static final StateTag<OrderedListState<String>> LIST = StateTags.orderedList("ol", StringUtf8Coder.of());
  private static final StateTag<OrderedListState<String>> NULLABLE_LIST =
      StateTags.orderedList("nol", NullableCoder.of(StringUtf8Coder.of()));
  private static final StateTag<MultimapState<String, Integer>> MULTIMAP =
      StateTags.multimap("mm", StringUtf8Coder.of(), VarIntCoder.of());
  private static final StateTag<MultimapState<byte[], String>> BYTES_MULTIMAP =
      StateTags.multimap("bmm", ByteArrayCoder.of(), NullableCoder.of(StringUtf8Coder.of()));
  private static final StateTag<WatermarkHoldState> HOLD = StateTags.watermarkStateInternal("h", TimestampCombiner.EARLIEST);

  @TempDir Path dir;
  private ContainerState state;

  static List<Arguments> setups() {
    return List.of(Arguments.of(StateBackend.MEMORY, 10_000L), Arguments.of(StateBackend.ROCKSDB, 10_000L),
        Arguments.of(StateBackend.MEMORY, 2L), Arguments.of(StateBackend.ROCKSDB, 2L));
  }

  @AfterEach
  void close() {
    if (state != null) {
      state.close();
    }
  }

  private CachedStateInternals open(StateBackend backend, long cache, String key, WatermarkHolds holds) {
    if (state == null) {
      state = new ContainerState(backend, dir.resolve("c"), cache, "test");
    }
    return new CachedStateInternals(key, key.getBytes(), new byte[] {0, 0, 0, 1}, state.store(), holds,
        IntervalWindow.getCoder());
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void cellsAreSeparatedByKeyNamespaceAndId(StateBackend backend, long cache) {
    WatermarkHolds holds = new WatermarkHolds();
    CachedStateInternals a = open(backend, cache, "a", holds);
    CachedStateInternals ab = open(backend, cache, "ab", holds);
    a.state(W1, VALUE).write("a-w1");
    a.state(W2, VALUE).write("a-w2");
    ab.state(W1, VALUE).write("ab-w1");
    state.commit();
    assertThat(a.state(W1, VALUE).read()).isEqualTo("a-w1");
    assertThat(a.state(W2, VALUE).read()).isEqualTo("a-w2");
    assertThat(ab.state(W1, VALUE).read()).isEqualTo("ab-w1");
    assertThat(ab.state(W2, VALUE).read()).isNull();
    a.state(W1, VALUE).clear();
    assertThat(a.state(W1, VALUE).read()).isNull();
    assertThat(a.state(W2, VALUE).read()).isEqualTo("a-w2");
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void bagAppendsReadsAndClears(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    BagState<Integer> bag = s.state(W1, BAG);
    assertThat(bag.isEmpty().read()).isTrue();
    for (int i = 0; i < 100; i++) {
      s.state(W1, BAG).add(i);
      if (i == 50) {
        state.commit();
      }
    }
    s.state(W2, BAG).add(-1);
    assertThat(s.state(W1, BAG).read()).hasSize(100).startsWith(0, 1, 2).endsWith(98, 99);
    assertThat(s.state(W1, BAG).isEmpty().read()).isFalse();
    s.state(W1, BAG).clear();
    assertThat(s.state(W1, BAG).read()).isEmpty();
    assertThat(s.state(W2, BAG).read()).containsExactly(-1);
    s.state(W1, VOID_BAG).add(null);
    s.state(W1, VOID_BAG).add(null);
    state.cache().evictAll();
    assertThat(s.state(W1, VOID_BAG).read()).hasSize(2).containsOnlyNulls();
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void bagChunksKeepOrderAcrossChunkBoundariesEvictionsAndClears(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    int chunk = CachedBag.CHUNK_ELEMENTS;
    for (int size : new int[] {chunk - 1, chunk, chunk + 1, 2 * chunk + 3}) {
      List<Integer> expected = new ArrayList<>();
      for (int i = 0; i < size; i++) {
        s.state(W1, BAG).add(i);
        expected.add(i);
        state.safePoint();
        if (i % 17 == 0) {
          state.cache().evictAll(); // the partly filled chunk is written back and read again
        }
        if (i % 29 == 0) {
          state.commit();
        }
      }
      Iterable<Integer> held = s.state(W1, BAG).read();
      s.state(W1, BAG).add(-1);
      assertThat(held).as("a read is not changed by later adds").containsExactlyElementsOf(expected);
      expected.add(-1);
      assertThat(s.state(W1, BAG).read()).as("bag of %d", size + 1).containsExactlyElementsOf(expected);
      s.state(W1, BAG).clear();
      state.safePoint();
      state.commit();
      assertThat(s.state(W1, BAG).read()).isEmpty();
      assertThat(s.state(W1, BAG).isEmpty().read()).isTrue();
    }
    state.cache().evictAll();
    byte[] prefix = CellLayout.keyPrefix(new byte[] {0, 0, 0, 1}, "k".getBytes());
    try (var cells = state.storage().store(ContainerState.STORE).prefix(prefix)) {
      assertThat(cells.hasNext()).as("no cell of a cleared bag is left in the store").isFalse();
    }
  }

  @ParameterizedTest
  @EnumSource(StateBackend.class)
  void aFullBagChunkIsHeldEncoded_writtenAsItIs_andReadBackInOrder(StateBackend backend) {
    CachedStateInternals s = open(backend, 10_000, "k", new WatermarkHolds());
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < CachedBag.CHUNK_ELEMENTS - 1; i++) {
      s.state(W1, STRING_BAG).add("element-" + i);
      expected.add("element-" + i);
      state.safePoint();
    }
    assertThat(state.cache().stats().bytesEncoded()).as("a chunk still filling is held as objects").isZero();
    s.state(W1, STRING_BAG).add("element-last");
    expected.add("element-last");
    state.safePoint();
    long sealed = state.cache().stats().bytesEncoded();
    assertThat(sealed).as("the add that fills a chunk encodes it").isGreaterThan(CachedBag.CHUNK_ELEMENTS * 9L);
    s.state(W1, STRING_BAG).add("next"); // starts the next chunk without reading the full one
    expected.add("next");
    state.safePoint();
    state.commit();
    assertThat(state.cache().stats().bytesEncoded() - sealed)
        .as("the commit writes the sealed chunk's bytes as they are: only the new chunk and the length are encoded")
        .isLessThan(32);
    assertThat(state.cache().stats().bytesDecoded()).isZero();
    assertThat(s.state(W1, STRING_BAG).read()).containsExactlyElementsOf(expected);
    state.cache().evictAll();
    assertThat(s.state(W1, STRING_BAG).read()).containsExactlyElementsOf(expected);
  }

  @ParameterizedTest
  @EnumSource(StateBackend.class)
  void aBagChunkGrownSinceItsLastEncoding_weighsItsElementsInAByteBoundedCache(StateBackend backend) {
    state = new ContainerState(backend, dir.resolve("bytes"), ObjectCacheSettings.bounded(10_000, 1L << 30), "test",
        false);
    CachedStateInternals s = open(backend, 0, "k", new WatermarkHolds());
    String element = "e".repeat(1_000); // ~1 KB encoded
    s.state(W1, STRING_BAG).add(element);
    state.safePoint();
    long afterOne = state.cache().stats().estimatedBytes();
    for (int i = 1; i < CachedBag.CHUNK_ELEMENTS; i++) {
      s.state(W1, STRING_BAG).add(element);
      state.safePoint();
    }
    // Never encoded: without the bag's estimate the chunk would still weigh what it did at one
    // element. With it, the chunk is weighed again each time its estimate moved by a quarter.
    assertThat(afterOne).isLessThan(3 * 1_000L);
    assertThat(state.cache().stats().estimatedBytes())
        .isGreaterThanOrEqualTo(CachedBag.CHUNK_ELEMENTS * 1_000L * 3 / 4);
    assertThat(s.state(W1, STRING_BAG).read()).hasSize(CachedBag.CHUNK_ELEMENTS).containsOnly(element);
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void anAccumulatorHandedOutIsCopiedBeforeTheNextWrite(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    s.state(W1, SUM).add(1);
    int[] held = s.state(W1, SUM).getAccum();
    s.state(W1, SUM).add(2);
    s.state(W1, SUM).addAccum(new int[] {3});
    assertThat(held[0]).as("the accumulator read before the adds").isEqualTo(1);
    assertThat(s.state(W1, SUM).read()).isEqualTo(6);
    int[] mine = {10};
    s.state(W2, SUM).addAccum(mine);
    s.state(W2, SUM).add(5);
    assertThat(mine[0]).as("the caller's accumulator given to addAccum").isEqualTo(10);
    assertThat(s.state(W2, SUM).read()).isEqualTo(15);
  }

  /** An accumulator coder of a one-int array that counts its decodes (a copy through it is one). */
  static final class CountingAccumCoder extends AtomicCoder<int[]> {
    static final AtomicInteger DECODES = new AtomicInteger();

    @Override
    public void encode(int[] value, OutputStream out) throws IOException {
      VarIntCoder.of().encode(value[0], out);
    }

    @Override
    public int[] decode(InputStream in) throws IOException {
      DECODES.incrementAndGet();
      return new int[] {VarIntCoder.of().decode(in)};
    }
  }

  @ParameterizedTest
  @EnumSource(StateBackend.class)
  void writtenAccumulatorsAreDecodedBackOncePerOperator_notOncePerKeyAndWindow(StateBackend backend) {
    // The object cache decodes back the first value of each coder instance it writes; the keys of
    // one operator share their state coders' wrappers (StateCoders), so that is one decode in all.
    StateTag<CombiningState<Integer, int[], Integer>> count =
        StateTags.combiningValue("count", new CountingAccumCoder(), Sum.ofIntegers());
    open(backend, 10_000L, "k0", new WatermarkHolds());
    NamespaceNames names = new NamespaceNames(IntervalWindow.getCoder());
    StateCoders coders = new StateCoders();
    CountingAccumCoder.DECODES.set(0);
    for (int k = 0; k < 50; k++) {
      CachedStateInternals s = new CachedStateInternals("k" + k, ("k" + k).getBytes(), new byte[] {0, 0, 0, 1},
          state.store(), new WatermarkHolds(), IntervalWindow.getCoder(), names, coders);
      s.state(W1, count).add(k);
      s.state(W2, count).add(k);
    }
    state.commit();
    assertThat(CountingAccumCoder.DECODES.get()).as("decodes of 100 written accumulators").isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(StateBackend.class)
  void aReadWhoseOutputIsImmutableLeavesTheAccumulatorUnshared(StateBackend backend) {
    // A count trigger's pattern: add, then read the count, per element. The Integer read cannot
    // alias the int[] accumulator, so no write copies it.
    StateTag<CombiningState<Integer, int[], Integer>> count =
        StateTags.combiningValue("count", new CountingAccumCoder(), Sum.ofIntegers());
    CachedStateInternals s = open(backend, 10_000L, "k", new WatermarkHolds());
    CountingAccumCoder.DECODES.set(0);
    for (int i = 1; i <= 100; i++) {
      s.state(W1, count).add(1);
      assertThat(s.state(W1, count).read()).isEqualTo(i);
    }
    assertThat(CountingAccumCoder.DECODES.get()).as("accumulator copies").isZero();
    int[] held = s.state(W1, count).getAccum();
    s.state(W1, count).add(1);
    assertThat(held[0]).as("an accumulator handed out is still copied").isEqualTo(100);
    assertThat(CountingAccumCoder.DECODES.get()).isEqualTo(1);
  }

  @org.junit.jupiter.api.Test
  void onlyExactImmutableClassesCountAsImmutableOutputs() {
    assertThat(CachedCombining.isImmutable(null)).isTrue();
    assertThat(CachedCombining.isImmutable(42L)).isTrue();
    assertThat(CachedCombining.isImmutable("s")).isTrue();
    assertThat(CachedCombining.isImmutable(new Instant(5))).isTrue();
    assertThat(CachedCombining.isImmutable(new int[] {1})).isFalse();
    assertThat(CachedCombining.isImmutable(new ArrayList<>(List.of(1)))).isFalse();
    assertThat(CachedCombining.isImmutable(new org.joda.time.MutableDateTime(5))).isFalse();
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void combiningMapAndSet(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    for (int i = 1; i <= 10; i++) {
      s.state(W1, SUM).add(i);
    }
    assertThat(s.state(W1, SUM).read()).isEqualTo(55);
    s.state(W1, SUM).clear();
    assertThat(s.state(W1, SUM).isEmpty().read()).isTrue();

    MapState<String, Integer> map = s.state(W1, MAP);
    map.put("x", 1);
    map.put("y", 2);
    assertThat(map.putIfAbsent("x", 9).read()).isEqualTo(1);
    map.remove("y");
    assertThat(s.state(W1, MAP).get("x").read()).isEqualTo(1);
    assertThat(s.state(W1, MAP).get("y").read()).isNull();
    assertThat(s.state(W1, MAP).entries().read()).containsExactly(Map.entry("x", 1));
    s.state(W1, MAP).clear();
    assertThat(s.state(W1, MAP).isEmpty().read()).isTrue();

    SetState<String> set = s.state(W2, SET);
    assertThat(set.addIfAbsent("p").read()).isTrue();
    assertThat(set.addIfAbsent("p").read()).isFalse();
    set.add("q");
    assertThat(s.state(W2, SET).read()).containsExactlyInAnyOrder("p", "q");
    assertThat(s.state(W2, SET).contains("q").read()).isTrue();
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void watermarkHoldsAreTrackedAcrossKeys(StateBackend backend, long cache) {
    WatermarkHolds holds = new WatermarkHolds();
    CachedStateInternals a = open(backend, cache, "a", holds);
    CachedStateInternals b = open(backend, cache, "b", holds);
    assertThat(holds.min()).isEqualTo(BoundedWindow.TIMESTAMP_MAX_VALUE);
    a.state(W1, HOLD).add(new Instant(7));
    a.state(W1, HOLD).add(new Instant(5)); // EARLIEST: 5
    b.state(W1, HOLD).add(new Instant(6));
    assertThat(a.state(W1, HOLD).read()).isEqualTo(new Instant(5));
    assertThat(holds.min()).isEqualTo(new Instant(5));
    a.state(W1, HOLD).clear();
    assertThat(holds.min()).isEqualTo(new Instant(6));
    b.state(W1, HOLD).clear();
    assertThat(holds.min()).isEqualTo(BoundedWindow.TIMESTAMP_MAX_VALUE);
  }

  private static TimestampedValue<String> tv(String value, long millis) {
    return TimestampedValue.of(value, new Instant(millis));
  }

  private static <T> List<T> list(Iterable<T> iterable) {
    List<T> result = new ArrayList<>();
    iterable.forEach(result::add);
    return result;
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void orderedListReadsSortedByTimestampWithTiesInInsertionOrder(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    OrderedListState<String> ol = s.state(W1, LIST);
    assertThat(ol.isEmpty().read()).isTrue();
    assertThat(ol.read()).isEmpty();
    ol.add(tv("c", 30));
    ol.add(tv("neg", -5));
    ol.add(tv("a", 10));
    state.commit();
    ol.add(tv("b1", 20));
    ol.add(tv("b2", 20));
    ol.add(tv("min", BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis()));
    s.state(W2, LIST).add(tv("other-window", 15));
    assertThat(ol.isEmpty().read()).isFalse();
    assertThat(list(s.state(W1, LIST).read())).containsExactly(
        tv("min", BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis()), tv("neg", -5), tv("a", 10), tv("b1", 20),
        tv("b2", 20), tv("c", 30));
    // half-open [min, limit)
    assertThat(list(ol.readRange(new Instant(10), new Instant(30)))).containsExactly(tv("a", 10), tv("b1", 20), tv("b2", 20));
    assertThat(list(ol.readRange(new Instant(20), new Instant(20)))).isEmpty();
    assertThat(list(ol.readRangeLater(new Instant(-10), new Instant(0)).readRange(new Instant(-10), new Instant(0))))
        .containsExactly(tv("neg", -5));
    assertThat(list(s.state(W2, LIST).read())).containsExactly(tv("other-window", 15));
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void orderedListClearRangeIsHalfOpenAndClearEmptiesOnlyThatList(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    OrderedListState<String> ol = s.state(W1, LIST);
    for (long t = 0; t < 10; t++) {
      ol.add(tv("v" + t, t));
    }
    s.state(W2, LIST).add(tv("w2", 3));
    ol.clearRange(new Instant(2), new Instant(5));
    assertThat(list(ol.read())).extracting(TimestampedValue::getValue)
        .containsExactly("v0", "v1", "v5", "v6", "v7", "v8", "v9");
    ol.clearRange(new Instant(7), new Instant(7)); // empty range: no-op
    assertThat(list(ol.read())).hasSize(7);
    ol.clear();
    assertThat(ol.isEmpty().read()).isTrue();
    assertThat(ol.read()).isEmpty();
    ol.add(tv("again", 1));
    assertThat(list(ol.read())).containsExactly(tv("again", 1));
    assertThat(list(s.state(W2, LIST).read())).containsExactly(tv("w2", 3));
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void orderedListKeepsNullValues(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    s.state(W1, NULLABLE_LIST).add(tv(null, 2));
    s.state(W1, NULLABLE_LIST).add(tv("x", 1));
    state.cache().evictAll();
    assertThat(list(s.state(W1, NULLABLE_LIST).read())).containsExactly(tv("x", 1), tv(null, 2));
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void orderedListLargerThanCacheAndPagesStreamsSortedRanges(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    OrderedListState<String> ol = s.state(W1, LIST);
    int n = 5 * CachedStateInternals.PAGE_CELLS + 17;
    for (int i = 0; i < n; i++) {
      long t = (i * 7919L) % n; // a permutation of 0..n-1
      ol.add(tv("v" + t, t));
      if (i % 500 == 0) {
        state.commit();
      }
    }
    List<TimestampedValue<String>> all = list(ol.read());
    assertThat(all).hasSize(n);
    for (int i = 0; i < n; i++) {
      assertThat(all.get(i)).isEqualTo(tv("v" + i, i));
    }
    assertThat(list(ol.readRange(new Instant(300), new Instant(900)))).hasSize(600)
        .first().isEqualTo(tv("v300", 300));
    ol.clearRange(new Instant(0), new Instant(n - 1));
    assertThat(list(ol.read())).containsExactly(tv("v" + (n - 1), n - 1));
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void orderedListReadIsNotChangedByLaterWrites(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    OrderedListState<String> ol = s.state(W1, LIST);
    int n = 3 * CachedStateInternals.PAGE_CELLS;
    for (int i = 0; i < n; i++) {
      ol.add(tv("v" + i, i));
    }
    Iterable<TimestampedValue<String>> small = ol.readRange(new Instant(0), new Instant(3));
    Iterable<TimestampedValue<String>> large = ol.read();
    Iterator<TimestampedValue<String>> partlyRead = large.iterator();
    for (int i = 0; i < 10; i++) {
      assertThat(partlyRead.next()).isEqualTo(tv("v" + i, i));
    }
    ol.clearRange(new Instant(0), new Instant(n / 2));
    ol.add(tv("late", 1));
    int rest = 10;
    while (partlyRead.hasNext()) {
      assertThat(partlyRead.next()).isEqualTo(tv("v" + rest, rest));
      rest++;
    }
    assertThat(rest).isEqualTo(n);
    assertThat(list(large)).hasSize(n);
    assertThat(list(small)).extracting(TimestampedValue::getValue).containsExactly("v0", "v1", "v2");
    assertThat(list(ol.read())).hasSize(n / 2 + 1).first().isEqualTo(tv("late", 1));
    ol.clear();
    assertThat(list(large)).hasSize(n);
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void multimapPutGetKeysEntriesRemoveAndClear(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    MultimapState<String, Integer> mm = s.state(W1, MULTIMAP);
    assertThat(mm.isEmpty().read()).isTrue();
    assertThat(mm.get("a").read()).isEmpty();
    ReadableStateCheck later = new ReadableStateCheck(mm);
    mm.put("a", 1);
    mm.put("b", 2);
    mm.put("a", 1); // duplicates are kept
    state.commit();
    mm.put("a", 3);
    s.state(W2, MULTIMAP).put("a", 99);
    assertThat(list(mm.get("a").read())).containsExactly(1, 1, 3);
    assertThat(list(mm.keys().read())).containsExactlyInAnyOrder("a", "b");
    assertThat(list(mm.entries().read())).containsExactlyInAnyOrder(
        Map.entry("a", 1), Map.entry("a", 1), Map.entry("a", 3), Map.entry("b", 2));
    assertThat(mm.containsKey("b").read()).isTrue();
    assertThat(mm.containsKey("c").read()).isFalse();
    assertThat(later.containsA.read()).isTrue(); // evaluated when read, after the puts
    assertThat(list(later.keys.readLater().read())).containsExactlyInAnyOrder("a", "b");
    mm.remove("a");
    mm.remove("never-put");
    assertThat(mm.containsKey("a").read()).isFalse();
    assertThat(mm.get("a").read()).isEmpty();
    assertThat(list(mm.keys().read())).containsExactly("b");
    assertThat(mm.isEmpty().read()).isFalse();
    mm.put("a", 4);
    assertThat(list(mm.get("a").read())).containsExactly(4);
    mm.clear();
    assertThat(mm.isEmpty().read()).isTrue();
    assertThat(mm.keys().read()).isEmpty();
    assertThat(list(s.state(W2, MULTIMAP).get("a").read())).containsExactly(99);
  }

  /** Reading states taken before the writes they should see. */
  private static final class ReadableStateCheck {
    final org.apache.beam.sdk.state.ReadableState<Boolean> containsA;
    final org.apache.beam.sdk.state.ReadableState<Iterable<String>> keys;

    ReadableStateCheck(MultimapState<String, Integer> mm) {
      containsA = mm.containsKey("a");
      keys = mm.keys();
    }
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void multimapKeysAreEqualByStructuralValueAndValuesMayBeNull(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    MultimapState<byte[], String> mm = s.state(W1, BYTES_MULTIMAP);
    mm.put(new byte[] {1, 2}, "x");
    mm.put(new byte[] {1, 2}, null);
    mm.put(new byte[] {1}, "y");
    state.cache().evictAll();
    assertThat(list(mm.keys().read())).hasSize(2);
    assertThat(list(mm.get(new byte[] {1, 2}).read())).containsExactly("x", null);
    mm.remove(new byte[] {1, 2});
    assertThat(list(mm.keys().read())).containsExactly(new byte[] {1});
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void multimapReadsLargerThanCacheAndPagesAreSnapshots(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    MultimapState<String, Integer> mm = s.state(W1, MULTIMAP);
    int keys = 2 * CachedStateInternals.PAGE_CELLS + 5;
    for (int i = 0; i < keys; i++) {
      for (int v = 0; v < 3; v++) {
        mm.put("k" + i, v);
      }
    }
    for (int v = 0; v < 1000; v++) {
      mm.put("many", v);
    }
    Iterable<String> keysBefore = mm.keys().read();
    Iterable<Map.Entry<String, Integer>> entriesBefore = mm.entries().read();
    Iterable<Integer> manyBefore = mm.get("many").read();
    assertThat(list(keysBefore)).hasSize(keys + 1).doesNotHaveDuplicates();
    assertThat(list(manyBefore)).hasSize(1000).startsWith(0, 1, 2).endsWith(998, 999);
    mm.remove("many");
    mm.put("k0", 7);
    mm.put("new", 1);
    assertThat(list(keysBefore)).hasSize(keys + 1).contains("many").doesNotContain("new");
    assertThat(list(entriesBefore)).hasSize(3 * keys + 1000);
    assertThat(list(manyBefore)).hasSize(1000);
    assertThat(list(mm.keys().read())).hasSize(keys + 1).contains("new").doesNotContain("many");
    assertThat(list(mm.get("k0").read())).containsExactly(0, 1, 2, 7);
    assertThat(list(mm.entries().read())).hasSize(3 * keys + 2);
  }

  @ParameterizedTest(name = "{0}, cache {1}")
  @MethodSource("setups")
  void mapAndSetReadsLargerThanCacheAndPagesAreSnapshots(StateBackend backend, long cache) {
    CachedStateInternals s = open(backend, cache, "k", new WatermarkHolds());
    MapState<String, Integer> map = s.state(W1, MAP);
    SetState<String> set = s.state(W1, SET);
    int n = 3 * CachedStateInternals.PAGE_CELLS + 1;
    for (int i = 0; i < n; i++) {
      map.put("k" + i, i);
      set.add("e" + i);
    }
    Iterable<Map.Entry<String, Integer>> entries = map.entries().read();
    Iterable<String> keys = map.keys().read();
    Iterable<Integer> values = map.values().read();
    Iterable<String> elements = set.read();
    Iterator<String> partlyRead = elements.iterator();
    partlyRead.next();
    map.put("k0", -1);
    map.remove("k1");
    map.put("new", 0);
    set.remove("e2");
    set.clear();
    assertThat(list(entries)).hasSize(n).contains(Map.entry("k0", 0), Map.entry("k1", 1));
    assertThat(list(keys)).hasSize(n).contains("k1").doesNotContain("new");
    assertThat(list(values)).hasSize(n).doesNotContain(-1);
    assertThat(list(elements)).hasSize(n).contains("e2");
    int rest = 0;
    while (partlyRead.hasNext()) {
      partlyRead.next();
      rest++;
    }
    assertThat(rest).isEqualTo(n - 1);
    assertThat(list(map.entries().read())).hasSize(n).contains(Map.entry("k0", -1), Map.entry("new", 0));
    assertThat(set.read()).isEmpty();
    assertThat(set.isEmpty().read()).isTrue();
  }
}
