package dev.weir.runner.operators.keyed;

import dev.weir.runner.compat.TimerForwardingRunner;
import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.OperatorSnapshot;
import dev.weir.runner.operators.Receiver;
import dev.weir.runner.state.KeyContext;
import dev.weir.runner.timers.KeyedTimers;
import java.util.Collections;
import java.util.List;
import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.runners.core.GroupAlsoByWindowViaWindowSetNewDoFn;
import org.apache.beam.runners.core.KeyedWorkItem;
import org.apache.beam.runners.core.KeyedWorkItems;
import org.apache.beam.runners.core.LateDataDroppingDoFnRunner;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.runners.core.StateTags;
import org.apache.beam.runners.core.SystemReduceFn;
import org.apache.beam.runners.core.TimerInternals;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.state.GroupingState;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.TimestampCombiner;
import org.apache.beam.sdk.transforms.windowing.Trigger;
import org.apache.beam.sdk.util.AppliedCombineFn;
import org.apache.beam.sdk.util.UserCodeException;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.joda.time.Instant;

/**
 * GroupByKey with Beam's full windowing model, through runners-core: a bundle's elements are
 * grouped by key ({@link KeyedBatch}) and each key's become one {@link KeyedWorkItem}, which
 * runners-core's late-data-dropping runner filters and the key's {@code ReduceFnRunner} runs
 * (every WindowFn including merging ones, triggers, allowed lateness, accumulation modes, panes),
 * as runners-core's {@link GroupAlsoByWindowViaWindowSetNewDoFn} does, except that the runner is
 * kept for the key's next work items instead of built per work item ({@link ReduceFnRunners}). With
 * {@link #grouping} values are buffered (a GroupByKey); with a combining reduce function it is the
 * merging half of a lifted Combine.perKey over accumulators ({@link dev.weir.runner.operators.PartialCombineOperator}), or a
 * Combine.perKey that could not be lifted, adding raw inputs to one accumulator per key and window.
 *
 * <p>Keys, state and bundles as in {@link KeyedOperator}: a {@link dev.weir.runner.state.CachedStateInternals} per key
 * over the container's object-cached store ({@code --stateBackend}); a bundle that touched state
 * asks the container for a commit when it finishes.
 *
 * <p>Watermark holds: every {@code WatermarkHoldState} change is mirrored in this operator's
 * {@link dev.weir.runner.state.WatermarkHolds}; {@link #watermarkHold()} is their minimum, so the task never sends a
 * watermark past an element ReduceFnRunner still holds. The output watermark runners-core sees is
 * the input watermark lowered by those holds.
 *
 * <p>Timers: {@link KeyedTimers}; event-time timers (in the store, see {@link KeyedTimers}) fire
 * when the task's input watermark passes them, while ReduceFnRunner still sees the output
 * watermark of before the advance (so the end-of-window pane is on time, as on Direct);
 * processing-time timers from the job's clock ({@code OperatorContext.clock()}). At the end of input (watermark at
 * +infinity) every event-time timer fires and pending processing-time timers are dropped.
 *
 * <p>Incremental firing ({@link KeyedOperator}): a watermark only makes event-time timers ready
 * ({@link #advanceWatermark}), and a processing-time tick processing-time ones
 * ({@link #onProcessingTime}); the task fires them a bounded slice at a time, so the end of input,
 * or a processing-time trigger, over a million keys does not put a million panes in the outbox at
 * once. Until the last ready event-time timer fired, {@link #watermarkHold()} is at most the
 * earliest unfired one and runners-core's output watermark stays where it was: timers fire before
 * the output watermark passes them. A processing-time timer is ready when the tick's time is
 * strictly after it; the slices of one tick all see that time as runners-core's
 * {@code currentProcessingTime()}, so a timer set while firing waits for a later tick.
 *
 * <p>Batching per key: elements wait in the batch until the bundle ends, a timer is about to fire,
 * the input watermark runners-core sees is about to move, or {@value #MAX_BATCHED_ELEMENTS} wait;
 * so runners-core sees the same watermarks and per-key order of elements and timers as element by
 * element; elements that waited over a processing-time tick see that tick's time, as if they had
 * arrived after it (a tick comes every few ms, a bundle lasts up to {@code --maxBundleTimeMs}).
 * Meanwhile {@link #watermarkHold()} is at most the earliest waiting element's timestamp, which no
 * hold runners-core sets for it can be before. A snapshot is only taken between bundles, when the
 * batch is empty.
 *
 * <p>A trigger that counts elements ({@code AfterPane} anywhere in the trigger) sees where bundles
 * end: runners-core's {@code ReduceFnRunner.processElements} hands the trigger all of a work item's
 * elements before it asks whether to fire, so a key's elements batched together fire one pane where
 * element by element fires one each. Beam's Direct runner makes one work item per key and bundle,
 * so the panes follow its bundles. Whether Weir batches then depends on its bundles:
 * <ul>
 *   <li>The job replays a {@code TestStream} ({@link OperatorContext#eventBundles()}): each bundle
 *       holds what one event brought in, e.g. one {@code addElements} group, as Direct's bundles do,
 *       so the elements are batched as above and the trigger sees a group's elements of a key
 *       together (groups {1, 2}, {3}, {4} under {@code elementCountAtLeast(1)}: panes 3, 6, 10, as on
 *       Direct, not 1, 3, 6, 10). A group of more than {@value #MAX_BATCHED_ELEMENTS} elements in
 *       one task still reaches runners-core in parts, as one of more than {@code --maxBundleSize}
 *       spans bundles.
 *   <li>Otherwise Weir's bundles (up to {@code --maxBundleSize} elements, whatever the shuffle
 *       delivered meanwhile) are much larger than Direct's, and batching fired fewer panes than
 *       Direct (Nexmark Q6 at 200,000 events: 6,779 results instead of Direct's 8,585), so each
 *       element goes to runners-core at once, as its own work item.
 * </ul>
 *
 * <p>One on-time pane ({@link #firesOnlyOnTime}): with the default trigger, no allowed lateness
 * and output at the end of the window (Beam's default windowing, Nexmark's fixed, sliding and
 * auction-or-bid windows, sessions by default), every key and window gets exactly one pane, {@code ON_TIME}, first
 * and last, at the window's end, once the input watermark passes it; elements of windows the
 * watermark already passed are dropped (counted as runners-core's {@code droppedDueToLateness}).
 * Then nothing runners-core keeps per key and window changes the result: no trigger state, pane
 * counter, watermark hold or window set. So the operator keeps only what the result needs: each
 * element goes at once (no batch) into its window's buffer, the same state runners-core's
 * {@link SystemReduceFn} keeps ({@value #BUFFER_ID}: a bag, or the accumulator of a Combine), the
 * first of a window sets its end-of-window timer, and the timer emits the buffer and clears it.
 * ReduceFnRunner wrote a hold, read the trigger's finished bits and set the end-of-window and
 * garbage-collection timers for every element, and read and cleared its pane bookkeeping for every
 * pane; in profiles at 1,000,000 events its calls were 29% of Nexmark Q8's CPU samples and 45% of
 * Q5's, and this path made Q5 28% and Q8 13% faster (runner/BENCHMARKS.md, issue 14, session 13).
 * No hold is needed: the output timestamp is the timer's, and until a ready timer fired the output
 * watermark stays at it ({@link #watermarkHold()}). Windows that need merging (a merging WindowFn
 * whose windows no upstream GroupByKey merged already: {@link WindowingStrategy#needsMerge()}, as
 * runners-core decides) also need each key's active windows: {@link MergingOnePanePath} keeps
 * them, merges buffers and fires the merged windows; already merged windows are kept apart, as
 * non-merging ones. Every other windowing goes through runners-core; {@code GroupByKeyOperatorTest} pins
 * that both paths emit the same panes.
 *
 * <p>Threading: confined to the task's container thread.
 */
