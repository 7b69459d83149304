package dev.weir.runner.operators.keyed;

import dev.weir.runner.state.CachedStateInternals;
import dev.weir.runner.compat.BeamTimers;
import dev.weir.runner.compat.TimerForwardingRunner;
import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.runners.core.LateDataUtils;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.runners.core.StateTags;
import org.apache.beam.runners.core.StatefulDoFnRunner;
import org.apache.beam.runners.core.StepContext;
import org.apache.beam.runners.core.TimerInternals;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.InstantCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.state.OrderedListState;
import org.apache.beam.sdk.state.State;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * {@code @RequiresTimeSortedInput} for a stateful ParDo: sits between runners-core's
 * {@link StatefulDoFnRunner} (which drops elements of expired windows, sets the window cleanup
 * timers and calls {@link #onWindowExpiration} before clearing a window's state) and the simple
 * runner of the user's DoFn, and hands the DoFn each key's elements of a window in timestamp
 * order.
 *
 * <p>Shape: per (key, window), elements wait in a system {@link OrderedListState} of
 * {@link CachedStateInternals} (cells store-sorted by timestamp, ties in arrival order; value and
 * pane only, the key is the state's), plus a value cell with the earliest waiting timestamp. One
 * event-time flush timer per (key, window) sits at that earliest timestamp plus the allowed
 * lateness (capped at the window's garbage-collection time), with its output timestamp at the
 * earliest timestamp, so the operator's output watermark waits for the elements still to come out.
 * When it fires, every waiting element at or before the input watermark goes to the DoFn, streamed
 * page by page out of the store (never the whole buffer in memory), and the timer moves to the
 * earliest element left. At window expiry everything left is flushed first.
 *
 * <p>Lateness, as in Beam's model for sorted input: an element whose timestamp plus the allowed
 * lateness is before the input watermark is dropped (counted in runners-core's
 * {@code droppedDueToLateness} counter). Elements within the allowed lateness that arrive after
 * later elements were flushed are delivered when the next flush passes them, so sorting is only
 * guaranteed for data that is not late.
 *
 * <p>Threading: confined to the operator's task thread, like the runners it wraps.
 */
final class TimeSortedInputRunner<K, V, OutT> extends TimerForwardingRunner<KV<K, V>, OutT> {
  /** Id of the flush timer (namespace: the window). */
  static final String FLUSH_TIMER = "__weirTimeSortedFlush";

  private final DoFnRunner<KV<K, V>, OutT> inner;
  private final StepContext step;
  private final Coder<BoundedWindow> windowCoder;
  private final WindowingStrategy<?, ?> windowing;
  private final Duration allowedLateness;
  private final StateTag<OrderedListState<KV<V, PaneInfo>>> bufferTag;
  private final StateTag<ValueState<Instant>> earliestTag;
  private final Counter dropped =
      Metrics.counter(StatefulDoFnRunner.class, StatefulDoFnRunner.DROPPED_DUE_TO_LATENESS_COUNTER);

  /**
   * @param inner the runner of the user's DoFn (runners-core's simple runner)
   * @param inputCoder the ParDo's input coder; its value coder encodes buffered values
   * @param step the operator's step context, whose state and timers follow the current key
   */
  @SuppressWarnings("unchecked")
  TimeSortedInputRunner(DoFnRunner<KV<K, V>, OutT> inner, KvCoder<K, V> inputCoder, StepContext step,
      WindowingStrategy<?, ?> windowing) {
    this.inner = inner;
    this.step = step;
    this.windowing = windowing;
    this.windowCoder = (Coder<BoundedWindow>) windowing.getWindowFn().windowCoder();
    this.allowedLateness = windowing.getAllowedLateness();
    this.bufferTag = StateTags.makeSystemTagInternal(StateTags.orderedList("__weirTimeSortedBuffer",
        KvCoder.of(inputCoder.getValueCoder(), PaneInfo.PaneInfoCoder.INSTANCE)));
    this.earliestTag = StateTags.makeSystemTagInternal(StateTags.value("__weirTimeSortedEarliest", InstantCoder.of()));
  }

  @Override
  public DoFn<KV<K, V>, OutT> getFn() {
    return inner.getFn();
  }

  @Override
  public void startBundle() {
    inner.startBundle();
  }

  /** Buffers one element (runners-core's stateful runner passes them one window at a time). */
  @Override
  public void processElement(WindowedValue<KV<K, V>> element) {
    TimerInternals timers = step.timerInternals();
    Instant timestamp = element.getTimestamp();
    if (timestamp.plus(allowedLateness).isBefore(timers.currentInputWatermarkTime())) {
      dropped.inc();
      return;
    }
    for (BoundedWindow window : element.getWindows()) {
      StateNamespace namespace = StateNamespaces.window(windowCoder, window);
      buffer(namespace).add(TimestampedValue.of(KV.of(element.getValue().getValue(), element.getPaneInfo()), timestamp));
      ValueState<Instant> earliest = step.stateInternals().state(namespace, earliestTag);
      Instant current = earliest.read();
      if (current == null || timestamp.isBefore(current)) {
        earliest.write(timestamp);
        setFlushTimer(timers, namespace, window, timestamp);
      }
    }
  }

  @Override
  protected <KeyT> void fireTimer(String timerId, String timerFamilyId, KeyT key, BoundedWindow window,
      Instant timestamp, Instant outputTimestamp, TimeDomain timeDomain, boolean causedByDrain) {
    if (FLUSH_TIMER.equals(timerId) && timeDomain == TimeDomain.EVENT_TIME) {
      flush(window, step.timerInternals().currentInputWatermarkTime());
    } else {
      BeamTimers.fire(inner, timerId, timerFamilyId, key, window, timestamp, outputTimestamp, timeDomain, causedByDrain);
    }
  }

  @Override
  public <KeyT> void onWindowExpiration(BoundedWindow window, Instant timestamp, KeyT key) {
    flush(window, BoundedWindow.TIMESTAMP_MAX_VALUE);
    inner.onWindowExpiration(window, timestamp, key);
  }

  @Override
  public void finishBundle() {
    inner.finishBundle();
  }

  /** Hands the DoFn every waiting element of the current key in {@code window} up to {@code upTo}. */
  @SuppressWarnings("unchecked")
  private void flush(BoundedWindow window, Instant upTo) {
    StateNamespace namespace = StateNamespaces.window(windowCoder, window);
    K key = (K) step.stateInternals().getKey();
    Instant left = buffer(namespace).drainBefore(upTo.plus(1), waiting -> inner.processElement(
        WindowedValues.of(KV.of(key, waiting.getValue().getKey()), waiting.getTimestamp(), window,
            waiting.getValue().getValue())));
    ValueState<Instant> earliest = step.stateInternals().state(namespace, earliestTag);
    TimerInternals timers = step.timerInternals();
    if (left == null) {
      earliest.clear();
      timers.deleteTimer(namespace, FLUSH_TIMER, "", TimeDomain.EVENT_TIME);
    } else {
      earliest.write(left);
      setFlushTimer(timers, namespace, window, left);
    }
  }

  private void setFlushTimer(TimerInternals timers, StateNamespace namespace, BoundedWindow window, Instant earliest) {
    Instant at = earliest.plus(allowedLateness);
    Instant gc = LateDataUtils.garbageCollectionTime(window, windowing);
    if (at.isAfter(gc)) {
      at = gc;
    }
    timers.setTimer(namespace, FLUSH_TIMER, "", at, earliest, TimeDomain.EVENT_TIME);
  }

  private CachedStateInternals.DrainableOrderedList<KV<V, PaneInfo>> buffer(StateNamespace namespace) {
    State state = step.stateInternals().state(namespace, bufferTag);
    if (!(state instanceof CachedStateInternals.DrainableOrderedList<?>)) {
      throw new IllegalStateException("@RequiresTimeSortedInput needs the operator's state to be "
          + "CachedStateInternals, got " + state.getClass().getName());
    }
    @SuppressWarnings("unchecked")
    CachedStateInternals.DrainableOrderedList<KV<V, PaneInfo>> list =
        (CachedStateInternals.DrainableOrderedList<KV<V, PaneInfo>>) state;
    return list;
  }
}
