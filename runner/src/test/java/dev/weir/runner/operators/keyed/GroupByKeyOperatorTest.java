package dev.weir.runner.operators.keyed;

import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.OperatorDriver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.state.ContainerState;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.beam.runners.core.LateDataDroppingDoFnRunner;
import org.apache.beam.runners.core.SystemReduceFn;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.metrics.MetricName;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.windowing.AfterWatermark;
import org.apache.beam.sdk.transforms.windowing.Sessions;
import org.apache.beam.sdk.transforms.windowing.SlidingWindows;
import org.apache.beam.sdk.transforms.windowing.WindowFn;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.AfterProcessingTime;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.TimestampCombiner;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.time.ManualJobClock;
import org.apache.beam.sdk.values.WindowingStrategy.AccumulationMode;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The GroupByKey operator's watermark hold, output and timer firing, driven directly (no executor). */
class GroupByKeyOperatorTest {
  private final TupleTag<KV<String, Iterable<Integer>>> tag = new TupleTag<>();
  private final List<WindowedValue<?>> out = new ArrayList<>();
  private final ContainerState state = ContainerState.inMemory(1000);
  private GroupByKeyOperator<String, Integer, Iterable<Integer>> gbk;

  /**
   * A GroupByKey of String keys and Integer values with {@code windowing}, opened over {@link #state},
   * that runs every windowing through runners-core (no one-pane path).
   */
  private void open(WindowingStrategy<?, ?> windowing, JobClock clock) {
    open(windowing, clock, false);
  }

