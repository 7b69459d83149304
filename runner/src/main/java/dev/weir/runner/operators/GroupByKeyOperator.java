package dev.weir.runner.operators;

import dev.weir.runner.state.ByteKey;
import dev.weir.runner.state.CachedStateInternals;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.state.WatermarkHolds;
import dev.weir.runner.state.KeyContext;
import dev.weir.runner.state.KeyContexts;
import dev.weir.runner.state.KeyedTimers;
import java.util.Collections;
import java.util.List;
import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.runners.core.DoFnRunners;
import org.apache.beam.runners.core.GroupAlsoByWindowViaWindowSetNewDoFn;
import org.apache.beam.runners.core.KeyedWorkItem;
import org.apache.beam.runners.core.KeyedWorkItemCoder;
import org.apache.beam.runners.core.KeyedWorkItems;
import org.apache.beam.runners.core.NullSideInputReader;
import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.runners.core.StateInternalsFactory;
import org.apache.beam.runners.core.StepContext;
import org.apache.beam.runners.core.SystemReduceFn;
import org.apache.beam.runners.core.TimerInternals;
import org.apache.beam.runners.core.TimerInternalsFactory;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.metrics.MetricsContainer;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.DoFnSchemaInformation;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.util.WindowedValueMultiReceiver;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.joda.time.Instant;

/**
 * GroupByKey with Beam's full windowing model, through runners-core: every element becomes a
 * one-element {@link KeyedWorkItem} for {@link GroupAlsoByWindowViaWindowSetNewDoFn} (which runs
 * {@code ReduceFnRunner}: every WindowFn including merging ones, triggers, allowed lateness,
 * accumulation modes, panes), behind the late-data-dropping runner. With
 * {@link #grouping} values are buffered (a GroupByKey); with a combining reduce function over
 * accumulators it is the merging half of a lifted Combine.perKey ({@link PartialCombineOperator}).
 *
 * <p>Keys: the task receives each element with its key already encoded by the upstream shuffle
 * writer; the encoded bytes identify the key (Beam groups by encoding). Per key the operator keeps
 * a {@link KeyContext} (key object, state view) in a bounded {@link KeyContexts} of recently used
 * keys; everything else about a key (state cells, event-time timers) is in the store, so a
 * dropped context is rebuilt from the encoded key when the key is seen again or a timer fires.
 *
 * <p>State: {@link CachedStateInternals} per key over the container's object-cached store
 * ({@code --stateBackend}); the encoded key from the shuffle is the cell prefix, built once per
 * key. A bundle that touched state asks the container for a commit when it finishes.
 *
 * <p>Watermark holds: every {@code WatermarkHoldState} change is mirrored in this operator's
 * {@link WatermarkHolds}; {@link #watermarkHold()} is their minimum, so the task never sends a
 * watermark past an element ReduceFnRunner still holds. The output watermark runners-core sees is
 * the input watermark lowered by those holds.
 *
 * <p>Timers: {@link KeyedTimers}; event-time timers (in the store, see {@link KeyedTimers}) fire
 * when the task's input watermark passes them, while ReduceFnRunner still sees the output
 * watermark of before the advance (so the end-of-window pane is on time, as on Direct);
 * processing-time timers from the job's clock ({@code OperatorContext.clock()}). At the end of input (watermark at
 * +infinity) every event-time timer fires and pending processing-time timers are dropped.
 *
 * <p>Incremental firing: a watermark only makes timers ready ({@link #onWatermark}); the task fires
 * them a bounded slice at a time ({@link #fireReadyTimers}), pausing while its outbox is blocked,
 * so the end of input over a million keys does not put a million panes in the outbox at once.
 * Until the last ready timer fired, {@link #watermarkHold()} is at most the earliest unfired one
 * and runners-core's output watermark stays where it was: timers fire before the output watermark
 * passes them.
 *
 * <p>Threading: confined to the task's container thread.
 */
public final class GroupByKeyOperator<K, V, OutT> implements Operator {
  private final Coder<K> keyCoder;
  private final Coder<V> valueCoder;
  private final WindowingStrategy<?, BoundedWindow> windowingStrategy;
  private final TupleTag<KV<K, OutT>> mainTag;
  private final SystemReduceFn<K, V, ?, OutT, BoundedWindow> reduceFn;

