package dev.weir.runner.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.state.StateBackend;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.runners.core.StateTags;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VoidCoder;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.CombiningState;
import org.apache.beam.sdk.state.MapState;
import org.apache.beam.sdk.state.SetState;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.state.WatermarkHoldState;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.TimestampCombiner;
import org.joda.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
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
  private static final StateTag<CombiningState<Integer, int[], Integer>> SUM =
      StateTags.combiningValueFromInputInternal("s", VarIntCoder.of(), Sum.ofIntegers());
  private static final StateTag<MapState<String, Integer>> MAP =
      StateTags.map("m", StringUtf8Coder.of(), VarIntCoder.of());
  private static final StateTag<SetState<String>> SET = StateTags.set("set", StringUtf8Coder.of());
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
    return new CachedStateInternals(key, key.getBytes(), new byte[] {0, 0, 0, 1}, state.store(), holds);
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
}