  /** As {@link #open(WindowingStrategy, JobClock)}; with {@code onTimePath} as the translator builds it. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private void open(WindowingStrategy<?, ?> windowing, JobClock clock, boolean onTimePath) {
    gbk = grouping(windowing, tag, onTimePath);
    gbk.open(new OperatorContext(PipelineOptionsFactory.create(), "gbk", 0, Map.of(tag, out::add), state, clock));
  }

  /**
   * A GroupByKey of String keys and Integer values: as the translator builds it (the one-pane path
   * where the windowing allows) when {@code onTimePath}, else through runners-core for every windowing.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static GroupByKeyOperator<String, Integer, Iterable<Integer>> grouping(WindowingStrategy<?, ?> windowing,
      TupleTag<KV<String, Iterable<Integer>>> tag, boolean onTimePath) {
    return onTimePath
        ? GroupByKeyOperator.grouping(StringUtf8Coder.of(), VarIntCoder.of(), windowing, tag)
        : new GroupByKeyOperator<>(StringUtf8Coder.of(), VarIntCoder.of(), windowing, tag,
            (SystemReduceFn) SystemReduceFn.buffering(VarIntCoder.of()), null);
  }

  @AfterEach
  void closeState() {
    state.close();
  }

  @Test
  void holdsTheOutputWatermarkAtBufferedElementsUntilTheWindowFires() {
    WindowingStrategy<?, ?> windowing = WindowingStrategy.of(FixedWindows.of(Duration.millis(10)))
        .withTimestampCombiner(TimestampCombiner.EARLIEST);
    open(windowing, JobClock.SYSTEM);
    IntervalWindow w = new IntervalWindow(new Instant(0), new Instant(10));
    gbk.accept(WindowedValues.of(KV.of("k", 1), new Instant(7), w, PaneInfo.NO_FIRING));
    gbk.accept(WindowedValues.of(KV.of("k", 2), new Instant(4), w, PaneInfo.NO_FIRING));
    gbk.finishBundle();
    assertThat(gbk.watermarkHold()).isEqualTo(new Instant(4));

    OperatorDriver.deliver(gbk, new Instant(5));
    assertThat(out).isEmpty();
    assertThat(gbk.watermarkHold()).isEqualTo(new Instant(4));

    OperatorDriver.deliver(gbk, new Instant(10));
    assertThat(out).as("a watermark only makes timers ready").isEmpty();
    while (OperatorDriver.hasReadyTimers(gbk)) {
      OperatorDriver.fire(gbk, 1);
    }
    gbk.finishBundle();
    assertThat(out).hasSize(1);
    assertThat(out.get(0).getTimestamp()).isEqualTo(new Instant(4));
    @SuppressWarnings("unchecked")
    KV<String, Iterable<Integer>> group = (KV<String, Iterable<Integer>>) out.get(0).getValue();
    assertThat(group.getValue()).containsExactlyInAnyOrder(1, 2);
    assertThat(gbk.watermarkHold()).isEqualTo(BoundedWindow.TIMESTAMP_MAX_VALUE);
    assertThat(state.commits()).isZero(); // commits are the container's business
    state.commitIfRequested();
    assertThat(state.commits()).isEqualTo(1);
  }

  @ParameterizedTest(name = "one-pane path: {0}")
  @ValueSource(booleans = {false, true})
  void firesReadyTimersInSlicesHoldingTheOutputWatermarkAtTheEarliestUnfiredOne(boolean onTimePath) {
    WindowingStrategy<?, ?> windowing = WindowingStrategy.of(FixedWindows.of(Duration.millis(10)))
        .withTimestampCombiner(TimestampCombiner.END_OF_WINDOW);
    open(windowing, JobClock.SYSTEM, onTimePath);
    assertThat(gbk.onTimeOnly()).isEqualTo(onTimePath);
    for (int i = 0; i < 3; i++) { // windows [0,10), [10,20), [20,30), one key each
      IntervalWindow w = new IntervalWindow(new Instant(10 * i), new Instant(10 * i + 10));
      gbk.accept(WindowedValues.of(KV.of("k" + i, i), new Instant(10 * i + 1), w, PaneInfo.NO_FIRING));
    }
    gbk.finishBundle();

    OperatorDriver.deliver(gbk, BoundedWindow.TIMESTAMP_MAX_VALUE);
    assertThat(out).isEmpty();
    assertThat(OperatorDriver.hasReadyTimers(gbk)).isTrue();
    assertThat(gbk.watermarkHold()).isEqualTo(new Instant(9));

    OperatorDriver.fire(gbk, 1);
    assertThat(out).hasSize(1);
    assertThat(out.get(0).getTimestamp()).isEqualTo(new Instant(9));
    assertThat(OperatorDriver.hasReadyTimers(gbk)).isTrue();
    assertThat(gbk.watermarkHold()).as("the next unfired end-of-window timer").isEqualTo(new Instant(19));

    OperatorDriver.fire(gbk, 10);
    gbk.finishBundle();
    assertThat(out).extracting(WindowedValue::getTimestamp)
        .containsExactly(new Instant(9), new Instant(19), new Instant(29));
    assertThat(OperatorDriver.hasReadyTimers(gbk)).isFalse();
    assertThat(gbk.watermarkHold()).isEqualTo(BoundedWindow.TIMESTAMP_MAX_VALUE);
  }

  @ParameterizedTest(name = "one-pane path: {0}")
  @ValueSource(booleans = {false, true})
  void oneWatermarkCall_firesAtMostItsBudgetAndNothingWhileTheOutputIsBlocked(boolean onTimePath) {
    WindowingStrategy<?, ?> windowing = WindowingStrategy.of(FixedWindows.of(Duration.millis(10)))
        .withTimestampCombiner(TimestampCombiner.END_OF_WINDOW);
    open(windowing, JobClock.SYSTEM, onTimePath);
    for (int i = 0; i < 3; i++) {
      IntervalWindow w = new IntervalWindow(new Instant(10 * i), new Instant(10 * i + 10));
      gbk.accept(WindowedValues.of(KV.of("k" + i, i), new Instant(10 * i + 1), w, PaneInfo.NO_FIRING));
    }
    gbk.finishBundle();
    java.util.concurrent.atomic.AtomicBoolean blocked = new java.util.concurrent.atomic.AtomicBoolean(true);

    assertThat(gbk.advanceWatermark(BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis(), 64, blocked::get)).isFalse();
    assertThat(out).as("the outbox is blocked: the watermark only makes timers ready").isEmpty();
    assertThat(gbk.watermarkHold()).isEqualTo(new Instant(9));

    blocked.set(false);
    assertThat(gbk.advanceWatermark(Long.MIN_VALUE, 2, blocked::get)).as("one timer left").isFalse();
    assertThat(out).hasSize(2);
    assertThat(gbk.watermarkHold()).isEqualTo(new Instant(29));
    assertThat(gbk.advanceWatermark(Long.MIN_VALUE, 2, blocked::get)).isTrue();
    assertThat(out).hasSize(3);
    assertThat(gbk.advanceWatermark(BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis(), 2, blocked::get))
        .as("the same watermark again is no advance").isTrue();
    assertThat(out).hasSize(3);
  }

  @Test
  void readyTimersOfOneKeyReachRunnersCoreTogether_andEachWindowFiresOnce() {
    WindowingStrategy<?, ?> windowing = WindowingStrategy.of(FixedWindows.of(Duration.millis(10)))
        .withTimestampCombiner(TimestampCombiner.END_OF_WINDOW);
    open(windowing, JobClock.SYSTEM);
    for (int i = 0; i < 5; i++) { // five windows of "hot", interleaved with one of "cold"
      IntervalWindow w = new IntervalWindow(new Instant(10 * i), new Instant(10 * i + 10));
      gbk.accept(WindowedValues.of(KV.of("hot", i), new Instant(10 * i + 1), w, PaneInfo.NO_FIRING));
      if (i == 2) {
        gbk.accept(WindowedValues.of(KV.of("cold", 9), new Instant(10 * i + 2), w, PaneInfo.NO_FIRING));
      }
    }
    gbk.finishBundle();
    OperatorDriver.deliver(gbk, new Instant(100));
    OperatorDriver.fire(gbk, 6); // one call: six timers, two work items
    gbk.finishBundle();
    // runners-core emits one work item's windows in no particular order
    assertThat(out).extracting(v -> (Object) v.getValue()).containsExactlyInAnyOrder(
        KV.of("hot", List.of(0)), KV.of("hot", List.of(1)), KV.of("hot", List.of(2)), KV.of("hot", List.of(3)),
        KV.of("hot", List.of(4)), KV.of("cold", List.of(9)));
    assertThat(OperatorDriver.hasReadyTimers(gbk)).isFalse();
  }

  @Test
  void processingTimeTimersFireInSlicesOnlyOnceTheTickIsStrictlyPastThem() {
    WindowingStrategy<?, ?> windowing = WindowingStrategy.of(new GlobalWindows())
        .withTrigger(Repeatedly.forever(AfterProcessingTime.pastFirstElementInPane().plusDelayOf(Duration.millis(10))))
        .withMode(AccumulationMode.DISCARDING_FIRED_PANES);
    ManualJobClock clock = new ManualJobClock(1_000);
    open(windowing, clock);
    for (int i = 0; i < 3; i++) { // one pane timer per key, all at 1_010
      gbk.accept(WindowedValues.of(KV.of("k" + i, i), new Instant(i), GlobalWindow.INSTANCE, PaneInfo.NO_FIRING));
    }
    gbk.finishBundle();
    Instant hold = gbk.watermarkHold();

    gbk.onProcessingTime(new Instant(1_010));
    assertThat(OperatorDriver.hasReadyTimers(gbk)).as("a timer is not ready at its own time").isFalse();

    gbk.onProcessingTime(new Instant(1_011));
    assertThat(out).as("a tick only makes timers ready").isEmpty();
    assertThat(OperatorDriver.hasReadyTimers(gbk)).isTrue();
    assertThat(gbk.watermarkHold()).as("ready processing-time timers hold nothing more").isEqualTo(hold);

    OperatorDriver.fire(gbk, 1);
    assertThat(out).hasSize(1);
    assertThat(OperatorDriver.hasReadyTimers(gbk)).isTrue();
    OperatorDriver.fire(gbk, 10);
    gbk.finishBundle();
    assertThat(out).extracting(v -> (Object) ((KV<?, ?>) v.getValue()).getKey()).containsExactlyInAnyOrder("k0", "k1", "k2");
    assertThat(OperatorDriver.hasReadyTimers(gbk)).isFalse();

    // New elements start new panes whose timers are at the tick's time plus the delay, later than now.
    gbk.accept(WindowedValues.of(KV.of("k0", 9), new Instant(9), GlobalWindow.INSTANCE, PaneInfo.NO_FIRING));
    gbk.finishBundle();
    gbk.onProcessingTime(new Instant(1_012));
    assertThat(OperatorDriver.hasReadyTimers(gbk)).isFalse();
    gbk.onProcessingTime(new Instant(1_022));
    assertThat(OperatorDriver.hasReadyTimers(gbk)).isTrue();
    OperatorDriver.fire(gbk, 10);
    assertThat(out).hasSize(4);
    assertThat(OperatorDriver.hasReadyTimers(gbk)).isFalse();
  }

  @Test
  void aBundlesElementsOfOneKeyReachRunnersCoreAsOneWorkItemInArrivalOrder() {
    WindowingStrategy<?, ?> windowing = WindowingStrategy.of(FixedWindows.of(Duration.millis(10)))
        .withTimestampCombiner(TimestampCombiner.EARLIEST);
    open(windowing, JobClock.SYSTEM);
    IntervalWindow w = new IntervalWindow(new Instant(0), new Instant(10));
    gbk.accept(WindowedValues.of(KV.of("k", 1), new Instant(5), w, PaneInfo.NO_FIRING));
    gbk.accept(WindowedValues.of(KV.of("j", 5), new Instant(3), w, PaneInfo.NO_FIRING));
    gbk.accept(WindowedValues.of(KV.of("k", 2), new Instant(6), w, PaneInfo.NO_FIRING));
    assertThat(gbk.watermarkHold()).as("held at the earliest waiting element").isEqualTo(new Instant(3));
    gbk.finishBundle();
    assertThat(gbk.watermarkHold()).as("the holds runners-core set").isEqualTo(new Instant(3));

    OperatorDriver.deliver(gbk, BoundedWindow.TIMESTAMP_MAX_VALUE);
    while (OperatorDriver.hasReadyTimers(gbk)) {
      OperatorDriver.fire(gbk, 10);
    }
    gbk.finishBundle();
    assertThat(out).extracting(v -> (Object) v.getValue())
        .containsExactlyInAnyOrder(KV.of("k", List.of(1, 2)), KV.of("j", List.of(5)));
  }

  @Test
  void aTriggerThatCountsElementsSeesThemOneByOne() {
    WindowingStrategy<?, ?> windowing = WindowingStrategy.of(new GlobalWindows())
        .withTrigger(Repeatedly.forever(AfterPane.elementCountAtLeast(1)))
        .withMode(AccumulationMode.DISCARDING_FIRED_PANES);
    open(windowing, JobClock.SYSTEM);
    gbk.accept(WindowedValues.of(KV.of("k", 1), new Instant(5), GlobalWindow.INSTANCE, PaneInfo.NO_FIRING));
    gbk.accept(WindowedValues.of(KV.of("k", 2), new Instant(6), GlobalWindow.INSTANCE, PaneInfo.NO_FIRING));
    gbk.finishBundle();
    assertThat(out).extracting(v -> (Object) v.getValue())
        .containsExactly(KV.of("k", List.of(1)), KV.of("k", List.of(2)));
  }

  /**
   * In a job replaying a test stream each bundle is one event, as a bundle of Beam's Direct runner:
   * then a trigger that counts elements sees a bundle's elements of a key together (one pane for
   * both), as Direct's one work item per key and bundle, and the next bundle's element fires its own.
   */
  @Test
  void withEventBundlesATriggerThatCountsElementsSeesABundlesElementsOfAKeyTogether() {
    WindowingStrategy<?, ?> windowing = WindowingStrategy.of(new GlobalWindows())
        .withTrigger(Repeatedly.forever(AfterPane.elementCountAtLeast(1)))
        .withMode(AccumulationMode.DISCARDING_FIRED_PANES);
    gbk = grouping(windowing, tag, false);
    gbk.open(new OperatorContext(PipelineOptionsFactory.create(), "gbk", 0, Map.of(tag, out::add),
        dev.weir.runner.operators.StepRunner.CURRENT, state, JobClock.SYSTEM,
        new dev.weir.runner.operators.BundleFinalizers(), dev.weir.runner.operators.OperatorSnapshot.EMPTY, false,
        true));
    gbk.accept(WindowedValues.of(KV.of("k", 1), new Instant(5), GlobalWindow.INSTANCE, PaneInfo.NO_FIRING));
    gbk.accept(WindowedValues.of(KV.of("j", 5), new Instant(5), GlobalWindow.INSTANCE, PaneInfo.NO_FIRING));
    gbk.accept(WindowedValues.of(KV.of("k", 2), new Instant(6), GlobalWindow.INSTANCE, PaneInfo.NO_FIRING));
    assertThat(out).as("nothing fires before the bundle ends").isEmpty();
    gbk.finishBundle();
    gbk.accept(WindowedValues.of(KV.of("k", 3), new Instant(7), GlobalWindow.INSTANCE, PaneInfo.NO_FIRING));
    gbk.finishBundle();
    assertThat(out).extracting(v -> (Object) v.getValue())
        .containsExactly(KV.of("k", List.of(1, 2)), KV.of("j", List.of(5)), KV.of("k", List.of(3)));
  }