@Internal
public final class GroupByKeyOperator<K, V, OutT> extends KeyedOperator<K> {
  private final WindowingStrategy<?, BoundedWindow> windowingStrategy;
  private final TupleTag<KV<K, OutT>> mainTag;
  private final SystemReduceFn<K, V, ?, OutT, BoundedWindow> reduceFn;
  /**
   * The state id of the per-window buffer: runners-core's {@code SystemReduceFn.BUFFER_NAME}, so
   * that both paths keep a window's elements in the same cells.
   */
  static final String BUFFER_ID = "buf";
  /** The buffer of each key and window when every window fires once ({@link #firesOnlyOnTime}), else null. */
  private final StateTag<? extends GroupingState<V, OutT>> onTimeBuffer;
  /** Elements (per window) of windows the input watermark passed: runners-core's counter of late drops. */
  private final Counter droppedDueToLateness =
      Metrics.counter(LateDataDroppingDoFnRunner.class, LateDataDroppingDoFnRunner.DROPPED_DUE_TO_LATENESS);
  /** The windows' coder (the namespaces of the one-pane path's buffers and timers). */
  private final Coder<BoundedWindow> windowCoder;
  /** The one-pane path of windows that need merging ({@link MergingOnePanePath}), else null; set at {@link #open}. */
  private MergingOnePanePath<K, V, OutT> merging;

