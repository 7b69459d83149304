package dev.weir.runner.operators.keyed;

import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.OperatorDriver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.state.ContainerState;
import dev.weir.runner.time.JobClock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.Sessions;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * A GroupByKey's kept ReduceFnRunners ({@link ReduceFnRunners}): one per key, and the same panes
 * whether runners and cached state values are kept for long or dropped after every work item.
 */
class ReduceFnRunnersTest {
  private static final TupleTag<KV<String, Iterable<Integer>>> TAG = new TupleTag<>();

  @Test
  void keepsOneRunnerPerKeyAndCapturesTheMergingWindowSet() {
    ContainerState state = ContainerState.inMemory(1000);
    try {
      GroupByKeyOperator<String, Integer, Iterable<Integer>> gbk = open(sessions(), state, 1024, new ArrayList<>());
      gbk.accept(element("a", 1, 0));
      gbk.accept(element("b", 2, 0));
      gbk.accept(element("a", 3, 5));
      gbk.finishBundle();

      assertThat(gbk.reduceFnRunners().keeping())
          .as("runners-core's window set was read through the tag ReduceFnRunners expects").isTrue();
      assertThat(gbk.reduceFnRunners().size()).isEqualTo(2);
    } finally {
      state.close();
    }
  }

  @Test
  void keepsRunnersForNonMergingWindows() {
    ContainerState state = ContainerState.inMemory(1000);
    try {
      // with allowed lateness: the default windowing would take the one-pane path, which keeps no runners
      GroupByKeyOperator<String, Integer, Iterable<Integer>> gbk = open(WindowingStrategy.of(
          FixedWindows.of(Duration.millis(10))).withAllowedLateness(Duration.millis(5)), state, 1024, new ArrayList<>());
      assertThat(gbk.onTimeOnly()).isFalse();
      gbk.accept(element("a", 1, 0));
      gbk.finishBundle();

      assertThat(gbk.reduceFnRunners().keeping()).isTrue();
      assertThat(gbk.reduceFnRunners().size()).isEqualTo(1);
    } finally {
      state.close();
    }
  }

  /**
   * A key's runner is built while the key has one session; a second session comes, fires and is
   * collected while the runner is kept, so runners-core's window set ends equal to what it read
   * and skips its write, while the cache (two entries) wrote back the two-session map in between.
   * The stored window set must still be the one session.
   */
  @Test
  void theStoredWindowSetFollowsASessionThatCameAndWentWhileTheRunnerWasKept() throws Exception {
    ContainerState state = ContainerState.inMemory(2);
    try {
      GroupByKeyOperator<String, Integer, Iterable<Integer>> gbk = open(sessions(), state, 1024, new ArrayList<>());
      gbk.accept(element("a", 1, 100));
      gbk.finishBundle();
      gbk.reduceFnRunners().clear(); // the next work item of "a" builds a runner that reads one session
      gbk.accept(element("a", 2, 0));
      gbk.finishBundle();
      for (String other : List.of("b", "c", "d")) { // other keys' cells push "a"'s out of the cache
        gbk.accept(element(other, 3, 0));
        gbk.finishBundle();
      }
      OperatorDriver.advance(gbk, new Instant(20)); // [0, 10) of every key fires and is collected
      gbk.finishBundle();
      for (String other : List.of("e", "f", "g")) {
        gbk.accept(element(other, 4, 50));
        gbk.finishBundle();
      }

      ValueState<Map<BoundedWindow, Set<BoundedWindow>>> windowSet = gbk.keys
          .get(CoderUtils.encodeToByteArray(StringUtf8Coder.of(), "a"), "a").state()
          .state(StateNamespaces.global(), ReduceFnRunners.windowSetTag(IntervalWindow.getCoder()));
      assertThat(windowSet.read().keySet())
          .containsExactly(new IntervalWindow(new Instant(100), new Instant(110)));
    } finally {
      state.close();
    }
  }

  /**
   * Sessions that grow, merge, fire and are collected while more arrive, over three keys; run once
   * with runners kept and a roomy cache, once with one runner kept and a cache of two entries (so
   * every work item rebuilds its runner from state the cache has just written back): the panes
   * must be the same.
   */
  @Test
  void givesTheSamePanesWhenRunnersAndCachedValuesAreDroppedAfterEveryWorkItem() {
    assertThat(run(1, 2)).isEqualTo(run(1024, 10_000)).isNotEmpty();
  }

  private static List<String> run(int keptRunners, long cacheEntries) {
    ContainerState state = ContainerState.inMemory(cacheEntries);
    List<WindowedValue<?>> out = new ArrayList<>();
    try {
      GroupByKeyOperator<String, Integer, Iterable<Integer>> gbk = open(sessions(), state, keptRunners, out);
      int value = 0;
      for (int round = 0; round < 6; round++) {
        long base = round * 40L;
        for (String key : List.of("a", "b", "c")) {
          gbk.accept(element(key, value++, base));
          gbk.accept(element(key, value++, base + 25)); // a second session of the round
          gbk.accept(element(key, value++, base + 8)); // joins the first session
          gbk.finishBundle();
          gbk.accept(element(key, value++, base + 16)); // bridges both into one session
          gbk.finishBundle();
        }
        OperatorDriver.advance(gbk, new Instant(base + 20)); // fires nothing yet: sessions end later
        OperatorDriver.advance(gbk, new Instant(base + 60)); // the round's sessions fire and are collected
        gbk.finishBundle();
      }
      OperatorDriver.advance(gbk, BoundedWindow.TIMESTAMP_MAX_VALUE);
      gbk.finishBundle();
    } finally {
      state.close();
    }
    List<String> panes = new ArrayList<>();
    for (WindowedValue<?> pane : out) {
      @SuppressWarnings("unchecked")
      KV<String, Iterable<Integer>> group = (KV<String, Iterable<Integer>>) pane.getValue();
      TreeSet<Integer> values = new TreeSet<>();
      group.getValue().forEach(values::add);
      panes.add(group.getKey() + " " + pane.getWindows() + " " + pane.getPaneInfo().getTiming() + " " + values);
    }
    panes.sort(null);
    return panes;
  }

  /**
   * Sessions whose panes carry their earliest element's timestamp: runners-core's path (with the
   * default end-of-window timestamp they would take the merging one-pane path, which keeps no runners).
   */
  private static WindowingStrategy<?, ?> sessions() {
    return WindowingStrategy.of(Sessions.withGapDuration(Duration.millis(10)))
        .withTimestampCombiner(org.apache.beam.sdk.transforms.windowing.TimestampCombiner.EARLIEST);
  }

  private static GroupByKeyOperator<String, Integer, Iterable<Integer>> open(WindowingStrategy<?, ?> windowing,
      ContainerState state, int keptRunners, List<WindowedValue<?>> out) {
    GroupByKeyOperator<String, Integer, Iterable<Integer>> gbk =
        GroupByKeyOperator.grouping(StringUtf8Coder.of(), VarIntCoder.of(), windowing, TAG);
    gbk.keptRunners = keptRunners;
    gbk.open(new OperatorContext(PipelineOptionsFactory.create(), "gbk", 0, Map.of(TAG, out::add), state,
        JobClock.SYSTEM));
    return gbk;
  }

  /** An element in the global window, as before window assignment merges it into sessions. */
  private static WindowedValue<KV<String, Integer>> element(String key, int value, long timestampMs) {
    Instant t = new Instant(timestampMs);
    return WindowedValues.of(KV.of(key, value), t,
        new IntervalWindow(t, t.plus(Duration.millis(10))), PaneInfo.NO_FIRING);
  }
}
