package dev.weir.runner.operators;

import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.joda.time.Instant;

/**
 * One node of a fused stage, instantiated once per task (partition). Elements arrive through
 * {@link #accept}; outputs leave through the receivers in the {@link OperatorContext}.
 *
 * <p>Lifecycle: {@link #open} once, then any interleaving of elements, watermarks, processing-time
 * ticks and {@link #finishBundle}, then {@link #close} once (also after a failure). A bundle
 * starts lazily at the first element or timer firing an operator sees and ends when the task
 * calls {@link #finishBundle}: at {@code maxBundleSize} input elements, after
 * {@code maxBundleTimeMs}, before every watermark, at the end of a processing-time tick if no
 * input element is in it ({@link #inBundle()}), and at the end of input.
 *
 * <p>Steps: the executor makes the operator's PTransform the thread's running step (its Beam
 * metrics container current, its profiling span open) around every call into it, including the
 * elements fused operators pass along, so user code an operator runs (DoFns, combine and window
 * functions, coders) counts for its own PTransform without the operator scoping anything.
 *
 * <p>Threading: every method is called on the owning task's container thread only.
 */
public interface Operator extends Receiver {

  /** Prepares the operator (DoFn set-up, state). Called once before anything else. */
  void open(OperatorContext context);

  /**
   * The task's input watermark advanced to {@code inputWatermark}; the open bundle has been
   * finished. Keyed operators fire their ready event-time timers here, or make them ready and
   * fire them through {@link #fireReadyTimers}.
   */
  default void onWatermark(Instant inputWatermark) {}

  /**
   * Whether timers made ready by the last {@link #onWatermark} (event time) or
   * {@link #onProcessingTime} (processing time) still wait to fire. An operator that fires
   * incrementally returns true from then on until the last ready timer fired, and meanwhile holds
   * its output watermark ({@link #watermarkHold()}) at the earliest unfired event-time one, so the
   * output watermark passes a timer only after it fired. The task then takes no input, no
   * processing-time tick and no further watermark, and calls {@link #fireReadyTimers} (a bounded
   * number per run-loop pass, stopping while its outbox is blocked) until this is false. Operators
   * that fire everything inside {@code onWatermark} / {@code onProcessingTime} keep the default,
   * false.
   */
  default boolean hasReadyTimers() {
    return false;
  }

  /**
   * Fires up to {@code max} (at least 1) of the ready timers: event-time ones first, earliest
   * first (after the last of them, completes the watermark advance: the output watermark
   * runners-core sees moves on), then processing-time ones, earliest first. Only called while
   * {@link #hasReadyTimers()} is true.
   */
  default void fireReadyTimers(int max) {}

  /**
   * The run loop's clock reached {@code now}: fire the processing-time timers strictly before it,
   * here or, by making them ready, through {@link #fireReadyTimers}. Timers set while firing at
   * {@code now} or later wait for a later tick.
   */
  default void onProcessingTime(Instant now) {}

  /**
   * The earliest timestamp this operator may still output (a watermark hold), or
   * {@link BoundedWindow#TIMESTAMP_MAX_VALUE} if it holds nothing.
   */
  default Instant watermarkHold() {
    return BoundedWindow.TIMESTAMP_MAX_VALUE;
  }

  /**
   * Whether the operator still has work that no input drives, e.g. checkpointed splittable-DoFn
   * restrictions that processing-time timers resume. After the task's input ended, it keeps
   * ticking and ends its output stream only once no operator has pending work. Default: none.
   */
  default boolean hasPendingWork() {
    return false;
  }

  /**
   * Whether this operator has an open bundle: it processed something (an element, a timer firing,
   * a retried pushed-back element) or buffers output since its last {@link #finishBundle}. The
   * task asks at each processing-time tick: a bundle that no input element opened (timer firings,
   * side-input retries) is finished at the end of that tick, so that output a DoFn holds until
   * {@code @FinishBundle} does not wait for the next input bundle or watermark. Operators that
   * never hold anything across calls keep the default, false.
   */
  default boolean inBundle() {
    return false;
  }

  /** Ends the open bundle, if any (DoFn {@code @FinishBundle}). */
  default void finishBundle() {}

  /** Releases resources (DoFn {@code @Teardown}). Must not throw. */
  default void close() {}
}
