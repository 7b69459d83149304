package dev.weir.runner.operators.keyed;

import dev.weir.runner.compat.BeamTimers;
import dev.weir.runner.operators.Operator;
import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.OperatorSnapshot;
import dev.weir.runner.state.WatermarkHolds;

import dev.weir.runner.state.KeyContext;
import dev.weir.runner.timers.KeyedTimers;
import java.util.function.BooleanSupplier;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.WindowedValue;
import org.joda.time.Instant;

/**
 * What the keyed operators ({@link GroupByKeyOperator}, {@link StatefulParDoOperator}) share: key
 * contexts over the container's state, one {@link KeyedTimers} for all keys of the task, the
 * firing of ready event-time timers in bounded slices, and the end of a bundle.
 *
 * <p>Keys: {@link OperatorKeys} (shared with {@link SplittableProcessOperator}): a bounded cache
 * of {@link KeyContext}s by encoded key over the container's state, rebuilt from the encoded key
 * when the key is seen again or one of its timers fires, and the current key whose state
 * runners-core's calls read.
 *
 * <p>Incremental firing: a watermark only makes event-time timers ready
 * ({@link #makeTimersReady}); the task fires them a bounded slice at a time
 * ({@link #advanceWatermark}), pausing while its outbox is blocked, so the end of input over a
 * million keys does not put a million timer outputs in the outbox at once. Subclasses keep their
 * output watermark ({@link #watermarkHold()}) at most at {@link #firingHoldMillis()} meanwhile,
 * and advance the watermarks runners-core sees only in {@link #completeWatermark}, after the last
 * ready timer fired. A subclass may have its processing-time timers fired the same way
 * ({@link #makeProcessingTimersReady}: after the ready event-time ones, those strictly before the
 * tick's time, which all slices of that tick see as runners-core's processing time), or fire them
 * at once ({@link #fireReadyProcessingTimers}).
 *
 * <p>Bundles: a bundle starts at the first runner call ({@link #startBundleIfNeeded}); its end
 * asks the container for a state commit (dirty cache entries are written in one batch at the
 * container's commit point) and finishes the runner.
 *
 * <p>Metrics: none of this scopes metrics; the executor makes the step current around every call
 * into the operator (see {@code StepScope}), and every user-code call below happens inside one.
 *
 * <p>Threading: confined to the task's container thread, as are all fields.
 *
 * @param <K> the key type
 */
abstract class KeyedOperator<K> implements Operator {
  /** Recently used key contexts and the current key; timers and state survive a context's eviction in the store. */
  protected final OperatorKeys<K> keys;
  protected final KeyedTimers timers;
  /** Snapshot part of the pending processing-time timers. */
  static final String PROCESSING_TIMERS_PART = "processing-timers";
  /** Snapshot part of the keys' watermark holds. */
  static final String HOLDS_PART = WatermarkHolds.SNAPSHOT_PART;
  /** Set by {@link #openKeyed}. */
  protected OperatorContext context;
  /** The windows' coder (timer namespaces); set by {@link #openKeyed}. */
  private Coder<? extends BoundedWindow> windowCoder;
  private boolean inBundle;
  /** The watermark whose ready timers are being fired, or null when none wait. */
  private Instant firingTo;
  /** The last input watermark {@link #advanceWatermark} delivered, epoch ms. */
  private long deliveredMs = BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis();
  /** Whether processing-time timers are fired in slices ({@link #makeProcessingTimersReady} was called). */
  private boolean slicedProcessingTimers;

  /**
   * @param keyCoder encodes keys of elements handed to {@link #accept} (the shuffle's encoding)
   * @param timersHoldOutput whether each pending timer holds the output watermark at its output
   *     timestamp (see {@link KeyedTimers#KeyedTimers(boolean)})
   */
  KeyedOperator(Coder<K> keyCoder, boolean timersHoldOutput) {
    this.keys = new OperatorKeys<>(keyCoder);
    this.timers = new KeyedTimers(timersHoldOutput);
  }

