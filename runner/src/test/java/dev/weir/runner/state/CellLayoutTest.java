package dev.weir.runner.state;

import dev.weir.runner.timers.TimerIndex;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.state.store.ByteKeys;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StoreIterator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.runners.core.StateTags;
import org.apache.beam.runners.core.TimerInternals.TimerData;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.TimestampCombiner;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.samza.storage.kv.Entry;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The on-disk format of state and timer keys, byte for byte. The expected bytes are written out
 * as hex literals (spaces only separate fields): a failure here means the format changed, which
 * is allowed only with a new {@link CellLayout#FORMAT_VERSION} and a new golden test.
 *
 * <p>Fixed inputs: operator id {@code 00000007}, key {@code "k"} ({@code 6b}), the global namespace
 * ({@code "/"}, {@code 2f}), one-letter state ids. Where the runner derives operator ids itself,
 * their golden values pin the hash function too, and the key group a restore computes from a key's
 * bytes is pinned beside them: {@code "k"} is in key group {@code 314d} of 32768, and PTransform {@code "step"}'s ids are
 * {@code 0c74a8ab} (state), {@code b0230421} (timer index) and {@code c3db6dcc} (timer slots).
 */
class CellLayoutTest {
  private static final byte[] OPERATOR = {0, 0, 0, 7};
  private static final byte[] KEY = {0x6b};
  private static final byte[] NS = {0x2f};

  /** version 05 | operator 00000007 | len 00000001 | key 6b. */
  private static final String KEY_PREFIX = "05 00000007 00000001 6b";
  /** KEY_PREFIX | len 00000001 | ns 2f | len 00000001 | id 73 ("s"). */
  private static final String BASE_S = KEY_PREFIX + " 00000001 2f 00000001 73";

  private static byte[] bytes(String hex) {
    return HexFormat.of().parseHex(hex.replace(" ", ""));
  }

  private static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }

  private static String hexOf(String spaced) {
    return spaced.replace(" ", "");
  }

  private static byte[] base(String id) {
    return CellLayout.base(CellLayout.keyPrefix(OPERATOR, KEY), NS, id.getBytes(StandardCharsets.UTF_8));
  }

  // ---- golden bytes, per kind of key -----------------------------------------------------------

  @Test
  void keyPrefixBaseAndSingleCell_valueCombiningHoldAndCounters() {
    assertThat(hex(CellLayout.keyPrefix(OPERATOR, KEY))).isEqualTo(hexOf(KEY_PREFIX));
    assertThat(CellLayout.keyBytesOfCell(base("s"))).containsExactly(KEY);
    assertThat(hex(base("s"))).isEqualTo(hexOf(BASE_S));
    assertThat(hex(CellLayout.cell(base("s")))).isEqualTo(hexOf(BASE_S + " 00"));
    assertThat(hex(CellLayout.elements(base("s")))).isEqualTo(hexOf(BASE_S + " 01"));
  }

  @Test
  void bagChunk_indexAsEightBytes() {
    assertThat(hex(CellLayout.bagChunk(CellLayout.elements(base("s")), 258)))
        .isEqualTo(hexOf(BASE_S + " 01 0000000000000102"));
  }

  @Test
  void mapEntryAndSetElement_encodedKeyAfterTheElementsPrefix() {
    byte[] encoded = {0x61, 0x62}; // StringUtf8Coder's "ab"
    assertThat(hex(CellLayout.entry(CellLayout.elements(base("s")), encoded))).isEqualTo(hexOf(BASE_S + " 01 6162"));
    byte[] elements = CellLayout.elements(base("s"));
    assertThat(CellLayout.entryKey(CellLayout.entry(elements, encoded), elements.length)).containsExactly(encoded);
  }

  @Test
  void orderedListCell_sortableTimestampThenSequence() {
    byte[] elements = CellLayout.elements(base("s"));
    assertThat(hex(CellLayout.orderedListCell(elements, 1000, 3)))
        .isEqualTo(hexOf(BASE_S + " 01 80000000000003e8 0000000000000003"));
    assertThat(hex(CellLayout.orderedListCell(elements, -2, 0)))
        .isEqualTo(hexOf(BASE_S + " 01 7ffffffffffffffe 0000000000000000"));
    assertThat(hex(CellLayout.orderedListBound(elements, 0))).isEqualTo(hexOf(BASE_S + " 01 8000000000000000"));
  }

  @Test
  void multimapCell_lengthKeyThenSequence() {
    byte[] elements = CellLayout.elements(base("s"));
    assertThat(hex(CellLayout.multimapKeyPrefix(elements, new byte[] {0x61})))
        .isEqualTo(hexOf(BASE_S + " 01 00000001 61"));
    assertThat(hex(CellLayout.multimapCell(elements, new byte[] {0x61}, 5)))
        .isEqualTo(hexOf(BASE_S + " 01 00000001 61 0000000000000005"));
  }

  @Test
  void timerIndexKeyAndValue_operatorThenPartitionThenTime() {
    byte[] prefix = CellLayout.timerIndexPrefix(new byte[] {0, 0, 0, 2}, 5);
    assertThat(hex(prefix)).isEqualTo(hexOf("05 00000002 00000005"));
    byte[] key = CellLayout.timerIndexKey(prefix, -1, KEY, NS, bytes("74"), bytes("66"));
    assertThat(hex(key)).isEqualTo(
        hexOf("05 00000002 00000005 7fffffffffffffff 00000001 6b 00000001 2f 00000001 74 00000001 66"));
    assertThat(CellLayout.partitionOfTimerIndexKey(key)).isEqualTo(5);
    assertThat(hex(CellLayout.withTimerIndexPartition(key, 9))).isEqualTo(
        hexOf("05 00000002 00000009 7fffffffffffffff 00000001 6b 00000001 2f 00000001 74 00000001 66"));
    assertThat(hex(CellLayout.timerIndexValue(5))).isEqualTo("0000000000000005");
  }

  @Test
  void timerSlotKeyAndValue_laidOutLikeStateCells() {
    byte[] slot = CellLayout.timerSlotKey(new byte[] {0, 0, 0, 3}, KEY, NS, bytes("74"), new byte[0]);
    assertThat(hex(slot)).isEqualTo(hexOf("05 00000003 00000001 6b 00000001 2f 00000001 74 00000000"));
    assertThat(CellLayout.keyBytesOfCell(slot)).containsExactly(KEY);
    assertThat(hex(CellLayout.timerSlotValue(-1, 5))).isEqualTo(hexOf("ffffffffffffffff 0000000000000005"));
  }

  @Test
  void holdCells_haveTheirOwnKind_soARestoreFindsEveryHoldWithoutKnowingTheStates() {
    byte[] hold = CellLayout.holdCell(base("h"));
    assertThat(hex(hold)).isEqualTo(hexOf(KEY_PREFIX + " 00000001 2f 00000001 68 02"));
    assertThat(CellLayout.holdOfCell(hold, bytes("80000000000003e8"))).isEqualTo(1000);
    assertThat(CellLayout.holdOfCell(hold, bytes("7ffffffffffffffe"))).isEqualTo(-2);
    assertThat(CellLayout.holdOfCell(CellLayout.cell(base("h")), bytes("80000000000003e8"))).isEqualTo(Long.MIN_VALUE);
    assertThat(CellLayout.holdOfCell(CellLayout.entry(CellLayout.elements(base("h")), bytes("02")), bytes("01")))
        .isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void decodeCell_readsOperatorKeyNamespaceAndStateId_ofAnyCellOfAState() {
    for (byte[] cell : List.of(CellLayout.cell(base("s")), CellLayout.holdCell(base("s")),
        CellLayout.bagChunk(CellLayout.elements(base("s")), 3))) {
      CellLayout.CellKey k = CellLayout.decodeCell(cell);
      assertThat(k.operator()).isEqualTo(7);
      assertThat(k.keyBytes()).containsExactly(KEY);
      assertThat(k.namespace()).isEqualTo("/");
      assertThat(k.stateId()).isEqualTo("s");
    }
  }

  @Test
  void operatorIds_areAHashOfSpaceAndPTransformName() {
    assertThat(hex(CellLayout.operatorId("step", "state"))).isEqualTo("0c74a8ab");
    assertThat(hex(CellLayout.operatorId("step", "timer-index"))).isEqualTo("b0230421");
    assertThat(hex(CellLayout.operatorId("step", "timer-slot"))).isEqualTo("c3db6dcc");
  }

  // ---- golden bytes, as the state kinds and the timer index write them ------------------------

  /** Sums longs; its accumulator is the sum (VarLongCoder). */
  private static final class SumLongs extends CombineFn<Long, Long, Long> {
    @Override
    public Long createAccumulator() {
      return 0L;
    }

    @Override
    public Long addInput(Long accumulator, Long input) {
      return accumulator + input;
    }

    @Override
    public Long mergeAccumulators(Iterable<Long> accumulators) {
      long sum = 0;
      for (long a : accumulators) {
        sum += a;
      }
      return sum;
    }

    @Override
    public Long extractOutput(Long accumulator) {
      return accumulator;
    }
  }

  private static Map<String, String> dump(SortedByteStore store) {
    Map<String, String> cells = new TreeMap<>();
    try (StoreIterator<byte[], byte[]> it = store.all()) {
      while (it.hasNext()) {
        Entry<byte[], byte[]> e = it.next();
        cells.put(hex(e.getKey()), hex(e.getValue()));
      }
    }
    return cells;
  }

  @Test
  void everyStateKindWritesExactlyTheseCells() {
    try (ContainerState state = ContainerState.inMemory(1000)) {
      CachedStateInternals s = new CachedStateInternals("k", KEY, OPERATOR, state.store(), new WatermarkHolds(),
          GlobalWindow.Coder.INSTANCE);
      var global = StateNamespaces.global();
      s.state(global, StateTags.value("v", StringUtf8Coder.of())).write("x");
      s.state(global, StateTags.bag("b", VarIntCoder.of())).add(3);
      s.state(global, StateTags.combiningValue("c", VarLongCoder.of(), new SumLongs())).add(5L);
      s.state(global, StateTags.watermarkStateInternal("h", TimestampCombiner.EARLIEST)).add(new Instant(1000));
      s.state(global, StateTags.map("m", StringUtf8Coder.of(), VarIntCoder.of())).put("a", 1);
      s.state(global, StateTags.set("e", StringUtf8Coder.of())).add("a");
      s.state(global, StateTags.orderedList("o", StringUtf8Coder.of())).add(TimestampedValue.of("x", new Instant(-2)));
      s.state(global, StateTags.multimap("u", StringUtf8Coder.of(), VarIntCoder.of())).put("a", 2);
      state.commit();

      String ns = KEY_PREFIX + " 00000001 2f 00000001";
      Map<String, String> expected = new TreeMap<>();
      expected.put(hexOf(ns + " 76 00"), "78"); // value "x"
      expected.put(hexOf(ns + " 62 00"), "01"); // bag length 1
      expected.put(hexOf(ns + " 62 01 0000000000000000"), hexOf("00000001 03")); // bag chunk 0: count 1, element 3
      expected.put(hexOf(ns + " 63 00"), "05"); // combining accumulator
      expected.put(hexOf(ns + " 68 02"), "80000000000003e8"); // hold at 1000 ms (InstantCoder), kind 2
      expected.put(hexOf(ns + " 6d 01 61"), "01"); // map "a" -> 1
      expected.put(hexOf(ns + " 65 01 61"), "01"); // set "a" (true)
      expected.put(hexOf(ns + " 6f 00"), "01"); // ordered-list counter
      expected.put(hexOf(ns + " 6f 01 7ffffffffffffffe 0000000000000000"), "78"); // "x" at -2 ms
      expected.put(hexOf(ns + " 75 00"), "01"); // multimap counter
      expected.put(hexOf(ns + " 75 01 00000001 61 0000000000000000"), "02"); // "a" -> 2
      assertThat(dump(state.storage().store(ContainerState.STORE))).isEqualTo(expected);
    }
  }

  @Test
  void aParDosStateIsKnownByTheNameTheUserGave_notByItsDoFnClass() {
    assertThat(CellLayout.stateIdentity("count/ParMultiDo(CountFn)")).isEqualTo("count");
    assertThat(CellLayout.stateIdentity("a/b/ParMultiDo(Fn)")).isEqualTo("a/b");
    assertThat(CellLayout.stateIdentity("ParMultiDo(Fn)")).as("no name above it").isEqualTo("ParMultiDo(Fn)");
    assertThat(CellLayout.stateIdentity("count/ParMultiDo(Fn)/Inner")).isEqualTo("count/ParMultiDo(Fn)/Inner");
    assertThat(CellLayout.stateIdentity("GroupByKey")).isEqualTo("GroupByKey");
    assertThat(CellLayout.operatorIdValue("count/ParMultiDo(CountFn)", "state"))
        .isEqualTo(CellLayout.operatorIdValue("count/ParMultiDo(CountFnV2)", "state"))
        .isNotEqualTo(CellLayout.operatorIdValue("count", "timer-index"));
  }

  @Test
  void timerIndexWritesExactlyTheseEntries() {
    try (ContainerState state = ContainerState.inMemory(1000)) {
      TimerIndex index = new TimerIndex(state, "step", 5, GlobalWindow.Coder.INSTANCE, 8);
      index.open(null);
      index.set(KEY, TimerData.of("t", "f", StateNamespaces.global(), new Instant(-1), new Instant(5),
          TimeDomain.EVENT_TIME));
      state.commit();

      assertThat(dump(state.timerStore())).isEqualTo(Map.of(
          hexOf("05 b0230421 00000005 7fffffffffffffff 00000001 6b 00000001 2f 00000001 74 00000001 66"),
          "0000000000000005"));
      assertThat(dump(state.storage().store(ContainerState.STORE))).isEqualTo(Map.of(
          hexOf("05 c3db6dcc 00000001 6b 00000001 2f 00000001 74 00000001 66"),
          hexOf("ffffffffffffffff 0000000000000005")));
      assertThat(KeyGroups.DEFAULT.keyGroupOf(KEY)).as("the key group a restore computes for \"k\"").isEqualTo(0x314d);
    }
  }

  // ---- round trips and order ------------------------------------------------------------------

  private static final long[] TIMESTAMPS = {
    BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis(), Long.MIN_VALUE, -86_400_000L, -1, 0, 1, 1_700_000_000_000L,
    BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis(), Long.MAX_VALUE
  };

  @Test
  void orderedListCells_roundTripAndSortByTimestampThenSequenceAsUnsignedBytes() {
    byte[] elements = CellLayout.elements(base("s"));
    List<byte[]> cells = new ArrayList<>();
    List<long[]> expected = new ArrayList<>();
    for (long ts : TIMESTAMPS) {
      for (long seq : new long[] {0, 1, 255, 256}) {
        byte[] cell = CellLayout.orderedListCell(elements, ts, seq);
        assertThat(CellLayout.orderedListTimestampMs(cell, elements.length)).isEqualTo(ts);
        assertThat(CellLayout.getLong(cell, elements.length + 8)).isEqualTo(seq);
        cells.add(cell);
        expected.add(new long[] {ts, seq});
      }
      byte[] bound = CellLayout.orderedListBound(elements, ts);
      assertThat(ByteKeys.ORDER.compare(bound, CellLayout.orderedListCell(elements, ts, 0))).isNegative();
    }
    expected.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
    cells.sort(ByteKeys.ORDER);
    for (int i = 0; i < cells.size(); i++) {
      assertThat(CellLayout.orderedListTimestampMs(cells.get(i), elements.length)).isEqualTo(expected.get(i)[0]);
      assertThat(CellLayout.getLong(cells.get(i), elements.length + 8)).isEqualTo(expected.get(i)[1]);
    }
  }

  @Test
  void timerIndexKeys_roundTripAndSortByTimestampFirstAsUnsignedBytes() {
    byte[] prefix = CellLayout.timerIndexPrefix(OPERATOR, 0);
    List<byte[]> keys = new ArrayList<>();
    for (long ts : TIMESTAMPS) {
      // a larger key must not sort a timer before an earlier one
      byte[] key = CellLayout.timerIndexKey(prefix, ts, new byte[] {(byte) 0xff, 1}, NS, bytes("74"), new byte[0]);
      CellLayout.TimerKey decoded = CellLayout.decodeTimerIndexKey(key, prefix.length);
      assertThat(decoded.timestampMs()).isEqualTo(ts);
      assertThat(decoded.keyBytes()).containsExactly(0xff, 1);
      assertThat(decoded.namespace()).isEqualTo("/");
      assertThat(decoded.timerId()).isEqualTo("t");
      assertThat(decoded.familyId()).isEmpty();
      keys.add(key);
      keys.add(CellLayout.timerIndexKey(prefix, ts, new byte[0], NS, bytes("74"), new byte[0]));
    }
    keys.sort(ByteKeys.ORDER);
    long previous = Long.MIN_VALUE;
    for (byte[] key : keys) {
      long ts = CellLayout.decodeTimerIndexKey(key, prefix.length).timestampMs();
      assertThat(ts).isGreaterThanOrEqualTo(previous);
      previous = ts;
    }
  }

  @Test
  void multimapCellsAndTimerSlots_roundTrip() {
    byte[] elements = CellLayout.elements(base("s"));
    byte[] cell = CellLayout.multimapCell(elements, bytes("616263"), 9);
    int keyEnd = CellLayout.multimapKeyEnd(cell, elements.length);
    assertThat(keyEnd).isEqualTo(elements.length + 4 + 3);
    assertThat(CellLayout.multimapKey(cell, elements.length, keyEnd)).containsExactly(0x61, 0x62, 0x63);
    assertThat(cell).startsWith(CellLayout.multimapKeyPrefix(elements, bytes("616263")));
    assertThat(CellLayout.decodeTimerSlot(CellLayout.timerSlotValue(Long.MIN_VALUE, -7)))
        .containsExactly(Long.MIN_VALUE, -7);
    assertThat(CellLayout.timerIndexOutputMs(CellLayout.timerIndexValue(-42))).isEqualTo(-42);
  }

  @Test
  void noCellOfOneStateLiesInAnotherStatesElementRange() {
    // "s" and "st": without the length fields, one id would be a prefix of the other
    byte[] s = CellLayout.elements(base("s"));
    byte[] st = CellLayout.elements(base("st"));
    assertThat(ByteKeys.inRange(CellLayout.cell(base("st")), s, ByteKeys.prefixEnd(s))).isFalse();
    assertThat(ByteKeys.inRange(CellLayout.entry(st, bytes("00")), s, ByteKeys.prefixEnd(s))).isFalse();
  }

  @Test
  void successorResumesAtKeysThatExtendTheLastOne_prefixEndSkipsThem() {
    byte[] a = bytes("6b31"); // map key "k1"
    byte[] extending = bytes("6b3130"); // "k10"
    assertThat(ByteKeys.inRange(extending, ByteKeys.successor(a), null)).isTrue();
    assertThat(ByteKeys.inRange(extending, ByteKeys.prefixEnd(a), null)).isFalse();
    assertThat(hex(ByteKeys.successor(a))).isEqualTo("6b3100");
  }

  @Test
  void unknownFormatVersionIsRejected() {
    byte[] key = CellLayout.timerIndexKey(CellLayout.timerIndexPrefix(OPERATOR, 0), 0, KEY, NS, bytes("74"),
        new byte[0]);
    key[0] = 1;
    assertThatThrownBy(() -> CellLayout.decodeTimerIndexKey(key, CellLayout.TIMER_INDEX_PREFIX_BYTES))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("format version 1");
  }
}
