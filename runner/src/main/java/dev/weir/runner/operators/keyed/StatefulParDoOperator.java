package dev.weir.runner.operators.keyed;

import dev.weir.runner.compat.BeamTimers;
import dev.weir.runner.operators.BundleFinalizers;
import dev.weir.runner.operators.ConcurrentDoFnCalls;
import dev.weir.runner.operators.ConcurrentOperator;
import dev.weir.runner.operators.DoFnLifecycle;
import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.OperatorSnapshot;
import dev.weir.runner.operators.OutputRouter;
import dev.weir.runner.operators.OwnerCalls;
import dev.weir.runner.operators.PrefetchedValues;
import dev.weir.runner.operators.SerializedCopies;
import dev.weir.runner.operators.SideInputConsumer;
import dev.weir.runner.operators.SideInputPushback;
import dev.weir.runner.operators.WorkerStateInternals;
import dev.weir.runner.operators.WorkerTimerInternals;
import dev.weir.runner.state.KeyContext;
import dev.weir.runner.state.WatermarkHolds;
import dev.weir.runner.timers.KeyedTimers;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.runners.core.DoFnRunners;
import org.apache.beam.runners.core.NullSideInputReader;
import org.apache.beam.runners.core.PushbackSideInputDoFnRunner;
import org.apache.beam.runners.core.SideInputReader;
import org.apache.beam.runners.core.SimplePushbackSideInputDoFnRunner;
import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.runners.core.StateTags;
import org.apache.beam.runners.core.StatefulDoFnRunner;
import org.apache.beam.runners.core.StepContext;
import org.apache.beam.runners.core.TimerInternals;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFnSchemaInformation;
import org.apache.beam.sdk.transforms.reflect.DoFnSignature;
import org.apache.beam.sdk.transforms.reflect.DoFnSignatures;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.joda.time.Instant;