  @Test
  void countsElements_findsAfterPaneAnywhereInTheTrigger() {
    assertThat(GroupByKeyOperator.countsElements(org.apache.beam.sdk.transforms.windowing.DefaultTrigger.of())).isFalse();
    assertThat(GroupByKeyOperator.countsElements(
        Repeatedly.forever(AfterProcessingTime.pastFirstElementInPane()))).isFalse();
    assertThat(GroupByKeyOperator.countsElements(org.apache.beam.sdk.transforms.windowing.AfterWatermark
        .pastEndOfWindow().withEarlyFirings(AfterPane.elementCountAtLeast(20)))).isTrue();
  }

  @Test
  void aFullBatchIsProcessedWithoutWaitingForTheEndOfTheBundle() {
    WindowingStrategy<?, ?> windowing = WindowingStrategy.of(FixedWindows.of(Duration.millis(10_000)))
        .withTimestampCombiner(TimestampCombiner.END_OF_WINDOW);
    open(windowing, JobClock.SYSTEM);
    IntervalWindow w = new IntervalWindow(new Instant(0), new Instant(10_000));
    for (int i = 0; i < GroupByKeyOperator.MAX_BATCHED_ELEMENTS - 1; i++) {
      gbk.accept(WindowedValues.of(KV.of("k" + (i % 3), i), new Instant(i), w, PaneInfo.NO_FIRING));
    }
    assertThat(gbk.watermarkHold()).as("elements wait: held at the earliest").isEqualTo(new Instant(0));
    gbk.accept(WindowedValues.of(KV.of("k0", -1), new Instant(5_000), w, PaneInfo.NO_FIRING));
    assertThat(gbk.watermarkHold()).as("the full batch went to runners-core: its end-of-window hold")
        .isEqualTo(new Instant(9_999));
    gbk.finishBundle();
    assertThat(out).isEmpty();
  }