  private final KeyContexts<K> keys = new KeyContexts<>(KeyContexts.DEFAULT_CAPACITY);
  private final KeyedTimers timers = new KeyedTimers();
  private final WatermarkHolds holds = new WatermarkHolds();
  private ContainerState state;
  private byte[] operatorPrefix;
  private KeyContext<K> current;
  private OperatorContext context;
  private MetricsContainer stepMetrics;
  private DoFnRunner<KeyedWorkItem<K, V>, KV<K, OutT>> runner;
  private Receiver output;
  private boolean inBundle;
  /** The input watermark whose ready timers are being fired, or null when none wait. */
  private Instant firingTo;

  /** A GroupByKey (values buffered in a bag per key and window); nothing is instantiated until {@link #open}. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static <K, V> GroupByKeyOperator<K, V, Iterable<V>> grouping(Coder<K> keyCoder, Coder<V> valueCoder,
      WindowingStrategy<?, ?> windowingStrategy, TupleTag<KV<K, Iterable<V>>> mainTag) {
    return new GroupByKeyOperator<>(keyCoder, valueCoder, windowingStrategy, mainTag,
        (SystemReduceFn) SystemReduceFn.buffering(valueCoder));
  }

  /**
   * The merging half of a lifted Combine.perKey: a GroupByKey whose values are already
   * accumulators, merged into a combining state per key and window (see
   * {@link PartialCombineOperator}).
   *
   * @param reduceFn runners-core's combining reduce function over accumulators
   */
  @SuppressWarnings("unchecked")
  public GroupByKeyOperator(Coder<K> keyCoder, Coder<V> valueCoder, WindowingStrategy<?, ?> windowingStrategy,
      TupleTag<KV<K, OutT>> mainTag, SystemReduceFn<K, V, ?, OutT, BoundedWindow> reduceFn) {
    this.keyCoder = keyCoder;
    this.valueCoder = valueCoder;
    this.windowingStrategy = (WindowingStrategy<?, BoundedWindow>) windowingStrategy;
    this.mainTag = mainTag;
    this.reduceFn = reduceFn;
  }

  @Override
  public void open(OperatorContext context) {
    this.context = context;
    this.state = context.state();
    this.operatorPrefix = state.newOperatorPrefix();
    timers.advanceProcessingTime(new Instant(context.clock().millis()));
    timers.open(state, windowingStrategy.getWindowFn().windowCoder(), this::keyOf, KeyedTimers.DEFAULT_HEAP_CAPACITY);
    this.stepMetrics = context.stepMetrics();
    this.output = context.output(mainTag);
    WindowedValueMultiReceiver outputManager = new WindowedValueMultiReceiver() {
      @Override
      public <T> void output(TupleTag<T> tag, WindowedValue<T> value) {
        output.accept(value);
      }
    };
    StateInternalsFactory<K> stateFactory = key -> current.state();
    TimerInternalsFactory<K> timerFactory = key -> timers;
    DoFn<KeyedWorkItem<K, V>, KV<K, OutT>> fn = GroupAlsoByWindowViaWindowSetNewDoFn.create(
        windowingStrategy, stateFactory, timerFactory, NullSideInputReader.empty(), reduceFn,
        outputManager, mainTag);
    StepContext stepContext = new StepContext() {
      @Override
      public StateInternals stateInternals() {
        return current.state();
      }

      @Override
      public TimerInternals timerInternals() {
        return timers;
      }
    };
    DoFnRunner<KeyedWorkItem<K, V>, KV<K, OutT>> simple = DoFnRunners.simpleRunner(
        context.options(), fn, NullSideInputReader.empty(), outputManager, mainTag,
        Collections.emptyList(), stepContext,
        KeyedWorkItemCoder.of(keyCoder, valueCoder, windowingStrategy.getWindowFn().windowCoder()),
        Collections.emptyMap(), windowingStrategy, DoFnSchemaInformation.create(),
        Collections.emptyMap());
    runner = DoFnRunners.lateDataDroppingRunner(simple, timers, windowingStrategy);
  }