  /**
   * Takes the context and opens the keys and timers over the container's state, under the ids of
   * the operator's PTransform (so committed state and timers are found again). Subclasses call it
   * first in {@link #open}.
   */
  protected final void openKeyed(OperatorContext context, Coder<? extends BoundedWindow> windowCoder) {
    this.context = context;
    keys.open(context.state(), context.stepName(), windowCoder);
    timers.advanceProcessingTime(new Instant(context.clock().millis()));
    timers.open(context.state(), context.stepName(), context.partition(), windowCoder, this::keyOf,
        KeyedTimers.DEFAULT_HEAP_CAPACITY);
    java.util.function.BooleanSupplier drainCaused = context.drainCaused();
    timers.markFirings(timer -> drainCaused.getAsBoolean() ? BeamTimers.withDrainCause(timer) : timer);
    this.windowCoder = windowCoder;
    keys.holds().restore(context.restored().get(HOLDS_PART));
    for (OperatorSnapshot.Part part : context.restored().all(PROCESSING_TIMERS_PART)) {
      timers.restoreProcessingTimers(part.bytes(), windowCoder, this::keyOf, context.stepName(),
          context.restored()::owns);
    }
  }

  /**
   * Writes the heap-only state: the processing-time timers and the multiset of the keys' watermark
   * holds (event-time timers and the holds themselves are in the store). Subclasses with more
   * heap state call this first.
   */
  @Override
  public void snapshot(OperatorSnapshot out) {
    out.put(PROCESSING_TIMERS_PART, timers.snapshotProcessingTimers(windowCoder));
    out.put(HOLDS_PART, keys.holds().snapshot());
  }

  /** Encodes the element's key and hands it to {@link #acceptKeyed}; for input that skipped the shuffle. */
  @Override
  public final void accept(WindowedValue<?> element) {
    @SuppressWarnings("unchecked")
    K key = ((KV<K, ?>) element.getValue()).getKey();
    acceptKeyed(keys.encode(key), element);
  }

  /** The context of {@code key}, whose encoding is {@code keyBytes}; created if not cached. */
  protected final KeyContext<K> keyContext(byte[] keyBytes, K key) {
    return keys.get(keyBytes, key);
  }

  /** The key context of a fired timer's encoded key (decoded if not cached). */
  protected final KeyContext<K> keyOf(byte[] keyBytes) {
    return keys.decode(keyBytes);
  }

  /** Makes {@code key} the one runners-core's state and timer calls refer to. */
  protected final void setCurrent(KeyContext<K> key) {
    keys.setCurrent(key);
    timers.setCurrentKey(key);
  }

  /**
   * Makes the event-time timers before {@code watermark} ready for {@link #advanceWatermark}; with
   * none ready (see {@link #firingLeft}) the advance completes at once.
   */
  protected final void makeTimersReady(Instant watermark) {
    timers.setInputWatermark(watermark); // the output watermark moves in completeWatermark
    if (firingTo == null || watermark.isAfter(firingTo)) {
      firingTo = watermark;
    }
    if (!firingLeft()) {
      complete();
    }
  }

  /**
   * Advances the clock runners-core sees to {@code now} and makes the processing-time timers
   * strictly before it ready for {@link #advanceWatermark}; timers set while they fire, at
   * {@code now} or later, wait for a later tick.
   */
  protected final void makeProcessingTimersReady(Instant now) {
    slicedProcessingTimers = true;
    timers.advanceProcessingTime(now);
  }

  /**
   * Delivers the input watermark (making the event-time timers before it ready through
   * {@link #onInputWatermark} when it advanced) and fires ready timers one at a time until
   * {@code timerBudget} fired, {@code outputBlocked} answers true or none is ready: those of the
   * watermark advance first (completing it after the last), then (if sliced) processing-time ones.
   */
  @Override
  public final boolean advanceWatermark(long inputWatermarkMs, int timerBudget, BooleanSupplier outputBlocked) {
    if (inputWatermarkMs > deliveredMs) {
      deliveredMs = inputWatermarkMs;
      onInputWatermark(new Instant(inputWatermarkMs)); // one Instant per advance, not per firing
    }
    for (int fired = 0;
        fired < timerBudget && hasReadyTimers() && !awaitingInFlight() && !outputBlocked.getAsBoolean(); ) {
      fired += fireNextTimer(timerBudget - fired);
    }
    return !hasReadyTimers();
  }

  /**
   * The node's input watermark advanced to {@code inputWatermark} (the open bundle is finished):
   * make the event-time timers before it ready, normally through {@link #makeTimersReady}.
   */
  protected abstract void onInputWatermark(Instant inputWatermark);

