package dev.weir.runner.operators;

import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.TimerInternals;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.state.TimeDomain;
import org.joda.time.Instant;

/**
 * The {@link TimerInternals} a DoFn instance running on a worker thread sees: the container
 * thread's timers of the key its call is for ({@link OwnerCalls}). Setting and deleting a timer
 * are posted (no round trip; they run before the call's completion, so a timer a firing sets is
 * there for the same watermark advance); the clocks are asked, except the input watermark while
 * the call knows the one it runs under (an element is judged, and its timers set, against the
 * watermark it arrived under, as on the sequential path: runners-core asks it for every element's
 * lateness check).
 *
 * <p>Threading: one worker at a time per instance (the one running its call), or the container
 * thread.
 */
@Internal
public final class WorkerTimerInternals implements TimerInternals {
  /** What {@code inputWatermarkMs} answers when the call does not know its watermark: ask the owner. */
  public static final long ASK = Long.MIN_VALUE;

  private final OwnerCalls owner;
  private final Supplier<TimerInternals> target;
  private final LongSupplier inputWatermarkMs;

  /**
   * @param owner the container thread's calls
   * @param target evaluated on the container thread: the timers, set to the key of the call running now
   * @param inputWatermarkMs evaluated on the worker: the input watermark of the call running now,
   *     epoch ms, or {@link #ASK}
   */
  public WorkerTimerInternals(OwnerCalls owner, Supplier<TimerInternals> target, LongSupplier inputWatermarkMs) {
    this.owner = owner;
    this.target = target;
    this.inputWatermarkMs = inputWatermarkMs;
  }

  @Override
  public void setTimer(StateNamespace namespace, String timerId, String timerFamilyId, Instant target,
      Instant outputTimestamp, TimeDomain timeDomain) {
    owner.post(() -> this.target.get().setTimer(namespace, timerId, timerFamilyId, target, outputTimestamp, timeDomain));
  }

  @Override
  public void setTimer(TimerData timer) {
    owner.post(() -> target.get().setTimer(timer));
  }

  @Override
  public void deleteTimer(StateNamespace namespace, String timerId, String timerFamilyId, TimeDomain timeDomain) {
    owner.post(() -> target.get().deleteTimer(namespace, timerId, timerFamilyId, timeDomain));
  }

  @Override
  @SuppressWarnings("deprecation")
  public void deleteTimer(StateNamespace namespace, String timerId, String timerFamilyId) {
    owner.post(() -> target.get().deleteTimer(namespace, timerId, timerFamilyId));
  }

  @Override
  @SuppressWarnings("deprecation")
  public void deleteTimer(TimerData timer) {
    owner.post(() -> target.get().deleteTimer(timer));
  }

  @Override
  public Instant currentProcessingTime() {
    return owner.ask(() -> target.get().currentProcessingTime());
  }

  @Override
  public Instant currentSynchronizedProcessingTime() {
    return owner.ask(() -> target.get().currentSynchronizedProcessingTime());
  }

  @Override
  public Instant currentInputWatermarkTime() {
    long known = owner.onContainerThread() ? ASK : inputWatermarkMs.getAsLong();
    return known == ASK ? owner.ask(() -> target.get().currentInputWatermarkTime()) : new Instant(known);
  }

  @Override
  public Instant currentOutputWatermarkTime() {
    return owner.ask(() -> target.get().currentOutputWatermarkTime());
  }
}
