package dev.weir.runner.operators;

import dev.weir.runner.state.ByteKey;
import dev.weir.runner.state.KeyContext;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.TimerInternals;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.joda.time.Instant;

/**
 * The timers of a {@link SplittableProcessOperator} instance: the processing-time timers that
 * runners-core's {@code ProcessFn} sets to resume a checkpointed restriction, across all keys of
 * the task, and the {@link TimerInternals} the ProcessFn sees for the <em>current</em> key.
 *
 * <p>Shape: one ordered set of pending resumes by (wake-up time, insertion sequence), with a hash
 * index by (encoded key, namespace, timer id, family) so that setting a timer again replaces it.
 * A resume is due when the clock has reached its wake-up time ({@link #pollDue}: at or after, not
 * strictly after as for user timers), so a {@code ProcessContinuation.resume()} without delay is
 * due again at once and the operator may run it in the same tick, after the other due resumes.
 *
 * <p>Only processing-time timers exist here (the ProcessFn sets no others); setting an event-time
 * timer fails with {@link UnsupportedOperationException}. Resumes are kept on the heap: like the
 * operator's watermark holds they do not survive a restart of the job.
 *
 * <p>Threading: confined to the task's container thread.
 */
final class ResumeTimers implements TimerInternals {

  /** A pending resume of one key's restriction. */
  static final class Resume implements Comparable<Resume> {
    final KeyContext<?> key;
    final TimerData data;
    final long sequence;
    final Slot slot;

    Resume(KeyContext<?> key, TimerData data, long sequence, Slot slot) {
      this.key = key;
      this.data = data;
      this.sequence = sequence;
      this.slot = slot;
    }

    @Override
    public int compareTo(Resume o) {
      int c = data.getTimestamp().compareTo(o.data.getTimestamp());
      return c != 0 ? c : Long.compare(sequence, o.sequence);
    }
  }

  /** Identity of a timer; keys compare by encoding. */
  record Slot(ByteKey key, StateNamespace namespace, String timerId, String familyId) {}

  private final TreeSet<Resume> pending = new TreeSet<>();
  private final Map<Slot, Resume> index = new HashMap<>();
  private final String stepName;
  private long sequence;
  private KeyContext<?> current;
  private Instant processingNow = BoundedWindow.TIMESTAMP_MIN_VALUE;
  private Instant inputWatermark = BoundedWindow.TIMESTAMP_MIN_VALUE;
  private Instant outputWatermark = BoundedWindow.TIMESTAMP_MIN_VALUE;

  /** @param stepName the operator's PTransform, for error messages */
  ResumeTimers(String stepName) {
    this.stepName = stepName;
  }

  /** Makes {@code key} the key that {@link TimerInternals} calls refer to. */
  void setCurrentKey(KeyContext<?> key) {
    this.current = key;
  }

  /** Sets the processing time reported to the ProcessFn (the run loop's clock); never goes back. */
  void advanceProcessingTime(Instant now) {
    if (now.isAfter(processingNow)) {
      processingNow = now;
    }
  }

  /** Sets the input watermark and the output watermark (the input lowered by {@code hold}). */
  void advanceWatermarks(Instant input, Instant hold) {
    if (input.isAfter(inputWatermark)) {
      inputWatermark = input;
    }
    Instant output = hold.isBefore(inputWatermark) ? hold : inputWatermark;
    if (output.isAfter(outputWatermark)) {
      outputWatermark = output;
    }
  }

  /**
   * Removes and returns the earliest resume whose wake-up time is at or before {@code nowMs}, or
   * null.
   *
   * @param nowMs epoch ms; {@link Long#MAX_VALUE} makes every resume due
   */
  Resume pollDue(long nowMs) {
    if (pending.isEmpty() || pending.first().data.getTimestamp().getMillis() > nowMs) {
      return null;
    }
    Resume first = pending.pollFirst();
    index.remove(first.slot);
    return first;
  }

  /** Number of pending resumes. */
  int size() {
    return pending.size();
  }

  @Override
  public void setTimer(StateNamespace namespace, String timerId, String timerFamilyId, Instant target,
      Instant outputTimestamp, TimeDomain timeDomain) {
    setTimer(TimerData.of(timerId, timerFamilyId, namespace, target, outputTimestamp, timeDomain));
  }

  @Override
  public void setTimer(TimerData timer) {
    if (timer.getDomain() != TimeDomain.PROCESSING_TIME) {
      throw new UnsupportedOperationException("WeirRunner cannot run '" + stepName + "': a splittable DoFn's "
          + "ProcessFn set a " + timer.getDomain() + " timer; only processing-time resumes are supported");
    }
    Slot slot = new Slot(current.id(), timer.getNamespace(), timer.getTimerId(), timer.getTimerFamilyId());
    Resume resume = new Resume(current, timer, sequence++, slot);
    Resume old = index.put(slot, resume);
    if (old != null) {
      pending.remove(old);
    }
    pending.add(resume);
  }

  @Override
  public void deleteTimer(StateNamespace namespace, String timerId, String timerFamilyId, TimeDomain timeDomain) {
    deleteTimer(namespace, timerId, timerFamilyId);
  }

  @Override
  public void deleteTimer(StateNamespace namespace, String timerId, String timerFamilyId) {
    Resume old = index.remove(new Slot(current.id(), namespace, timerId, timerFamilyId));
    if (old != null) {
      pending.remove(old);
    }
  }

  @Override
  public void deleteTimer(TimerData timer) {
    deleteTimer(timer.getNamespace(), timer.getTimerId(), timer.getTimerFamilyId());
  }

  @Override
  public Instant currentProcessingTime() {
    return processingNow;
  }

  @Override
  public Instant currentSynchronizedProcessingTime() {
    return processingNow;
  }

  @Override
  public Instant currentInputWatermarkTime() {
    return inputWatermark;
  }

  @Override
  public Instant currentOutputWatermarkTime() {
    return outputWatermark;
  }
}