  @Test
  void elementsWaitingWhenATimerFiresAreInThePaneItEmits() {
    WindowingStrategy<?, ?> windowing = WindowingStrategy.of(new GlobalWindows())
        .withTrigger(Repeatedly.forever(AfterProcessingTime.pastFirstElementInPane().plusDelayOf(Duration.millis(10))))
        .withMode(AccumulationMode.DISCARDING_FIRED_PANES);
    ManualJobClock clock = new ManualJobClock(1_000);
    open(windowing, clock);
    gbk.accept(WindowedValues.of(KV.of("k", 1), new Instant(1), GlobalWindow.INSTANCE, PaneInfo.NO_FIRING));
    gbk.finishBundle(); // the pane's timer is at 1_010
    gbk.accept(WindowedValues.of(KV.of("k", 2), new Instant(2), GlobalWindow.INSTANCE, PaneInfo.NO_FIRING));

    gbk.onProcessingTime(new Instant(1_011)); // makes the pane's timer ready; the waiting element goes first
    OperatorDriver.fire(gbk, 10);
    gbk.finishBundle();
    assertThat(out).extracting(v -> (Object) v.getValue()).containsExactly(KV.of("k", List.of(1, 2)));
  }

  @Test
  void firesOnlyOnTime_onlyForNonMergingDefaultTriggeredWindowsWithoutLatenessOutputAtTheirEnd() {
    WindowingStrategy<?, ?> fixed = WindowingStrategy.of(FixedWindows.of(Duration.millis(10)));
    assertThat(GroupByKeyOperator.firesOnlyOnTime(fixed)).isTrue();
    assertThat(GroupByKeyOperator.firesOnlyOnTime(WindowingStrategy.globalDefault())).isTrue();
    assertThat(GroupByKeyOperator.firesOnlyOnTime(fixed.withAllowedLateness(Duration.millis(1)))).isFalse();
    assertThat(GroupByKeyOperator.firesOnlyOnTime(fixed.withTimestampCombiner(TimestampCombiner.EARLIEST))).isFalse();
    assertThat(GroupByKeyOperator.firesOnlyOnTime(fixed.withTrigger(AfterWatermark.pastEndOfWindow()
        .withEarlyFirings(AfterPane.elementCountAtLeast(1))))).isFalse();
    assertThat(GroupByKeyOperator.firesOnlyOnTime(WindowingStrategy.of(Sessions.withGapDuration(Duration.millis(5)))))
        .as("merging windows too").isTrue();
  }