  /** Elements buffered per key at most before they are processed, within one bundle. */
  static final int MAX_BATCHED_ELEMENTS = 4096;

  private DoFnRunner<KeyedWorkItem<K, V>, KV<K, OutT>> runner;
  /** Per recently used key: its ReduceFnRunner, kept across work items (see {@link ReduceFnRunners}). */
  private ReduceFnRunners<K, V, OutT> reduceFnRunners;
  /** How many ReduceFnRunners are kept; tests lower it (before {@link #open}) to drop them often. */
  int keptRunners = ReduceFnRunners.DEFAULT_CAPACITY;
  private Receiver output;
  /** The open bundle's elements not yet handed to runners-core, by key. */
  private final KeyedBatch<K, WindowedValue<V>> batch = new KeyedBatch<>();
  /** Whether the trigger (or one of its sub-triggers) counts elements ({@link #countsElements}). */
  private final boolean countingTrigger;
  /**
   * Whether elements wait in {@link #batch}: unless the trigger counts elements and the task's
   * bundles are not a test stream's events ({@link OperatorContext#eventBundles()}); set at {@link #open}.
   */
  private boolean batching;
  /** Event-time timers polled at most by one {@link #fireNextReady} call. */
  static final int MAX_TIMERS_PER_FIRING = 32;
  /** The ready timers of one {@link #fireNextReady} call, by key; empty between calls. */
  private final KeyedBatch<K, TimerInternals.TimerData> readyTimers = new KeyedBatch<>();

  /** A GroupByKey (values buffered in a bag per key and window); nothing is instantiated until {@link #open}. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static <K, V> GroupByKeyOperator<K, V, Iterable<V>> grouping(Coder<K> keyCoder, Coder<V> valueCoder,
      WindowingStrategy<?, ?> windowingStrategy, TupleTag<KV<K, Iterable<V>>> mainTag) {
    return new GroupByKeyOperator<>(keyCoder, valueCoder, windowingStrategy, mainTag,
        (SystemReduceFn) SystemReduceFn.buffering(valueCoder),
        (StateTag) StateTags.makeSystemTagInternal(StateTags.bag(BUFFER_ID, valueCoder)));
  }

  /**
   * A GroupByKey that combines each key and window's values into one accumulator of {@code fn}:
   * the merging half of a lifted Combine.perKey (values are accumulators, {@code fn} merges them,
   * see {@link dev.weir.runner.operators.PartialCombineOperator}), or a Combine.perKey that could not be lifted.
   *
   * @param inputCoder the coder of the values
   * @param accumulatorCoder the coder of {@code fn}'s accumulators (stored per key and window)
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static <K, V, A, O> GroupByKeyOperator<K, V, O> combining(Coder<K> keyCoder, Coder<V> inputCoder,
      Coder<A> accumulatorCoder, Combine.CombineFn<V, A, O> fn, WindowingStrategy<?, ?> windowingStrategy,
      TupleTag<KV<K, O>> mainTag) {
    SystemReduceFn reduceFn = SystemReduceFn.combining(keyCoder, AppliedCombineFn.withAccumulatorCoder(fn, accumulatorCoder));
    return new GroupByKeyOperator<>(keyCoder, inputCoder, windowingStrategy, mainTag, reduceFn,
        (StateTag) StateTags.makeSystemTagInternal(StateTags.combiningValue(BUFFER_ID, accumulatorCoder, fn)));
  }

  /**
   * Whether a GroupByKey with {@code windowing} emits exactly one pane per key and (merged) window,
   * on time at the end of the window: the default trigger, no allowed lateness and
   * {@link TimestampCombiner#END_OF_WINDOW} (so no element can be late yet kept, and no pane comes
   * early, late or at another timestamp). Such a GroupByKey skips runners-core (see the class comment).
   */
  public static boolean firesOnlyOnTime(WindowingStrategy<?, ?> windowing) {
    return windowing.getTrigger() instanceof DefaultTrigger
        && windowing.getAllowedLateness().getMillis() == 0
        && windowing.getTimestampCombiner() == TimestampCombiner.END_OF_WINDOW;
  }