/**
 * A ParDo whose DoFn uses state, timers or {@code @OnWindowExpiration}, on a keyed stage fed by a
 * SHUFFLE stream (the translator cuts one in front of it), run through runners-core:
 * {@link DoFnRunners#simpleRunner} wrapped in {@link DoFnRunners#defaultStatefulDoFnRunner}, which
 * drops late elements, sets a cleanup timer per (key, window) at the window's garbage-collection
 * time, and when it fires calls {@code @OnWindowExpiration} and clears the window's state.
 *
 * <p>Keys as in {@link KeyedOperator}: a bounded cache of {@link KeyContext}s (key object,
 * {@link dev.weir.runner.state.CachedStateInternals}) by encoded key, rebuilt from the key bytes when needed (state and
 * event-time timers live in the store).
 *
 * <p>Timers: one {@link KeyedTimers} for all keys of the task, with output holds: each pending
 * timer holds the output watermark at its output timestamp. Event-time timers live in the
 * container's store (a timestamp-ordered index with a bounded in-memory heap, opened at
 * {@link #open} so committed timers survive a restart of the run loop) and fire when the input
 * watermark passes them, earliest first (per key and across keys), while runners-core still sees
 * the output watermark of before the advance; a timer set while firing fires in the same advance
 * if it is ready. Processing-time and synchronized-processing-time timers fire from the run loop's
 * clock. At the end of input (watermark +infinity) every event-time timer fires, then the
 * processing-time timers pending at that moment fire once each (a processing-time timer can no
 * longer wait for a clock that outlives the input), each followed by the event-time timers it
 * made ready; processing-time timers they set are dropped.
 *
 * <p>Incremental firing ({@link KeyedOperator}): a watermark only makes timers ready
 * ({@link #advanceWatermark}); the task fires them a bounded slice at a time, so the end of input over
 * a million keys does not put a million timer outputs in the outbox at once. Until the last ready timer fired,
 * {@link #watermarkHold()} is at most the earliest unfired one (and the output timestamps of the
 * end-of-input processing-time timers not yet fired), and runners-core's output watermark stays
 * where it was.
 *
 * <p>{@code @RequiresTimeSortedInput}: a {@link TimeSortedInputRunner} between the two runners
 * buffers each key's elements in store-sorted state and hands them to the DoFn in timestamp order
 * as the input watermark passes them.
 *
 * <p>Bundle finalization: the DoFn's {@code BundleFinalizer} callbacks of a bundle run after the
 * container's commit of that bundle's state (see {@link BundleFinalizers}).
 *
 * <p>Side inputs (if the ParDo has any; the task feeds them in through {@link SideInputConsumer}):
 * as in {@link dev.weir.runner.operators.ParDoOperator}, runners-core's {@link SimplePushbackSideInputDoFnRunner} processes
 * the windows whose side inputs are ready and pushes the others back (kept on the heap with their
 * encoded key, in arrival order), retried whenever a side-input watermark advances. A pushed-back
 * element holds both watermarks at its timestamp: the output watermark ({@link #watermarkHold()}),
 * and the input watermark the timers and runners-core see, so that no event-time timer (a user
 * timer, or the window's state cleanup) fires at or after a pushed-back element's timestamp
 * before that element has been processed, and the element is not dropped as late when it is.
 * When a retry releases the earliest pushed-back elements, the timers they held become ready and
 * fire as after a watermark.
 *
 * <p>Watermark: {@link #watermarkHold()} is the minimum of the state's watermark holds, the
 * timers' output holds and the earliest pushed-back element's timestamp (and, while timers wait to
 * fire, the earliest of them). Every bundle that ran asks the container for a state commit.
 *
 * <h2>Concurrent mode</h2>
 *
 * Translated with {@code concurrent} ({@code --containerThreadPoolSize} above 0, no side inputs, no
 * {@code @RequiresTimeSortedInput}), elements become calls that {@link ConcurrentDoFnCalls} runs
 * on the container's worker threads, each on one of up to {@code --taskMaxConcurrency} DoFn
 * instances (own {@code @Setup}, {@code @Teardown}, bundles and runners-core runner), one at a time
 * per key and in the order they were submitted, keys in parallel. A timer fires on the container
 * thread, on an idle instance, when its key has no call in flight (so a chain of timers that set
 * timers runs at the sequential path's speed, not one worker round trip per firing); behind the
 * key's calls in flight, on a worker, otherwise. State and timers stay the container thread's: an instance reaches them through
 * {@link OwnerCalls} proxies bound to its call's key, whose every call runs on the container thread
 * (the object cache keeps its single owner). Watermarks: an element in flight holds the watermark
 * the timers and runners-core see at the input watermark it arrived under (so no timer that a
 * later advance makes ready fires before it, and it is judged late as it would have been on
 * arrival), and the output watermark at its timestamp (a timer in flight: at its output
 * timestamp), or lower, at the operator's other holds when it was submitted: a hold the call
 * releases (a timer it resets, a state hold it clears) stays in force until the call's outputs
 * are in the outbox, as on the sequential path. An advance is not complete while a timer firing is in flight (it may set timers
 * that fire in the same advance), nor, at the end of input, while any call is; meanwhile
 * {@link #awaitingInFlight()} keeps the task asking. A checkpoint waits until no call is in flight.
 *
 * <p>Threading: confined to the task's container thread (in concurrent mode, but for the calls
 * on worker threads, which touch only their instance and reach state through the container thread).
 */