  /**
   * A window's timer is set at its first end and moved lazily: an element that extends the session
   * leaves it, its firing sets it again at the window's end, and only then the pane goes. An element
   * arriving between two slices of a watermark's firings, while its session's end is behind the
   * watermark but its pane has not gone, joins that session (as it would on runners-core had its
   * timer not fired yet); a session bridging two fires once, with both buffers.
   */
  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  void mergingOnePanePath_anElementBetweenSlicesMergesIntoAReadyWindowNotFiredYet() {
    open(WindowingStrategy.of(Sessions.withGapDuration(Duration.millis(10))), JobClock.SYSTEM, true);
    WindowFn<Object, BoundedWindow> fn = (WindowFn<Object, BoundedWindow>) (WindowFn) Sessions.withGapDuration(
        Duration.millis(10));
    gbk.accept(element(fn, "k", 0, 1)); // [0, 10), timer at 9
    gbk.accept(element(fn, "k", 5, 2)); // [0, 15), timer still at 9
    gbk.accept(element(fn, "k", 30, 3)); // [30, 40), timer at 39
    gbk.finishBundle();

    OperatorDriver.deliver(gbk, new Instant(20)); // [0, 15) ends at 14: ready (timer at 9)
    OperatorDriver.fire(gbk, 1); // fires at 9: the session grew, so it is set again at 14
    assertThat(out).isEmpty();
    gbk.accept(element(fn, "k", 12, 4)); // [12, 22): joins [0, 15) -> [0, 22), not yet fired
    gbk.accept(element(fn, "k", 21, 5)); // [21, 31): bridges [0, 22) and [30, 40) -> [0, 40)
    gbk.finishBundle();
    while (OperatorDriver.hasReadyTimers(gbk)) {
      OperatorDriver.fire(gbk, 1);
    }
    assertThat(out).as("[0, 40) ends after the watermark").isEmpty();

    OperatorDriver.deliver(gbk, new Instant(40));
    while (OperatorDriver.hasReadyTimers(gbk)) {
      OperatorDriver.fire(gbk, 1);
    }
    gbk.finishBundle();
    assertThat(out).hasSize(1);
    assertThat(List.<Object>copyOf(out.get(0).getWindows())).containsExactly(new IntervalWindow(new Instant(0), new Instant(40)));
    assertThat(out.get(0).getTimestamp()).isEqualTo(new Instant(39));
    assertThat(out.get(0).getPaneInfo()).isEqualTo(PaneInfo.ON_TIME_AND_ONLY_FIRING);
    @SuppressWarnings("unchecked")
    KV<String, Iterable<Integer>> group = (KV<String, Iterable<Integer>>) out.get(0).getValue();
    assertThat(group.getValue()).containsExactlyInAnyOrder(1, 2, 3, 4, 5);
    assertThat(gbk.watermarkHold()).isEqualTo(BoundedWindow.TIMESTAMP_MAX_VALUE);
  }