  /**
   * The plan's node kind of a GroupByKey of {@code kind} over {@code windowing}: {@code kind}, with
   * {@value #ONE_PANE_KIND_SUFFIX} appended when it takes the one-pane path. The two paths keep
   * different state for the same windows (runners-core adds holds, trigger bits and pane counters),
   * so the kind is part of the plan's fingerprint: a checkpoint of one does not restore into the other.
   */
  public static String nodeKind(String kind, WindowingStrategy<?, ?> windowing) {
    return firesOnlyOnTime(windowing) ? kind + ONE_PANE_KIND_SUFFIX : kind;
  }

  /** Appended to the node kind of a GroupByKey that takes the one-pane path ({@link #nodeKind}). */
  public static final String ONE_PANE_KIND_SUFFIX = "/OnePane";

  /**
   * A GroupByKey over {@code reduceFn}; {@link #grouping} and {@link #combining} build one with the
   * buffer its reduce function keeps, tests without (runners-core only).
   *
   * @param reduceFn runners-core's reduce function (buffering or combining)
   * @param bufferTag the state {@code reduceFn} keeps each window's input in, for the one-pane path
   *     ({@link #firesOnlyOnTime}); null to run every windowing through runners-core
   */
  @SuppressWarnings("unchecked")
  GroupByKeyOperator(Coder<K> keyCoder, Coder<V> valueCoder, WindowingStrategy<?, ?> windowingStrategy,
      TupleTag<KV<K, OutT>> mainTag, SystemReduceFn<K, V, ?, OutT, BoundedWindow> reduceFn,
      StateTag<? extends GroupingState<V, OutT>> bufferTag) {
    // Timers hold no output: runners-core's state holds carry them, and the one-pane path needs none.
    super(keyCoder, false);
    this.windowingStrategy = (WindowingStrategy<?, BoundedWindow>) windowingStrategy;
    this.mainTag = mainTag;
    this.reduceFn = reduceFn;
    this.countingTrigger = countsElements(this.windowingStrategy.getTrigger());
    this.onTimeBuffer = bufferTag != null && firesOnlyOnTime(windowingStrategy) ? bufferTag : null;
    this.windowCoder = (Coder<BoundedWindow>) this.windowingStrategy.getWindowFn().windowCoder();
  }