  @Override
  public void accept(WindowedValue<?> element) {
    @SuppressWarnings("unchecked")
    K key = ((KV<K, V>) element.getValue()).getKey();
    try {
      acceptKeyed(CoderUtils.encodeToByteArray(keyCoder, key), element);
    } catch (CoderException e) {
      throw new IllegalStateException("cannot encode a key of " + context.stepName(), e);
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  public void acceptKeyed(byte[] keyBytes, WindowedValue<?> element) {
    WindowedValue<KV<K, V>> kv = (WindowedValue<KV<K, V>>) element;
    ByteKey id = new ByteKey(keyBytes);
    KeyContext<K> key = keys.get(id);
    if (key == null) {
      key = newKey(kv.getValue().getKey(), id);
    }
    WindowedValue<V> value = kv.withValue(kv.getValue().getValue());
    run(key, KeyedWorkItems.elementsWorkItem(key.key(), Collections.singletonList(value)));
  }

  /**
   * Makes the event-time timers before {@code inputWatermark} ready; they fire through
   * {@link #fireReadyTimers}, in bounded slices, so that a watermark jump (end of input) over
   * very many keys does not emit all their panes in one go. With none ready the advance completes
   * at once.
   */
  @Override
  public void onWatermark(Instant inputWatermark) {
    timers.setInputWatermark(inputWatermark); // output watermark moves after the firings
    if (firingTo == null || inputWatermark.isAfter(firingTo)) {
      firingTo = inputWatermark;
    }
    if (!timersReady()) {
      completeWatermark();
    }
  }

  @Override
  public boolean hasReadyTimers() {
    return firingTo != null;
  }

  @Override
  public void fireReadyTimers(int max) {
    if (firingTo == null) {
      return;
    }
    KeyedTimers.Entry ready;
    for (int fired = 0; fired < max && (ready = timers.pollReadyEventTimer()) != null; fired++) {
      fire(ready);
    }
    if (!timersReady()) {
      completeWatermark();
    }
  }

  /** Whether an event-time timer before the watermark being fired to waits (firings may set new ones). */
  private boolean timersReady() {
    Instant next = timers.nextEventTime();
    return next != null && next.isBefore(firingTo);
  }

  /** Every timer before the new input watermark fired: the output watermark may follow. */
  private void completeWatermark() {
    Instant inputWatermark = firingTo;
    firingTo = null;
    timers.advanceInputWatermark(inputWatermark, holds.min());
    if (!inputWatermark.isBefore(BoundedWindow.TIMESTAMP_MAX_VALUE)) {
      timers.clearProcessingTimers();
      keys.clear();
    }
  }

  @Override
  public void onProcessingTime(Instant now) {
    timers.advanceProcessingTime(now);
    KeyedTimers.Entry ready;
    while ((ready = timers.pollReadyProcessingTimer()) != null) {
      fire(ready);
    }
  }

  @SuppressWarnings("unchecked")
  private void fire(KeyedTimers.Entry ready) {
    KeyContext<K> key = (KeyContext<K>) ready.key();
    run(key, KeyedWorkItems.timersWorkItem(key.key(), List.of(ready.data())));
  }

  private void run(KeyContext<K> key, KeyedWorkItem<K, V> item) {
    MetricsContainer previous = context.metrics().swap(stepMetrics);
    current = key;
    timers.setCurrentKey(key);
    try {
      if (!inBundle) {
        inBundle = true;
        runner.startBundle();
      }
      runner.processElement(WindowedValues.valueInGlobalWindow(item));
    } finally {
      context.metrics().swap(previous);
    }
  }

  private KeyContext<K> newKey(K k, ByteKey id) {
    KeyContext<K> key = new KeyContext<>(k, id, new CachedStateInternals(k, id.bytes(), operatorPrefix, state.store(), holds));
    keys.put(key);
    return key;
  }

  /** The key context of a fired event-time timer's encoded key (decoded if not cached). */
  private KeyContext<?> keyOf(byte[] keyBytes) {
    ByteKey id = new ByteKey(keyBytes);
    KeyContext<K> key = keys.get(id);
    if (key != null) {
      return key;
    }
    try {
      return newKey(CoderUtils.decodeFromByteArray(keyCoder, keyBytes), id);
    } catch (CoderException e) {
      throw new IllegalStateException("cannot decode a timer's key in " + context.stepName(), e);
    }
  }

  /** The earliest buffered element's hold; while timers wait to fire, no later than the earliest of them. */
  @Override
  public Instant watermarkHold() {
    Instant hold = holds.min();
    if (firingTo != null) {
      Instant next = timers.nextEventTime();
      if (next != null && next.isBefore(hold)) {
        hold = next;
      }
    }
    return hold;
  }

  @Override
  public void finishBundle() {
    if (!inBundle) {
      return;
    }
    inBundle = false;
    state.requestCommit();
    MetricsContainer previous = context.metrics().swap(stepMetrics);
    try {
      runner.finishBundle();
    } finally {
      context.metrics().swap(previous);
    }
  }
}
