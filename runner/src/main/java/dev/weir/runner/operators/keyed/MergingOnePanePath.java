package dev.weir.runner.operators.keyed;

import dev.weir.runner.operators.Receiver;
import dev.weir.runner.state.KeyContext;
import dev.weir.runner.timers.KeyedTimers;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.runners.core.StateTags;
import org.apache.beam.runners.core.TimerInternals;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.CombiningState;
import org.apache.beam.sdk.state.GroupingState;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.WindowFn;
import org.apache.beam.sdk.util.UserCodeException;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.joda.time.Instant;

/**
 * The one-pane path of a GroupByKey over windows that need merging (a merging WindowFn such as
 * sessions or Nexmark's auction-or-bid windows, not already merged by an upstream GroupByKey:
 * {@code WindowingStrategy.needsMerge()}, as runners-core decides): with the default trigger, no allowed lateness and output at the end of the window
 * ({@link GroupByKeyOperator#firesOnlyOnTime}), each merged window of a key gets exactly one pane,
 * {@code ON_TIME}, first and last, at its end, once the input watermark passed it, as runners-core's
 * {@code ReduceFnRunner} emits it. This class keeps only what that pane needs, instead of
 * runners-core's window set, holds, trigger bits, pane counters and two timers per window.
 *
 * <p><b>State per key.</b> The key's active windows, each with its <em>state address</em>: the
 * window under whose namespace its buffer lives ({@value #WINDOWS_ID}, in the global namespace, a
 * flat list {@code [window0, address0, window1, address1, ...]}). A window made by merging keeps the
 * address of the first of its parts that was active, so a session that an element extends keeps its
 * buffer where it is, and only the buffers of other active parts move into it (a bag's elements are
 * appended, a Combine's accumulators merged): runners-core's {@code MergingActiveWindowSet} keeps
 * state addresses for the same reason. The buffer is the one runners-core's {@code SystemReduceFn}
 * keeps ({@link GroupByKeyOperator#BUFFER_ID}).
 *
 * <p><b>An element</b>: its windows the input watermark passed are dropped (and counted, as
 * runners-core's late-data filter does with no allowed lateness); the rest join the key's active
 * windows and the WindowFn merges them all ({@link WindowFn#mergeWindows}); the element is added
 * once to the buffer of each distinct window its windows ended in (runners-core's
 * {@code toMergedWindows} is a set too). A window that becomes active sets its end-of-window timer.
 *
 * <p><b>Timers are lazy.</b> A window's timer is keyed by its address and is never later than the
 * window's end; a merge that moves the end later leaves it where it is (no timer write per
 * element, where runners-core deletes and sets two per element of a growing session). When it
 * fires before the window's end, it is set again at the end, within the same watermark advance if
 * the watermark passed that too; at the end, the pane is emitted (the buffer, at the window's
 * {@code maxTimestamp}) and the window's state cleared. A merge whose result ends before the kept
 * part (a WindowFn may do that) sets the timer at the new end. Merged-away parts' timers are deleted.
 * No watermark hold is needed: until a ready timer fired the task's output watermark stays at it,
 * and a pane's timestamp is its window's end, which no pending timer's is after.
 *
 * <p>Addresses are windows, so a new window equal to another active window's address (possible only
 * if a WindowFn does not merge a window with one containing it) would share its buffer; that fails
 * with an {@link IllegalStateException} naming both windows instead of mixing their elements
 * (runners-core's window set would mix them silently).
 *
 * <p>Threading: the owning operator's, the task's container thread. The operator makes the key
 * current ({@code setCurrent}) before every call, so timers set here are the key's.
 *
 * @param <K> key type
 * @param <V> value type
 * @param <OutT> the pane's value type (an iterable of values, or a Combine's output)
 */
final class MergingOnePanePath<K, V, OutT> {
  /** The state id of a key's active windows and their state addresses (global namespace). */
  static final String WINDOWS_ID = "windows";
  /** The id of a window's end-of-window timer (under its address's namespace). */
  private static final String TIMER_ID = "";

  private final WindowFn<Object, BoundedWindow> windowFn;
  private final Coder<BoundedWindow> windowCoder;
  private final StateTag<ValueState<List<BoundedWindow>>> windowsTag;
  private final StateTag<? extends GroupingState<V, OutT>> bufferTag;
  private final KeyedTimers timers;
  private final Receiver output;
  private final Counter droppedDueToLateness;