  /**
   * Sessions an upstream GroupByKey merged already ({@code WindowingStrategy.isAlreadyMerged()})
   * are not merged again: overlapping windows of one key fire apart, as runners-core keeps them
   * (Beam's {@code GroupByKeyTest.testWindowFnPostMerging}).
   */
  @Test
  void alreadyMergedSessionsAreNotMergedAgain() {
    open(WindowingStrategy.of(Sessions.withGapDuration(Duration.millis(4))).withAlreadyMerged(true), JobClock.SYSTEM,
        true);
    IntervalWindow first = new IntervalWindow(new Instant(1), new Instant(8));
    IntervalWindow second = new IntervalWindow(new Instant(3), new Instant(7));
    gbk.accept(WindowedValues.of(KV.of("k", 5), new Instant(7), first, PaneInfo.NO_FIRING));
    gbk.accept(WindowedValues.of(KV.of("k", 3), new Instant(6), second, PaneInfo.NO_FIRING));
    gbk.finishBundle();
    fireAll(gbk, BoundedWindow.TIMESTAMP_MAX_VALUE);
    gbk.finishBundle();
    assertThat(out).extracting(v -> (Object) List.of(v.getValue(), v.getWindows().iterator().next()))
        .containsExactlyInAnyOrder(List.of(KV.of("k", List.of(3)), second), List.of(KV.of("k", List.of(5)), first));
  }

