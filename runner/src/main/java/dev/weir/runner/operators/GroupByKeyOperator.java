package dev.weir.runner.operators;

import dev.weir.runner.state.ByteKey;
import dev.weir.runner.state.CachedStateInternals;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.state.WatermarkHolds;
import dev.weir.runner.state.KeyContext;
import dev.weir.runner.state.KeyedTimers;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
 * a {@link KeyContext} (state, pending-timer count), dropped once the key has no timers left,
 * which for ReduceFnRunner means its windows were garbage-collected.
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
 * <p>Timers: {@link KeyedTimers}; event-time timers fire when the task's input watermark passes
 * them, processing-time timers from the run loop's clock. At the end of input (watermark at
 * +infinity) every event-time timer fires and pending processing-time timers are dropped.
 *
 * <p>Threading: confined to the task's container thread.
 */
public final class GroupByKeyOperator<K, V, OutT> implements Operator {
  private final Coder<K> keyCoder;
  private final Coder<V> valueCoder;
  private final WindowingStrategy<?, BoundedWindow> windowingStrategy;
  private final TupleTag<KV<K, OutT>> mainTag;
  private final SystemReduceFn<K, V, ?, OutT, BoundedWindow> reduceFn;

  private final Map<ByteKey, KeyContext<K>> keys = new HashMap<>();
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
      K k = kv.getValue().getKey();
      key = new KeyContext<>(k, id, new CachedStateInternals(k, keyBytes, operatorPrefix, state.store(), holds));
      keys.put(id, key);
    }
    WindowedValue<V> value = kv.withValue(kv.getValue().getValue());
    run(key, KeyedWorkItems.elementsWorkItem(key.key(), Collections.singletonList(value)));
  }

  @Override
  public void onWatermark(Instant inputWatermark) {
    timers.advanceInputWatermark(inputWatermark, holds.min());
    KeyedTimers.Entry ready;
    while ((ready = timers.pollReadyEventTimer()) != null) {
      fire(ready);
    }
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
    if (key.pendingTimers() == 0) {
      // ReduceFnRunner keeps a GC timer for every live window, so no timers means no state.
      keys.remove(key.id());
    }
  }

  @Override
  public Instant watermarkHold() {
    return holds.min();
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