  // Scratch of one accept call; empty between calls.
  /** The windows handed to the WindowFn: the active ones, then the element's new ones. */
  private final List<BoundedWindow> candidates = new ArrayList<>();
  /** The merges the WindowFn asked for: parts (a list) then result, alternating. */
  private final List<Object> merges = new ArrayList<>();
  /** The windows the element's windows ended in, each once. */
  private final List<BoundedWindow> targets = new ArrayList<>();
  private final WindowFn<Object, BoundedWindow>.MergeContext mergeContext;

  /**
   * @param windowFn the GroupByKey's merging WindowFn
   * @param bufferTag the per-window buffer (bag or combining value, as {@code SystemReduceFn}'s)
   * @param timers the operator's timers (event-time timers fire through {@link #fire})
   * @param output where panes go
   * @param droppedDueToLateness counts each dropped (element, window) pair
   */
  @SuppressWarnings("unchecked")
  MergingOnePanePath(WindowFn<?, ?> windowFn, StateTag<? extends GroupingState<V, OutT>> bufferTag,
      KeyedTimers timers, Receiver output, Counter droppedDueToLateness) {
    this.windowFn = (WindowFn<Object, BoundedWindow>) windowFn;
    this.windowCoder = (Coder<BoundedWindow>) windowFn.windowCoder();
    this.windowsTag = StateTags.makeSystemTagInternal(StateTags.value(WINDOWS_ID, ListCoder.of(windowCoder)));
    this.bufferTag = bufferTag;
    this.timers = timers;
    this.output = output;
    this.droppedDueToLateness = droppedDueToLateness;
    this.mergeContext = this.windowFn.new MergeContext() {
      @Override
      public Collection<BoundedWindow> windows() {
        return candidates;
      }

      @Override
      public void merge(Collection<BoundedWindow> toBeMerged, BoundedWindow mergeResult) {
        merges.add(new ArrayList<>(toBeMerged));
        merges.add(mergeResult);
      }
    };
  }

  /**
   * Adds {@code value} to the current key's windows as the class comment describes.
   *
   * @throws UserCodeException if the WindowFn's {@code mergeWindows} threw
   * @throws IllegalStateException if a new window is another active window's state address
   */
  @SuppressWarnings("unchecked")
  void accept(KeyContext<K> key, WindowedValue<V> value) {
    long inputWatermarkMs = timers.currentInputWatermarkTime().getMillis();
    ValueState<List<BoundedWindow>> windowsCell = key.state().state(StateNamespaces.global(), windowsTag);
    List<BoundedWindow> stored = windowsCell.read();
    List<BoundedWindow> active = stored == null ? new ArrayList<>(4) : new ArrayList<>(stored);
    try {
      for (int i = 0; i < active.size(); i += 2) {
        candidates.add(active.get(i));
      }
      boolean onTime = false;
      for (BoundedWindow window : value.getWindows()) {
        if (window.maxTimestamp().getMillis() < inputWatermarkMs) {
          droppedDueToLateness.inc();
        } else {
          onTime = true;
          if (!candidates.contains(window)) {
            candidates.add(window);
          }
        }
      }
      if (!onTime) {
        return;
      }
      try {
        windowFn.mergeWindows(mergeContext);
      } catch (Exception e) {
        throw UserCodeException.wrap(e);
      }
      for (int m = 0; m < merges.size(); m += 2) {
        applyMerge(key, active, (List<BoundedWindow>) merges.get(m), (BoundedWindow) merges.get(m + 1));
      }
      for (BoundedWindow window : value.getWindows()) {
        if (window.maxTimestamp().getMillis() < inputWatermarkMs) {
          continue;
        }
        BoundedWindow target = mergedInto(window);
        if (!targets.contains(target)) {
          targets.add(target);
        }
      }
      for (BoundedWindow target : targets) {
        int at = indexOf(active, target, 0);
        BoundedWindow address;
        if (at >= 0) {
          address = active.get(at + 1);
        } else {
          int taken = indexOf(active, target, 1);
          if (taken >= 0) {
            throw new IllegalStateException("WindowFn " + windowFn.getClass().getName() + " made window " + target
                + " active while window " + active.get(taken - 1) + ", which it did not merge with it, keeps its "
                + "state under " + target + "; Weir cannot keep both windows' elements apart");
          }
          address = target;
          active.add(target);
          active.add(target);
          Instant end = target.maxTimestamp();
          timers.setTimer(namespace(target), TIMER_ID, "", end, end, TimeDomain.EVENT_TIME);
        }
        key.state().state(namespace(address), bufferTag).add(value.getValue());
      }
      if (active.isEmpty()) {
        windowsCell.clear();
      } else if (!active.equals(stored)) {
        windowsCell.write(active);
      }
    } finally {
      candidates.clear();
      merges.clear();
      targets.clear();
    }
  }