  /**
   * Whether the advance cannot go on now although it is not complete: only calls running on worker
   * threads keep it open (a stateful ParDo's concurrent mode), and nothing may fire until they
   * completed; the task keeps asking on every pass. By default false.
   */
  protected boolean awaitingInFlight() {
    return false;
  }

  /** Whether event-time timers of a watermark advance, or (if sliced) processing-time timers before the last tick, wait to fire. */
  private boolean hasReadyTimers() {
    return firingTo != null || (slicedProcessingTimers && timers.hasReadyProcessingTimer());
  }

  /**
   * Fires ready timers, at least one and at most {@code max} where the subclass fires several at
   * once: of the watermark advance if any (completing the advance after the last of them), else (the
   * advance completed without a firing) one processing-time timer. Only called while
   * {@link #hasReadyTimers()}.
   *
   * @return timers fired (0 only when the advance completed with none left to fire)
   */
  private int fireNextTimer(int max) {
    if (firingTo != null) {
      int fired = 0;
      if (firingLeft()) {
        fired = fireNextReady(max);
      }
      if (firingLeft()) {
        return fired;
      }
      complete();
      if (fired > 0) {
        return fired;
      }
    }
    KeyedTimers.Entry ready;
    if (slicedProcessingTimers && (ready = timers.pollReadyProcessingTimer()) != null) {
      fireTimer(ready);
    }
    return 1;
  }

  private void complete() {
    Instant watermark = firingTo;
    firingTo = null;
    completeWatermark(watermark);
  }

  /** The watermark being fired to, or null when none of its timers wait. */
  protected final Instant firingTo() {
    return firingTo;
  }

  /**
   * Whether a timer waits to fire in the advance to {@link #firingTo()}: by default, whether an
   * event-time timer is ready (firings may set new ones). Only called while firing.
   */
  protected boolean firingLeft() {
    return timers.hasReadyEventTimer();
  }

  /**
   * Fires the next timer of the advance, or up to {@code max} of them; only called after
   * {@link #firingLeft()} returned true.
   *
   * @param max timers the call may fire at most (at least 1)
   * @return timers fired, at least 1
   */
  protected int fireNextReady(int max) {
    fireTimer(timers.pollReadyEventTimer());
    return 1;
  }

  /**
   * The earliest unfired event-time timer's timestamp in epoch ms while timers wait to fire, else
   * {@link Long#MAX_VALUE}: the most the output watermark may be meanwhile.
   */
  protected final long firingHoldMillis() {
    if (firingTo == null) {
      return Long.MAX_VALUE;
    }
    Instant next = timers.nextEventTime();
    return next == null ? Long.MAX_VALUE : next.getMillis();
  }

  /** Advances the clock runners-core sees to {@code now} and fires the ready processing-time timers. */
  protected final void fireReadyProcessingTimers(Instant now) {
    timers.advanceProcessingTime(now);
    KeyedTimers.Entry ready;
    while ((ready = timers.pollReadyProcessingTimer()) != null) {
      fireTimer(ready);
    }
  }

  /** Fires {@code timer} for its key through the runner. */
  protected abstract void fireTimer(KeyedTimers.Entry timer);

  /**
   * Every timer of the advance to {@code watermark} fired: the watermarks runners-core sees may
   * follow.
   */
  protected abstract void completeWatermark(Instant watermark);

  /** Starts the runner's bundle unless one is open. */
  protected final void startBundleIfNeeded() {
    if (!inBundle) {
      inBundle = true;
      startRunnerBundle();
    }
  }

  /** Starts the runner's bundle. */
  protected abstract void startRunnerBundle();

  /** Finishes the runner's bundle, after the commit was requested. */
  protected abstract void finishRunnerBundle();

  /** Whether the runner's bundle is open (elements or timer firings since the last finish). */
  @Override
  public final boolean inBundle() {
    return inBundle;
  }

  @Override
  public final void finishBundle() {
    if (!inBundle) {
      return;
    }
    processBuffered(); // what it changes belongs to this bundle's commit
    inBundle = false;
    keys.bundleFinished(); // a state commit, at the container's next commit point
    finishRunnerBundle();
  }

  /**
   * Hands input the subclass buffered in the open bundle to its runner; called at the end of a
   * bundle before anything else. Subclasses that buffer also call it before any timer fires and
   * before the watermark or processing time runners-core sees moves. By default nothing is buffered.
   */
  protected void processBuffered() {}
}