@Internal
public final class StatefulParDoOperator<K, V, OutT> extends KeyedOperator<K>
    implements SideInputConsumer, ConcurrentOperator {

  /** The user's DoFn, serialized once for all tasks of this transform; each task opens a copy. */
  private final SerializedCopies<DoFn<KV<K, V>, OutT>> fn;
  private final TupleTag<OutT> mainTag;
  private final List<TupleTag<?>> additionalTags;
  private final KvCoder<K, V> inputCoder;
  private final Map<TupleTag<?>, Coder<?>> outputCoders;
  private final WindowingStrategy<?, ?> windowingStrategy;
  private final DoFnSchemaInformation schemaInformation;
  private final Map<String, PCollectionView<?>> sideInputMapping;
  private final List<PCollectionView<?>> sideInputViews;

  /** A main-input element waiting for its side inputs, with its encoded key. */
  private record PushedBack(byte[] keyBytes, WindowedValue<?> element) {}

  /** Null without side inputs. */
  private SideInputPushback<PushedBack> pushback;
  private PushbackSideInputDoFnRunner<KV<K, V>, OutT> pushbackRunner;
  /** The input watermark the task delivered last (timers see it lowered by pushed-back elements). */
  private Instant inputWatermark = BoundedWindow.TIMESTAMP_MIN_VALUE;
  /**
   * At the end of input, once the event-time timers fired: the processing-time timers pending
   * then, in firing order, each fired once; null before that point.
   */
  private ArrayDeque<KeyedTimers.Entry> endProcessing;
  /** Output timestamps of {@link #endProcessing}'s timers (polled timers no longer hold in {@link #timers}). */
  private final WatermarkHolds endProcessingHolds = new WatermarkHolds();

  private DoFnLifecycle lifecycle;
  private DoFnRunner<KV<K, V>, OutT> runner;
  /** The end of input's firings are done; later processing-time ticks fire nothing. */
  private boolean ended;
  /** Whether elements and timers run on the container's worker threads (translated so). */
  private final boolean concurrent;
  /** In concurrent mode: the task's DoFn instances and the calls they run, in key order; else null. */
  private ConcurrentDoFnCalls<KeyedCall> calls;
  /** In concurrent mode: timer firings handed to {@link #calls} and not yet completed. */
  private int timersInFlight;

  /**
   * One call of the concurrent mode: an element or a timer firing of one key.
   *
   * @param watermarkMs for an element, the input watermark delivered when it arrived: the timers
   *     and runners-core see no later watermark until it ran ({@link Long#MAX_VALUE} for a timer)
   * @param outputHoldMs what the call holds the output watermark at until it completed: the least
   *     of the timestamp it may output at (the element's, or the timer's output timestamp) and the
   *     operator's other holds when it was submitted ({@link #holdsBesideCalls}). The second term
   *     keeps a hold the call releases (a timer it resets, a state hold it clears) in force until
   *     its outputs are in the outbox, as on the sequential path, where no watermark can pass
   *     between a call's release of a hold and its outputs (ParDoTest's testOutputTimestamp: a
   *     downstream timer at 8 must not fire before the element at 9 whose call moved the upstream
   *     timer's hold from 5 to 14). Holds set after submission are not captured, so calls in
   *     flight one after another never pin the watermark.
   * @param seenWatermarkMs for an element, the input watermark the timers and runners-core showed
   *     when it arrived, which the call sees (its lateness check, its relative event-time timers)
   *     without asking the container thread, as the sequential path would have shown it;
   *     {@link WorkerTimerInternals#ASK} for a timer
   */
  private record KeyedCall(KeyContext<?> key, WindowedValue<?> element, KeyedTimers.Entry timer, long watermarkMs,
                           long outputHoldMs, long seenWatermarkMs) {
    static KeyedCall element(KeyContext<?> key, WindowedValue<?> element, long watermarkMs, long holdsMs,
        long seenWatermarkMs) {
      return new KeyedCall(key, element, null, watermarkMs, Math.min(element.getTimestamp().getMillis(), holdsMs),
          seenWatermarkMs);
    }

    static KeyedCall timer(KeyContext<?> key, KeyedTimers.Entry timer, long holdsMs) {
      return new KeyedCall(key, null, timer, Long.MAX_VALUE,
          Math.min(timer.data().getOutputTimestamp().getMillis(), holdsMs), WorkerTimerInternals.ASK);
    }
  }

  /** Describes the ParDo; nothing is instantiated until {@link #open}. */
  public StatefulParDoOperator(
      DoFn<KV<K, V>, OutT> prototype,
      TupleTag<OutT> mainTag,
      List<TupleTag<?>> additionalTags,
      KvCoder<K, V> inputCoder,
      Map<TupleTag<?>, Coder<?>> outputCoders,
      WindowingStrategy<?, ?> windowingStrategy,
      DoFnSchemaInformation schemaInformation,
      Map<String, PCollectionView<?>> sideInputMapping) {
    this(new SerializedCopies<>(prototype), mainTag, additionalTags, inputCoder, outputCoders, windowingStrategy,
        schemaInformation, sideInputMapping, List.of());
  }

  /**
   * Describes the ParDo with side inputs; nothing is instantiated until {@link #open}.
   *
   * @param fn the user's DoFn, serialized once for all tasks of the transform
   * @param sideInputViews the ParDo's side inputs, in the order of their broadcast streams
   */
  public StatefulParDoOperator(
      SerializedCopies<DoFn<KV<K, V>, OutT>> fn,
      TupleTag<OutT> mainTag,
      List<TupleTag<?>> additionalTags,
      KvCoder<K, V> inputCoder,
      Map<TupleTag<?>, Coder<?>> outputCoders,
      WindowingStrategy<?, ?> windowingStrategy,
      DoFnSchemaInformation schemaInformation,
      Map<String, PCollectionView<?>> sideInputMapping,
      List<PCollectionView<?>> sideInputViews) {
    this(fn, mainTag, additionalTags, inputCoder, outputCoders, windowingStrategy, schemaInformation, sideInputMapping,
        sideInputViews, false);
  }

  /**
   * Describes the ParDo as above; with {@code concurrent} (no side inputs, no
   * {@code @RequiresTimeSortedInput}), its elements and timers run on the container's worker
   * threads, one at a time per key ({@code --containerThreadPoolSize}).
   */
  public StatefulParDoOperator(
      SerializedCopies<DoFn<KV<K, V>, OutT>> fn,
      TupleTag<OutT> mainTag,
      List<TupleTag<?>> additionalTags,
      KvCoder<K, V> inputCoder,
      Map<TupleTag<?>, Coder<?>> outputCoders,
      WindowingStrategy<?, ?> windowingStrategy,
      DoFnSchemaInformation schemaInformation,
      Map<String, PCollectionView<?>> sideInputMapping,
      List<PCollectionView<?>> sideInputViews,
      boolean concurrent) {
    super(inputCoder.getKeyCoder(), true); // each pending user timer holds the output watermark
    this.concurrent = concurrent;
    this.sideInputViews = sideInputViews;
    this.fn = fn;
    this.mainTag = mainTag;
    this.additionalTags = additionalTags;
    this.inputCoder = inputCoder;
    this.outputCoders = outputCoders;
    this.windowingStrategy = windowingStrategy;
    this.schemaInformation = schemaInformation;
    this.sideInputMapping = sideInputMapping;
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public void open(OperatorContext context) {
    openKeyed(context, windowingStrategy.getWindowFn().windowCoder());
    if (concurrent) {
      if (context.workers() == null) {
        throw new IllegalStateException(context.stepName() + " was translated for concurrent @ProcessElement, but "
            + "its container has no worker threads (--containerThreadPoolSize)");
      }
      OwnerCalls owner = new OwnerCalls(context.workers());
      calls = new ConcurrentDoFnCalls<>(context, new OutputRouter(context, mainTag, additionalTags, true),
          out -> newInstance(context, owner, out), call -> call.key().id(), this::startFiring, true);
      return;
    }
    lifecycle = new DoFnLifecycle(context);
    DoFn<KV<K, V>, OutT> fn = lifecycle.setUp(this.fn.newCopy(), context.options());
    SideInputReader reader = NullSideInputReader.empty();
    if (!sideInputViews.isEmpty()) {
      @SuppressWarnings({"unchecked", "rawtypes"})
      Coder<WindowedValue<?>> elementCoder = (Coder) WindowedValues.getFullCoder(inputCoder,
          windowingStrategy.getWindowFn().windowCoder());
      pushback = new SideInputPushback<>(sideInputViews, new SideInputPushback.Codec<>() {
        @Override
        public void encode(PushedBack element, java.io.DataOutputStream out) throws java.io.IOException {
          out.writeInt(element.keyBytes().length);
          out.write(element.keyBytes());
          elementCoder.encode(element.element(), out);
        }

        @Override
        public PushedBack decode(java.io.DataInputStream in) throws java.io.IOException {
          byte[] key = new byte[in.readInt()];
          in.readFully(key);
          return new PushedBack(key, elementCoder.decode(in));
        }

        @Override
        public long timestampMs(PushedBack element) {
          return element.element().getTimestamp().getMillis();
        }

        @Override
        public byte[] keyBytes(PushedBack element) {
          return element.keyBytes();
        }
      });
      reader = pushback.sideInputs();
      pushback.restore(context.restored());
    }
    runner = statefulRunner(context, fn, reader, new OutputRouter(context, mainTag, additionalTags, true),
        keys.currentState(), timers, lifecycle.finalizer());
    if (pushback != null) {
      pushbackRunner = SimplePushbackSideInputDoFnRunner.create(runner, pushback.sideInputs().views(),
          pushback.sideInputs());
    }
    lifecycle.runners(runner, pushbackRunner);
  }

  /**
   * The runner of one DoFn instance: runners-core's simple runner over {@code fn} writing to
   * {@code out}, behind a {@link TimeSortedInputRunner} if the DoFn requires time-sorted input,
   * inside a {@link StatefulDoFnRunner} (late drops, the window's cleanup timer and state cleaner):
   * what {@code DoFnRunners.defaultStatefulDoFnRunner} builds, minus its rejection of
   * {@code @RequiresTimeSortedInput} (sorted by the runner above instead of runners-core's
   * in-memory sort of a bag).
   *
   * @param state the state the DoFn and the cleaner see (the current key's, or a worker's proxy)
   * @param timerInternals the timers they see (the task's, or a worker's proxy)
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private DoFnRunner<KV<K, V>, OutT> statefulRunner(OperatorContext context, DoFn<KV<K, V>, OutT> fn,
      SideInputReader reader, org.apache.beam.sdk.util.WindowedValueMultiReceiver out, StateInternals state,
      TimerInternals timerInternals, DoFn.BundleFinalizer finalizer) {
    StepContext stepContext = new StepContext() {
      @Override
      public StateInternals stateInternals() {
        return state;
      }

      @Override
      public TimerInternals timerInternals() {
        return timerInternals;
      }

      @Override
      public DoFn.BundleFinalizer bundleFinalizer() {
        return finalizer;
      }
    };
    DoFnRunner<KV<K, V>, OutT> simple = DoFnRunners.simpleRunner(context.options(), fn, reader, out, mainTag,
        additionalTags, stepContext, inputCoder, outputCoders, windowingStrategy, schemaInformation, sideInputMapping);
    if (DoFnSignatures.getSignature(fn.getClass()).processElement().requiresTimeSortedInput()) {
      simple = new TimeSortedInputRunner<>(simple, inputCoder, stepContext, windowingStrategy);
    }
    Coder windowCoder = windowingStrategy.getWindowFn().windowCoder();
    return new StatefulDoFnRunner<>(simple, inputCoder, stepContext, windowingStrategy,
        new StatefulDoFnRunner.TimeInternalsCleanupTimer<>(timerInternals, windowingStrategy),
        new StatefulDoFnRunner.StateInternalsStateCleaner<>(fn, state, windowCoder), false);
  }

  @Override
  @SuppressWarnings("unchecked")
  public void acceptKeyed(byte[] keyBytes, WindowedValue<?> element) {
    WindowedValue<KV<K, V>> kv = (WindowedValue<KV<K, V>>) element;
    KeyContext<K> key = keyContext(keyBytes, kv.getValue().getKey());
    if (calls != null) {
      startBundleIfNeeded();
      calls.submit(KeyedCall.element(key, kv, inputWatermark.getMillis(), holdsBesideCalls(),
          timers.currentInputWatermarkTime().getMillis()));
      return;
    }
    setCurrent(key);
    startBundleIfNeeded();
    if (pushbackRunner == null) {
      runner.processElement(kv);
    } else {
      pushBack(keyBytes, pushbackRunner.processElementInReadyWindows(kv));
    }
  }

  private void pushBack(byte[] keyBytes, Iterable<WindowedValue<KV<K, V>>> notReady) {
    for (WindowedValue<KV<K, V>> element : notReady) {
      pushback.pushBack(new PushedBack(keyBytes, element), element.getTimestamp().getMillis());
    }
  }

  @Override
  public void acceptSideInput(int index, WindowedValue<?> element) {
    if (pushback.acceptSideInput(index, element)) { // a triggered view's pane may have made a window ready
      retryPushedBack();
    }
  }

  @Override
  public void advanceSideInputWatermark(int index, long watermarkMs) {
    if (pushback.advanceSideInputWatermark(index, watermarkMs)) {
      retryPushedBack();
    }
  }

  /**
   * A side-input window became ready: retries the pushed-back elements (in a new bundle, since
   * the pushback runner remembers not-ready windows until its next start), then fires the
   * event-time timers the released elements were holding back.
   */
  @SuppressWarnings("unchecked")
  private void retryPushedBack() {
    List<PushedBack> retry = pushback.takeAll();
    finishBundle();
    startBundleIfNeeded();
    for (PushedBack p : retry) {
      setCurrent(keyOf(p.keyBytes()));
      pushBack(p.keyBytes(), pushbackRunner.processElementInReadyWindows((WindowedValue<KV<K, V>>) p.element()));
    }
    startFiring();
  }

  /** Number of main-input elements waiting for side inputs (for tests). */
  public int pushedBackCount() {
    return pushback == null ? 0 : pushback.size();
  }

  /** The earliest pushed-back element's timestamp, epoch ms; {@link Long#MAX_VALUE} if none. */
  private long pushedBackMinMs() {
    return pushback == null ? Long.MAX_VALUE : pushback.holdMs();
  }

  /**
   * Makes the event-time timers before {@code inputWatermark} (lowered to the earliest pushed-back
   * element) ready; they fire through {@link #advanceWatermark}, in bounded slices. With none ready
   * the advance completes at once.
   */
  @Override
  protected void onInputWatermark(Instant inputWatermark) {
    this.inputWatermark = inputWatermark;
    startFiring();
  }

  /**
   * Makes the timers ready at the input watermark lowered to the earliest pushed-back element's
   * timestamp; once they fired, the watermarks runners-core sees advance to it.
   */
  private void startFiring() {
    long holdMs = Math.min(pushedBackMinMs(), calls == null ? Long.MAX_VALUE : calls.minOf(KeyedCall::watermarkMs));
    makeTimersReady(holdMs < inputWatermark.getMillis() ? new Instant(holdMs) : inputWatermark);
  }

  /** An event-time timer if one is ready, else (at the end of input) the next pending processing-time timer. */
  @Override
  protected int fireNextReady(int max) {
    KeyedTimers.Entry ready = timers.pollReadyEventTimer();
    if (ready == null) {
      ready = endProcessing.poll();
      endProcessingHolds.replace(ready.data().getOutputTimestamp(), null);
    }
    fireTimer(ready);
    return 1;
  }

  /**
   * Whether a timer waits to fire in the advance to {@link #firingTo()}: a ready event-time timer
   * (firings may set new ones) or, at the end of input, a processing-time timer pending when the
   * event-time timers were done (taken out of {@link #timers} at that point, so that ones set by
   * their firings are not fired).
   */
  @Override
  protected boolean firingLeft() {
    if (super.firingLeft()) {
      return true;
    }
    if (inFlightFiring()) {
      return true; // a firing in flight may set timers that fire in this advance
    }
    if (ended || firingTo().isBefore(BoundedWindow.TIMESTAMP_MAX_VALUE)) {
      return false;
    }
    if (endProcessing == null) {
      endProcessing = new ArrayDeque<>();
      KeyedTimers.Entry entry;
      while ((entry = timers.pollAnyProcessingTimer()) != null) {
        endProcessing.add(entry);
        endProcessingHolds.replace(null, entry.data().getOutputTimestamp());
      }
    }
    return !endProcessing.isEmpty();
  }

  /** Every timer of the advance fired: runners-core's watermarks follow; at the end, keys are dropped. */
  @Override
  protected void completeWatermark(Instant watermark) {
    if (endProcessing != null && !ended) {
      ended = true;
      endProcessing = null;
      timers.clearProcessingTimers();
      keys.clear();
    }
    timers.advanceInputWatermark(watermark, watermarkHold());
  }

  @Override
  public void onProcessingTime(Instant now) {
    if (!ended) {
      fireReadyProcessingTimers(now);
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  protected void fireTimer(KeyedTimers.Entry ready) {
    KeyContext<K> key = (KeyContext<K>) ready.key();
    startBundleIfNeeded();
    if (calls != null) {
      KeyedCall call = KeyedCall.timer(key, ready, holdsBesideCalls());
      if (!calls.runHereIfKeyIdle(call)) { // else behind the key's calls in flight, on a worker
        timersInFlight++;
        calls.submit(call);
      }
      return;
    }
    setCurrent(key);
    fire(runner, key, ready.data());
  }

  /** Fires {@code timer} of {@code key} through {@code runner} ({@code @OnTimer}, or the window's state cleanup). */
  private static <K, V, OutT> void fire(DoFnRunner<KV<K, V>, OutT> runner, KeyContext<K> key,
      TimerInternals.TimerData timer) {
    StateNamespace namespace = timer.getNamespace();
    BoundedWindow window = namespace instanceof StateNamespaces.WindowNamespace<?> w
        ? w.getWindow() : org.apache.beam.sdk.transforms.windowing.GlobalWindow.INSTANCE;
    BeamTimers.fire(runner, timer.getTimerId(), timer.getTimerFamilyId(), key.key(), window, timer.getTimestamp(),
        timer.getOutputTimestamp(), timer.getDomain(), BeamTimers.causedByDrain(timer));
  }

  /**
   * Whether, in concurrent mode, the advance to {@link #firingTo()} must wait for calls in flight:
   * a timer firing (it may set timers that fire in the same advance), or, at the end of input,
   * any call (its effects belong before the end's firings).
   */
  private boolean inFlightFiring() {
    if (calls == null) {
      return false;
    }
    if (timersInFlight > 0) {
      return true;
    }
    Instant to = firingTo();
    return to != null && !to.isBefore(BoundedWindow.TIMESTAMP_MAX_VALUE) && calls.busy();
  }

  /** Nothing can fire now, only calls in flight keep the advance open: the task waits for their completion. */
  @Override
  protected boolean awaitingInFlight() {
    return inFlightFiring() && !timers.hasReadyEventTimer(); // the end's processing-time timers wait too
  }

  /**
   * One instance of the concurrent mode: its own DoFn copy (set up now), runner and finalizer, with
   * state and timers reached through {@link OwnerCalls} for the key of the call it runs.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private ConcurrentDoFnCalls.InstanceRunner<KeyedCall> newInstance(OperatorContext context, OwnerCalls owner,
      org.apache.beam.sdk.util.WindowedValueMultiReceiver out) {
    DoFnLifecycle instanceLifecycle = new DoFnLifecycle(context);
    DoFn<KV<K, V>, OutT> copy = instanceLifecycle.setUp(this.fn.newCopy(), context.options());
    KeyedCall[] running = new KeyedCall[1]; // written by the worker before its calls, read on the owner
    PrefetchedValues prefetch = new PrefetchedValues();
    KeyedCall[] prefetchedFor = new KeyedCall[1]; // the call prefetch was taken for (at its hand-off)
    List<StateTag<? extends ValueState<?>>> valueTags = valueStateTags(copy);
    Coder<BoundedWindow> windowCoder = (Coder<BoundedWindow>) windowingStrategy.getWindowFn().windowCoder();
    StateInternals state = new WorkerStateInternals(owner, () -> running[0].key().state(),
        () -> prefetchedFor[0] == running[0] ? prefetch : null);
    TimerInternals timerCalls = new WorkerTimerInternals(owner, () -> {
      timers.setCurrentKey(running[0].key());
      return timers;
    }, () -> running[0].seenWatermarkMs());
    DoFnRunner<KV<K, V>, OutT> instanceRunner = statefulRunner(context, copy, NullSideInputReader.empty(), out, state,
        timerCalls, instanceLifecycle.finalizer());
    instanceLifecycle.runners(instanceRunner, null);
    return new ConcurrentDoFnCalls.InstanceRunner<>() {
      @Override
      public void startBundle() {
        instanceLifecycle.startBundle();
      }

      @Override
      public void handingOff(KeyedCall call) {
        prefetchedFor[0] = null;
        if (call.timer() != null || valueTags.isEmpty()) {
          return; // timers ask: their windows and states are the DoFn's choice
        }
        prefetch.clear();
        StateInternals keyState = call.key().state();
        for (BoundedWindow window : call.element().getWindows()) {
          StateNamespace namespace = StateNamespaces.window(windowCoder, window);
          for (StateTag<? extends ValueState<?>> tag : valueTags) {
            prefetch.take(keyState, namespace, tag);
          }
        }
        prefetchedFor[0] = call;
      }

      @Override
      public void run(KeyedCall call) {
        running[0] = call;
        if (call.timer() == null) {
          instanceRunner.processElement((WindowedValue<KV<K, V>>) call.element());
        } else {
          fire(instanceRunner, (KeyContext<K>) call.key(), call.timer().data());
        }
      }

      @Override
      public void completed(KeyedCall call) {
        if (call.timer() != null) {
          timersInFlight--; // only submitted timers complete here: those run here never were in flight
        }
      }

      @Override
      public void finishBundle() {
        instanceLifecycle.finishBundle();
      }

      @Override
      public void tearDown() {
        instanceLifecycle.tearDown();
      }
    };
  }

  /**
   * The tags of the value states {@code fn} declares, as runners-core's simple runner makes them
   * for the DoFn's {@code @StateId} parameters ({@link StateTags#tagForSpec}).
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static List<StateTag<? extends ValueState<?>>> valueStateTags(DoFn<?, ?> fn) {
    List<StateTag<? extends ValueState<?>>> tags = new ArrayList<>();
    for (DoFnSignature.StateDeclaration declaration : DoFnSignatures.getSignature(fn.getClass())
        .stateDeclarations().values()) {
      if (!ValueState.class.isAssignableFrom(declaration.stateType().getRawType())) {
        continue;
      }
      try {
        declaration.field().setAccessible(true);
        StateSpec spec = (StateSpec) declaration.field().get(fn);
        tags.add((StateTag) StateTags.tagForSpec(declaration.id(), spec));
      } catch (IllegalAccessException | RuntimeException e) {
        return List.of(); // not prefetched: the states are read by asking, as any other
      }
    }
    return tags;
  }

  @Override
  protected void startRunnerBundle() {
    if (calls == null) {
      lifecycle.startBundle(); // concurrent mode: each instance starts its own
    }
  }

  /**
   * The minimum of the state's watermark holds, the pending timers' output timestamps and the
   * earliest pushed-back element; while timers wait to fire, also of the earliest unfired one.
   */
  @Override
  public Instant watermarkHold() {
    long hold = holdsBesideCalls();
    if (calls != null) {
      hold = Math.min(hold, calls.minOf(KeyedCall::outputHoldMs)); // calls in flight output at or after these
    }
    return new Instant(hold);
  }

  /** {@link #watermarkHold()} without the calls in flight, epoch ms. */
  private long holdsBesideCalls() {
    long hold = Math.min(keys.holds().minMillis(), timers.outputHold().getMillis());
    hold = Math.min(hold, pushedBackMinMs());
    hold = Math.min(hold, firingHoldMillis());
    return Math.min(hold, endProcessingHolds.minMillis()); // empty unless firing at the end of input
  }

  /** Key contexts currently cached (bounded by {@link dev.weir.runner.state.KeyContexts#DEFAULT_CAPACITY}; for tests). */
  public int liveKeys() {
    return keys.size();
  }

  @Override
  protected void finishRunnerBundle() {
    if (calls != null) {
      calls.finishBundle(); // idle instances now, busy ones after their call
      return;
    }
    lifecycle.finishBundle(); // its finalization callbacks run after the commit requested before
  }

  @Override
  public void close() {
    if (calls != null) {
      calls.close();
    }
    if (lifecycle != null) {
      lifecycle.tearDown();
    }
  }

  /**
   * In concurrent mode: calls in flight or waiting, or timers that their completion made ready
   * and no watermark pass has fired yet (completions arrive between passes, so the end of input
   * may come before the next pass: the task keeps ticking, and its passes fire them).
   */
  @Override
  public boolean hasPendingWork() {
    return calls != null && (calls.busy() || firingTo() != null);
  }

  @Override
  public boolean concurrent() {
    return concurrent;
  }

  /** Whether the concurrent mode's calls are in flight up to {@code --taskMaxConcurrency}: the task takes no input. */
  @Override
  public boolean saturated() {
    return calls != null && calls.saturated();
  }

  @Override
  public boolean readyForCheckpoint() {
    return (pushback == null || pushback.readyForCheckpoint()) && (calls == null || !calls.busy());
  }

  /** Writes the timers and holds ({@link KeyedOperator#snapshot}), then the side inputs' contents. */
  @Override
  public void snapshot(OperatorSnapshot out) {
    super.snapshot(out);
    if (pushback != null) {
      pushback.snapshot(out);
    }
  }
}