  /**
   * A WindowFn that merges overlapping windows only when their starts differ: [0, 10) and [5, 15)
   * become [0, 15) (its state kept under [0, 10)), then a new [0, 10) is not merged into it. The
   * two windows would share a buffer: the path refuses, naming both, instead of mixing them.
   */
  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  void mergingOnePanePath_refusesANewWindowThatIsAnotherWindowsStateAddress() {
    WindowFn<Object, IntervalWindow> fn = new MergesOnlyDifferentStarts();
    open(WindowingStrategy.of(fn), JobClock.SYSTEM, true);
    WindowFn<Object, BoundedWindow> assign = (WindowFn) fn;
    gbk.accept(element(assign, "k", 0, 1));
    gbk.accept(element(assign, "k", 5, 2));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> gbk.accept(element(assign, "k", 0, 3)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(MergesOnlyDifferentStarts.class.getName())
        .hasMessageContaining(new IntervalWindow(new Instant(0), new Instant(15)).toString())
        .hasMessageContaining("cannot keep both windows' elements apart");
  }

  /** [t, t + 10) per element; merges the first two overlapping windows whose starts differ. */
  private static final class MergesOnlyDifferentStarts extends WindowFn<Object, IntervalWindow> {
    @Override
    public java.util.Collection<IntervalWindow> assignWindows(AssignContext c) {
      return List.of(new IntervalWindow(c.timestamp(), Duration.millis(10)));
    }

    @Override
    public void mergeWindows(MergeContext c) throws Exception {
      List<IntervalWindow> windows = new ArrayList<>(c.windows());
      for (int i = 0; i < windows.size(); i++) {
        for (int j = i + 1; j < windows.size(); j++) {
          IntervalWindow a = windows.get(i);
          IntervalWindow b = windows.get(j);
          if (a.intersects(b) && !a.start().equals(b.start())) {
            c.merge(List.of(a, b), a.span(b));
            return;
          }
        }
      }
    }

    @Override
    public boolean isCompatible(WindowFn<?, ?> other) {
      return other instanceof MergesOnlyDifferentStarts;
    }

    @Override
    public org.apache.beam.sdk.coders.Coder<IntervalWindow> windowCoder() {
      return IntervalWindow.getCoder();
    }

    @Override
    public org.apache.beam.sdk.transforms.windowing.WindowMappingFn<IntervalWindow> getDefaultWindowMappingFn() {
      throw new UnsupportedOperationException("no side inputs");
    }
  }

  /**
   * The one-pane path of merging windows ({@link MergingOnePanePath}) against runners-core, on the
   * same seeded random input: elements of a few keys whose sessions grow, bridge two active
   * sessions into one or arrive late (dropped and counted); several watermark advances, then the
   * end of input. Same panes (values, timestamps, windows, pane info)
   * and late drops, for a GroupByKey and a Combine.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
  void mergingOnePanePath_emitsWhatRunnersCoreEmits(long seed) throws IOException {
    for (long gap : new long[] {5, 40}) {
      WindowingStrategy<?, ?> windowing = WindowingStrategy.of(Sessions.withGapDuration(Duration.millis(gap)));
      assertThat(GroupByKeyOperator.firesOnlyOnTime(windowing)).isTrue();
      for (boolean combining : new boolean[] {false, true}) {
        Run runnersCore = drive(windowing, combining, false, seed);
        Run onePane = drive(windowing, combining, true, seed);
        String as = "gap " + gap + ", combining " + combining;
        assertThat(runnersCore.panes).as(as).isNotEmpty();
        assertThat(runnersCore.droppedLate).as(as).isPositive();
        assertThat(onePane.panes).as(as).containsExactlyInAnyOrderElementsOf(runnersCore.panes);
        assertThat(onePane.panes).extracting(p -> p.pane).containsOnly(PaneInfo.ON_TIME_AND_ONLY_FIRING);
        assertThat(onePane.droppedLate).as(as).isEqualTo(runnersCore.droppedLate);
      }
    }
  }

  static Stream<WindowFn<?, ?>> nonMergingWindowFns() {
    return Stream.of(FixedWindows.of(Duration.millis(10)), SlidingWindows.of(Duration.millis(10)).every(Duration.millis(4)),
        new GlobalWindows());
  }

  /**
   * The one-pane path against runners-core, on the same input: elements of several keys and
   * windows, a watermark that fires some windows, elements then late for them (dropped and counted)
   * and on time for others, and the end of input. Same panes (values, timestamps, windows, pane
   * info), same late drops, for a GroupByKey and a Combine.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("nonMergingWindowFns")
  void onePanePath_emitsWhatRunnersCoreEmits(WindowFn<?, ?> windowFn) throws IOException {
    WindowingStrategy<?, ?> windowing = WindowingStrategy.of(windowFn);
    assertThat(GroupByKeyOperator.firesOnlyOnTime(windowing)).isTrue();
    for (boolean combining : new boolean[] {false, true}) {
      Run runnersCore = drive(windowing, combining, false);
      Run onePane = drive(windowing, combining, true);
      assertThat(onePane.panes).as("combining: " + combining).containsExactlyInAnyOrderElementsOf(runnersCore.panes);
      assertThat(onePane.panes).extracting(p -> p.pane).containsOnly(PaneInfo.ON_TIME_AND_ONLY_FIRING);
      assertThat(onePane.droppedLate).isEqualTo(runnersCore.droppedLate);
    }
  }

  /** What one {@link #drive} emitted: each pane as (key, sorted values or sum, timestamp, window, pane). */
  private record Pane(Object key, Object values, Instant timestamp, Object window, PaneInfo pane) {}

  private record Run(List<Pane> panes, long droppedLate) {}

  @SuppressWarnings({"unchecked", "rawtypes"})
  private Run drive(WindowingStrategy<?, ?> windowing, boolean combining, boolean onTimePath) throws IOException {
    return drive(windowing, combining, onTimePath, 0);
  }

  /**
   * Drives a GroupByKey (or Combine of sums) as the translator or runners-core would build it: with
   * {@code seed} 0 the fixed input of {@link #onePanePath_emitsWhatRunnersCoreEmits}, else a random
   * input from {@code seed} (see {@link #mergingOnePanePath_emitsWhatRunnersCoreEmits}).
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private Run drive(WindowingStrategy<?, ?> windowing, boolean combining, boolean onTimePath, long seed)
      throws IOException {
    List<WindowedValue<?>> emitted = new ArrayList<>();
    TupleTag outTag = new TupleTag<>();
    GroupByKeyOperator op;
    if (combining) {
      op = onTimePath
          ? GroupByKeyOperator.combining(StringUtf8Coder.of(), VarIntCoder.of(), Sum.ofIntegers().getAccumulatorCoder(
              null, VarIntCoder.of()), (Sum.ofIntegers()), windowing, outTag)
          : new GroupByKeyOperator(StringUtf8Coder.of(), VarIntCoder.of(), windowing, outTag, SystemReduceFn.combining(
              StringUtf8Coder.of(), org.apache.beam.sdk.util.AppliedCombineFn.withAccumulatorCoder(Sum.ofIntegers(),
                  Sum.ofIntegers().getAccumulatorCoder(null, VarIntCoder.of()))), null);
    } else {
      op = grouping(windowing, outTag, onTimePath);
    }
    assertThat(op.onTimeOnly()).isEqualTo(onTimePath);
    MetricsContainerImpl metrics = new MetricsContainerImpl("gbk");
    try (ContainerState own = ContainerState.inMemory(1000);
        Closeable scope = MetricsEnvironment.scopedMetricsContainer(metrics)) {
      op.open(new OperatorContext(PipelineOptionsFactory.create(), "gbk", 0, Map.of(outTag, emitted::add), own,
          JobClock.SYSTEM));
      WindowFn<Object, BoundedWindow> fn = (WindowFn<Object, BoundedWindow>) windowing.getWindowFn();
      if (seed != 0) {
        driveRandomly(op, fn, new java.util.Random(seed));
      }
      for (int t = 0; seed == 0 && t < 30; t += 3) {
        op.accept(element(fn, "k" + (t % 2), t, t));
        op.accept(element(fn, "hot", t + 1, 100 + t));
      }
      op.finishBundle();
      fireAll(op, new Instant(seed == 0 ? 15 : 1_000_000));
      for (int t = 1; seed == 0 && t < 40; t += 7) { // before 15: late unless a window of the element is still open
        op.accept(element(fn, "k" + (t % 3), t, 1000 + t));
      }
      op.finishBundle();
      fireAll(op, BoundedWindow.TIMESTAMP_MAX_VALUE);
      op.finishBundle();
    }
    List<Pane> panes = new ArrayList<>();
    for (WindowedValue<?> v : emitted) {
      KV<String, Object> kv = (KV<String, Object>) v.getValue();
      Object values = kv.getValue();
      if (values instanceof Iterable<?> it) {
        List<Integer> sorted = new ArrayList<>();
        it.forEach(x -> sorted.add((Integer) x));
        sorted.sort(Comparator.naturalOrder());
        values = sorted;
      }
      assertThat(v.getWindows()).hasSize(1);
      panes.add(new Pane(kv.getKey(), values, v.getTimestamp(), v.getWindows().iterator().next(), v.getPaneInfo()));
    }
    long dropped = metrics.getCounter(MetricName.named(LateDataDroppingDoFnRunner.class,
        LateDataDroppingDoFnRunner.DROPPED_DUE_TO_LATENESS)).getCumulative();
    return new Run(panes, dropped);
  }

  /**
   * 400 elements of keys k0..k3 at times around a moving watermark (some behind it: late for their
   * windows), in bundles of a few elements; after some bundles the watermark advances and the ready
   * timers fire in slices. (Which windows fire in the first slices differs between the paths, so no
   * element arrives between slices here: see
   * {@link #mergingOnePanePath_anElementBetweenSlicesMergesIntoAReadyWindowNotFiredYet}.)
   */
  private static void driveRandomly(GroupByKeyOperator<?, ?, ?> op, WindowFn<Object, BoundedWindow> fn,
      java.util.Random random) {
    long watermark = 0;
    for (int i = 0; i < 400; i++) {
      long t = watermark - 60 + random.nextInt(160);
      op.accept(element(fn, "k" + random.nextInt(4), Math.max(0, t), i));
      if (random.nextInt(5) == 0) {
        op.finishBundle();
      }
      if (random.nextInt(25) == 0) {
        op.finishBundle();
        watermark += random.nextInt(60);
        OperatorDriver.deliver(op, new Instant(watermark));
        while (OperatorDriver.hasReadyTimers(op)) {
          OperatorDriver.fire(op, 3);
        }
        op.finishBundle();
      }
    }
  }

  /** An element of {@code key} at {@code timestamp} in the windows {@code fn} assigns. */
  private static WindowedValue<KV<String, Integer>> element(WindowFn<Object, BoundedWindow> fn, String key,
      long timestamp, int value) {
    Instant at = new Instant(timestamp);
    try {
      List<BoundedWindow> windows = new ArrayList<>(fn.assignWindows(fn.new AssignContext() {
        @Override
        public Object element() {
          return value;
        }

        @Override
        public Instant timestamp() {
          return at;
        }

        @Override
        public BoundedWindow window() {
          return GlobalWindow.INSTANCE;
        }
      }));
      return WindowedValues.of(KV.of(key, value), at, windows, PaneInfo.NO_FIRING);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static void fireAll(GroupByKeyOperator<?, ?, ?> op, Instant watermark) {
    OperatorDriver.deliver(op, watermark);
    while (OperatorDriver.hasReadyTimers(op)) {
      OperatorDriver.fire(op, 5);
    }
  }
}