  /**
   * Applies one merge to {@code active}: the first active part keeps its entry (its window becomes
   * {@code result}) and address; the other active parts' buffers move into it and their entries
   * and timers go. Parts that were not active (the element's new windows) have no state.
   */
  private void applyMerge(KeyContext<K> key, List<BoundedWindow> active, List<BoundedWindow> parts,
      BoundedWindow result) {
    int kept = -1;
    for (BoundedWindow part : parts) {
      int at = indexOf(active, part, 0);
      if (at < 0) {
        continue;
      }
      if (kept < 0) {
        kept = at;
        continue;
      }
      BoundedWindow from = active.get(at + 1);
      moveBuffer(key, from, active.get(kept + 1));
      timers.deleteTimer(namespace(from), TIMER_ID, "", TimeDomain.EVENT_TIME);
      active.remove(at + 1);
      active.remove(at);
      if (at < kept) {
        kept -= 2;
      }
    }
    if (kept < 0) {
      return; // only new windows: the result becomes active when the element is added to it
    }
    Instant keptEnd = active.get(kept).maxTimestamp();
    active.set(kept, result);
    Instant end = result.maxTimestamp();
    if (end.isBefore(keptEnd)) { // the lazy timer may be later than the result's end: set it there
      timers.setTimer(namespace(active.get(kept + 1)), TIMER_ID, "", end, end, TimeDomain.EVENT_TIME);
    }
  }

  /** The window {@code window} was merged into by this call's merges, or itself. */
  @SuppressWarnings("unchecked")
  private BoundedWindow mergedInto(BoundedWindow window) {
    for (int m = 0; m < merges.size(); m += 2) {
      if (((List<BoundedWindow>) merges.get(m)).contains(window)) {
        return (BoundedWindow) merges.get(m + 1);
      }
    }
    return window;
  }

  /** Moves the buffer at address {@code from} into the one at {@code into} and clears it. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private void moveBuffer(KeyContext<K> key, BoundedWindow from, BoundedWindow into) {
    GroupingState<V, OutT> source = key.state().state(namespace(from), bufferTag);
    GroupingState<V, OutT> target = key.state().state(namespace(into), bufferTag);
    if (source instanceof CombiningState combining) {
      ((CombiningState) target).addAccum(combining.getAccum());
    } else {
      for (V v : ((BagState<V>) source).read()) {
        target.add(v);
      }
    }
    source.clear();
  }

  /**
   * Fires the current key's end-of-window timer {@code timer}: sets it again at its window's end
   * if the window grew past it, else emits the window's one pane and clears its state. A timer
   * whose window is no longer active (merged away since) does nothing.
   */
  @SuppressWarnings("unchecked")
  void fire(KeyContext<K> key, TimerInternals.TimerData timer) {
    BoundedWindow address = ((StateNamespaces.WindowNamespace<BoundedWindow>) timer.getNamespace()).getWindow();
    ValueState<List<BoundedWindow>> windowsCell = key.state().state(StateNamespaces.global(), windowsTag);
    List<BoundedWindow> stored = windowsCell.read();
    int at = stored == null ? -1 : indexOf(stored, address, 1);
    if (at < 0) {
      return;
    }
    BoundedWindow window = stored.get(at - 1);
    Instant end = window.maxTimestamp();
    StateNamespace namespace = timer.getNamespace();
    if (end.isAfter(timer.getTimestamp())) {
      timers.setTimer(namespace, TIMER_ID, "", end, end, TimeDomain.EVENT_TIME);
      return;
    }
    GroupingState<V, OutT> buffer = key.state().state(namespace, bufferTag);
    if (!buffer.isEmpty().read()) {
      output.accept(WindowedValues.of(KV.of(key.key(), buffer.read()), end, window, PaneInfo.ON_TIME_AND_ONLY_FIRING));
    }
    buffer.clear();
    if (stored.size() == 2) {
      windowsCell.clear();
    } else {
      List<BoundedWindow> left = new ArrayList<>(stored);
      left.remove(at);
      left.remove(at - 1);
      windowsCell.write(left);
    }
  }

  private StateNamespace namespace(BoundedWindow window) {
    return StateNamespaces.window(windowCoder, window);
  }

  /** The index of {@code window} among the windows (offset 0) or the addresses (offset 1) of {@code active}, or -1. */
  private static int indexOf(List<BoundedWindow> active, BoundedWindow window, int offset) {
    for (int i = offset; i < active.size(); i += 2) {
      if (active.get(i).equals(window)) {
        return i;
      }
    }
    return -1;
  }
}