  /** Whether {@code trigger} or one of its sub-triggers fires on a count of elements. */
  static boolean countsElements(Trigger trigger) {
    if (trigger instanceof AfterPane) {
      return true;
    }
    for (Trigger sub : trigger.subTriggers()) {
      if (countsElements(sub)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void open(OperatorContext context) {
    openKeyed(context, windowingStrategy.getWindowFn().windowCoder());
    this.batching = !countingTrigger || context.eventBundles();
    this.output = context.output(mainTag);
    reduceFnRunners = new ReduceFnRunners<>(windowingStrategy, timers, output::accept, reduceFn, context.options(),
        keptRunners);
    runner = new LateDataDroppingDoFnRunner<>(new KeptRunners(), windowingStrategy, timers);
    if (onTimeBuffer != null && windowingStrategy.needsMerge()) {
      merging = new MergingOnePanePath<>(windowingStrategy.getWindowFn(), onTimeBuffer, timers, output,
          droppedDueToLateness);
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  public void acceptKeyed(byte[] keyBytes, WindowedValue<?> element) {
    WindowedValue<KV<K, V>> kv = (WindowedValue<KV<K, V>>) element;
    KeyContext<K> key = keyContext(keyBytes, kv.getValue().getKey());
    WindowedValue<V> value = kv.withValue(kv.getValue().getValue());
    if (onTimeBuffer != null) {
      bufferOnTime(key, value);
      return;
    }
    if (!batching) {
      run(key, KeyedWorkItems.elementsWorkItem(key.key(), Collections.singletonList(value)));
      return;
    }
    startBundleIfNeeded();
    batch.add(key, value, value.getTimestamp().getMillis());
    if (batch.size() >= MAX_BATCHED_ELEMENTS) {
      processBuffered();
    }
  }

  /**
   * The one-pane path: adds {@code value} to the buffer of each of its windows the input watermark
   * has not passed, setting the window's end-of-window timer when the buffer was empty, and drops
   * (and counts) it for the others, as runners-core's late-data filter would with no allowed lateness;
   * windows that need merging go to {@link MergingOnePanePath#accept} instead.
   */
  private void bufferOnTime(KeyContext<K> key, WindowedValue<V> value) {
    setCurrent(key);
    startBundleIfNeeded();
    if (merging != null) {
      merging.accept(key, value);
      context.state().safePoint();
      return;
    }
    long inputWatermarkMs = timers.currentInputWatermarkTime().getMillis();
    for (BoundedWindow window : value.getWindows()) {
      Instant end = window.maxTimestamp();
      if (end.getMillis() < inputWatermarkMs) {
        droppedDueToLateness.inc();
        continue;
      }
      StateNamespace namespace = StateNamespaces.window(windowCoder, window);
      GroupingState<V, OutT> buffer = key.state().state(namespace, onTimeBuffer);
      if (buffer.isEmpty().read()) {
        timers.setTimer(namespace, "", "", end, end, TimeDomain.EVENT_TIME);
      }
      buffer.add(value.getValue());
    }
    context.state().safePoint();
  }

  /**
   * The one-pane path's firing: emits the timer's window's buffer as the window's only pane, at the
   * window's end, and clears it (the read stays valid: state reads are materialised or detached).
   */
  @SuppressWarnings("unchecked")
  private void fireOnTime(KeyedTimers.Entry ready) {
    KeyContext<K> key = (KeyContext<K>) ready.key();
    setCurrent(key);
    startBundleIfNeeded();
    if (merging != null) {
      merging.fire(key, ready.data());
      context.state().safePoint();
      return;
    }
    StateNamespace namespace = ready.data().getNamespace();
    BoundedWindow window = ((StateNamespaces.WindowNamespace<BoundedWindow>) namespace).getWindow();
    GroupingState<V, OutT> buffer = key.state().state(namespace, onTimeBuffer);
    if (!buffer.isEmpty().read()) {
      output.accept(WindowedValues.of(KV.of(key.key(), buffer.read()), window.maxTimestamp(), window,
          PaneInfo.ON_TIME_AND_ONLY_FIRING));
    }
    buffer.clear();
    context.state().safePoint();
  }

  /** Runs each buffered key's elements through runners-core as one work item. */
  @Override
  protected void processBuffered() {
    batch.drain((key, values) -> run(key, KeyedWorkItems.elementsWorkItem(key.key(), values)));
  }

  /** Between bundles only: then no element waits in the batch. */
  @Override
  public void snapshot(OperatorSnapshot out) {
    if (!batch.isEmpty()) {
      throw new IllegalStateException(batch.size() + " elements of " + context.stepName()
          + " wait unprocessed at a snapshot: a snapshot must follow the end of the bundle");
    }
    super.snapshot(out);
  }

  /**
   * Makes the event-time timers before {@code inputWatermark} ready; they fire through
   * {@link #advanceWatermark}, in bounded slices, so that a watermark jump (end of input) over
   * very many keys does not emit all their panes in one go. With none ready the advance completes
   * at once.
   */
  @Override
  protected void onInputWatermark(Instant inputWatermark) {
    processBuffered(); // (none wait: the bundle ended before the watermark was delivered)
    makeTimersReady(inputWatermark);
  }

  /** Every timer before the new input watermark fired: the output watermark may follow. */
  @Override
  protected void completeWatermark(Instant inputWatermark) {
    timers.advanceInputWatermark(inputWatermark, keys.holds().min());
    if (!inputWatermark.isBefore(BoundedWindow.TIMESTAMP_MAX_VALUE)) {
      timers.clearProcessingTimers();
      keys.clear();
      reduceFnRunners.clear();
    }
  }

  /** Makes the processing-time timers strictly before {@code now} ready; they fire in slices. */
  @Override
  public void onProcessingTime(Instant now) {
    makeProcessingTimersReady(now);
  }

  /**
   * Fires up to {@code max} (at most {@value #MAX_TIMERS_PER_FIRING}) ready event-time timers, those of one key as one
   * work item (in the order they were ready), so that runners-core reads the key's window set once
   * for all of them, as Beam's Direct runner hands it every timer of a key ready at a watermark.
   * With merging windows a key's windows often end together (Nexmark Q4: the bids' windows of a
   * hot auction); one work item per timer copied the key's whole window map per timer, 59% of the
   * bytes Q4 allocated. A timer deleted by an earlier firing of the same work item still reaches
   * runners-core, which checks every timer against its window's state (as with Direct).
   */
  @Override
  @SuppressWarnings("unchecked")
  protected int fireNextReady(int max) {
    processBuffered();
    int limit = Math.min(max, MAX_TIMERS_PER_FIRING);
    int polled = 0;
    if (onTimeBuffer != null) {
      do {
        fireOnTime(timers.pollReadyEventTimer());
      } while (++polled < limit && timers.hasReadyEventTimer());
      return polled;
    }
    do {
      KeyedTimers.Entry ready = timers.pollReadyEventTimer();
      readyTimers.add((KeyContext<K>) ready.key(), ready.data(), ready.data().getTimestamp().getMillis());
    } while (++polled < limit && timers.hasReadyEventTimer());
    readyTimers.drain((key, due) -> run(key, KeyedWorkItems.timersWorkItem(key.key(), due)));
    return polled;
  }

  @Override
  @SuppressWarnings("unchecked")
  protected void fireTimer(KeyedTimers.Entry ready) {
    processBuffered(); // elements that arrived before the firing go first, as element by element
    if (onTimeBuffer != null) {
      fireOnTime(ready);
      return;
    }
    KeyContext<K> key = (KeyContext<K>) ready.key();
    run(key, KeyedWorkItems.timersWorkItem(key.key(), List.of(ready.data())));
  }

  private void run(KeyContext<K> key, KeyedWorkItem<K, V> item) {
    setCurrent(key);
    startBundleIfNeeded();
    runner.processElement(WindowedValues.valueInGlobalWindow(item));
    // ReduceFnRunner changed its window set in place and wrote it only if it differs: done now.
    context.state().safePoint();
  }

  /**
   * The earliest buffered element's hold; while timers wait to fire, no later than the earliest of
   * them; while elements wait in the batch, no later than the earliest of them.
   */
  @Override
  public Instant watermarkHold() {
    Instant hold = keys.holds().min();
    long earliest = Math.min(firingHoldMillis(), batch.minTimestampMs());
    return earliest < hold.getMillis() ? new Instant(earliest) : hold;
  }

  @Override
  protected void startRunnerBundle() {
    runner.startBundle();
  }

  @Override
  protected void finishRunnerBundle() {
    runner.finishBundle();
  }

  /** Whether this GroupByKey takes the one-pane path ({@link #firesOnlyOnTime}) instead of runners-core (tests). */
  boolean onTimeOnly() {
    return onTimeBuffer != null;
  }

  /** The kept runners (tests). */
  ReduceFnRunners<K, V, OutT> reduceFnRunners() {
    return reduceFnRunners;
  }

  /**
   * The runner behind late-data dropping: runs each (filtered) work item through the current
   * key's kept {@code ReduceFnRunner}, as runners-core's {@link GroupAlsoByWindowViaWindowSetNewDoFn}
   * would with a new one (see {@link ReduceFnRunners}). It has no bundle methods, as that DoFn has
   * none, and no DoFn.
   */
  private final class KeptRunners extends TimerForwardingRunner<KeyedWorkItem<K, V>, KV<K, OutT>> {
    @Override
    public void startBundle() {}

    @Override
    public void processElement(WindowedValue<KeyedWorkItem<K, V>> element) {
      try {
        reduceFnRunners.run(keys.current(), element.getValue());
      } catch (Exception e) {
        throw UserCodeException.wrap(e); // as runners-core's DoFn runner reports what a DoFn threw
      }
    }

    @Override
    protected <KeyT> void fireTimer(String timerId, String timerFamilyId, KeyT key, BoundedWindow window,
        Instant timestamp, Instant outputTimestamp, TimeDomain timeDomain, boolean causedByDrain) {
      throw new UnsupportedOperationException("a GroupByKey's timers arrive in its work items");
    }

    @Override
    public void finishBundle() {}

    @Override
    public <KeyT> void onWindowExpiration(BoundedWindow window, Instant timestamp, KeyT key) {
      throw new UnsupportedOperationException("a GroupByKey has no window expiration callback");
    }

    /** @throws UnsupportedOperationException always: the work items run on kept runners, not a DoFn */
    @Override
    public DoFn<KeyedWorkItem<K, V>, KV<K, OutT>> getFn() {
      throw new UnsupportedOperationException("a GroupByKey runs runners-core's ReduceFnRunner directly, no DoFn");
    }
  }
}
