package dev.weir.runner.operators;

import java.util.function.BooleanSupplier;
import org.apache.beam.sdk.annotations.Internal;
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
@Internal
public interface Operator extends Receiver {

  /** Prepares the operator (DoFn set-up, state). Called once before anything else. */
  void open(OperatorContext context);

  /**
   * Delivers the node's input watermark and fires a bounded slice of the timers it (or an earlier
   * call, or {@link #onProcessingTime}) made ready: one call per operator per watermark pass,
   * returning whether the operator is done (Jet's {@code tryProcessWatermark}). The task calls it
   * for every node on every pass, with the watermark it computed for the node; the operator treats
   * a watermark not above the last one it was given as "no advance, only continue firing".
   *
   * <p>On an advance (the open bundle has been finished first) a keyed operator makes its event-time
   * timers before {@code inputWatermarkMs} ready. Then it fires ready timers one at a time,
   * event-time ones first (after the last of an advance, the watermark runners-core sees moves on),
   * then processing-time ones, stopping after {@code timerBudget} firings or as soon as
   * {@code outputBlocked} answers true (the task's outbox waits for room downstream). While timers
   * remain ready, its {@link #watermarkHold()} is at most the earliest unfired event-time one, so
   * the output watermark passes a timer only after it fired; the task meanwhile takes no input, no
   * processing-time tick and no further watermark, and calls again on every run-loop pass until
   * this returns true. Operators that ignore watermarks keep the default (true, nothing done).
   *
   * @param inputWatermarkMs the node's input watermark, epoch ms; a value not above the last one
   *     delivered (e.g. {@link Long#MIN_VALUE}) means no advance
   * @param timerBudget the most timers to fire in this call, at least 0 (0: only deliver)
   * @param outputBlocked asked once before each firing, only while a timer is ready and budget is
   *     left (never with budget 0); true stops the slice, false is followed by one firing (the
   *     task counts firings this way)
   * @return true when no ready timer waits to fire (the advance is complete), false otherwise
   */
  default boolean advanceWatermark(long inputWatermarkMs, int timerBudget, BooleanSupplier outputBlocked) {
    return true;
  }

  /**
   * The run loop's clock reached {@code now}: fire the processing-time timers strictly before it,
   * here or, by making them ready, in the slices of the following {@link #advanceWatermark} calls.
   * Timers set while firing at {@code now} or later wait for a later tick.
   */
  default void onProcessingTime(Instant now) {}

  /**
   * The earliest timestamp this operator may still output (a watermark hold), or
   * {@link BoundedWindow#TIMESTAMP_MAX_VALUE} if it holds nothing. The task reads it once per node
   * after each {@link #advanceWatermark} call, and again after finishing a bundle.
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

  /**
   * Whether the operator's state can be written into a checkpoint now. Asked while a checkpoint
   * waits for the job to become quiescent; false holds the checkpoint back (e.g. a splittable DoFn's
   * main-input elements pushed back until a side input is ready are not written into checkpoints,
   * so a checkpoint waits until they ran). Default: true.
   */
  default boolean readyForCheckpoint() {
    return true;
  }

  /**
   * Writes the operator's heap-only state into {@code out} (see {@link OperatorSnapshot}); called
   * at a checkpoint, with no bundle open and nothing in flight, after which the container's store
   * is committed with it. An operator opened on a restored checkpoint finds the parts again in
   * {@link OperatorContext#restored()}. Default: nothing (all state in the store, or none).
   */
  default void snapshot(OperatorSnapshot out) {}

  /**
   * The checkpoint this operator last wrote its {@link #snapshot} into is complete (durable): what
   * waited for it may go on (e.g. input held for a {@code @RequiresStableInput} DoFn). Called on
   * the container thread right after completion, outside any bundle; output is allowed (the task
   * finishes the bundle it opens). Default: nothing.
   */
  default void checkpointCompleted() {}

  /** Ends the open bundle, if any (DoFn {@code @FinishBundle}). */
  default void finishBundle() {}

  /** Releases resources (DoFn {@code @Teardown}). Must not throw. */
  default void close() {}
}
