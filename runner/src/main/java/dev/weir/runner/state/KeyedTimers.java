package dev.weir.runner.state;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.TimerInternals;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.joda.time.Instant;

/**
 * The timers of one keyed operator instance (one task), across all its keys, and the
 * {@link TimerInternals} that runners-core code sees for the <em>current</em> key.
 *
 * <p>Shape: one ordered set per time domain (event time; processing and synchronized processing
 * time share one) of entries ordered by (timestamp, insertion sequence), plus a hash index by
 * (key, namespace, timer id, family) so that setting a timer again replaces it and deletes are
 * O(log n). Heap-only for now: all pending timers are objects on the heap.
 *
 * <p>Firing: event-time timers fire when the input watermark is strictly after their timestamp
 * (Beam's rule); processing-time timers when the clock reached their timestamp. The operator
 * polls ready timers one at a time ({@link #pollReadyEventTimer}), so timers set while firing are
 * seen by the same loop.
 *
 * <p>Output holds (for user timers of stateful DoFns, {@link #KeyedTimers(boolean)}): every
 * pending timer's output timestamp is kept in a {@link WatermarkHolds} multiset, so that the
 * operator's output watermark waits for what the timer may still output ({@link #outputHold()}).
 * runners-core's own GroupByKey timers need no holds (their state holds carry them).
 *
 * <p>Threading: confined to the task's container thread.
 */
public final class KeyedTimers implements TimerInternals {

  /** A pending timer. */
  public static final class Entry implements Comparable<Entry> {
    final KeyContext<?> key;
    final TimerData data;
    final long sequence;
    final Slot slot;

    Entry(KeyContext<?> key, TimerData data, long sequence, Slot slot) {
      this.key = key;
      this.data = data;
      this.sequence = sequence;
      this.slot = slot;
    }

    /** The key the timer belongs to. */
    public KeyContext<?> key() {
      return key;
    }

    /** Beam's description of the timer. */
    public TimerData data() {
      return data;
    }

    @Override
    public int compareTo(Entry o) {
      int c = data.getTimestamp().compareTo(o.data.getTimestamp());
      return c != 0 ? c : Long.compare(sequence, o.sequence);
    }
  }

  private record Slot(KeyContext<?> key, StateNamespace namespace, String timerId, String familyId) {
    // KeyContext has identity equality, which is what we want.
  }

  private final TreeSet<Entry> eventTime = new TreeSet<>();
  private final TreeSet<Entry> processingTime = new TreeSet<>();
  private final Map<Slot, Entry> index = new HashMap<>();
  /** Output timestamps of pending timers, or null when timers do not hold the output watermark. */
  private final WatermarkHolds outputHolds;
  private long sequence;
  private KeyContext<?> current;
  private Instant inputWatermark = BoundedWindow.TIMESTAMP_MIN_VALUE;
  private Instant outputWatermark = BoundedWindow.TIMESTAMP_MIN_VALUE;
  private Instant processingNow = Instant.now();

  /** Timers that do not hold the output watermark (runners-core's GroupByKey). */
  public KeyedTimers() {
    this(false);
  }

  /**
   * @param holdOutput whether each pending timer holds the output watermark at its output
   *     timestamp (user timers of stateful DoFns)
   */
  public KeyedTimers(boolean holdOutput) {
    this.outputHolds = holdOutput ? new WatermarkHolds() : null;
  }

  /**
   * The earliest output timestamp of a pending timer, or {@link BoundedWindow#TIMESTAMP_MAX_VALUE}
   * (always, when timers do not hold the output watermark).
   */
  public Instant outputHold() {
    return outputHolds == null ? BoundedWindow.TIMESTAMP_MAX_VALUE : outputHolds.min();
  }

  /** The earliest pending event-time timer's timestamp, or null if there is none. */
  public Instant nextEventTime() {
    return eventTime.isEmpty() ? null : eventTime.first().data.getTimestamp();
  }

  /** Removes and returns the earliest processing-time timer whatever its time, or null. */
  public Entry pollAnyProcessingTimer() {
    return processingTime.isEmpty() ? null : remove(processingTime.pollFirst());
  }

  /** Makes {@code key} the key that {@link TimerInternals} calls refer to. */
  public void setCurrentKey(KeyContext<?> key) {
    this.current = key;
  }

  /** Sets the input watermark reported to runners-core; the output watermark follows it. */
  public void advanceInputWatermark(Instant watermark) {
    advanceInputWatermark(watermark, BoundedWindow.TIMESTAMP_MAX_VALUE);
  }

  /**
   * Sets the input watermark reported to runners-core and the output watermark to the input
   * watermark lowered by {@code hold} (the operator's earliest watermark hold); the output
   * watermark never goes back.
   */
  public void advanceInputWatermark(Instant watermark, Instant hold) {
    if (watermark.isAfter(inputWatermark)) {
      inputWatermark = watermark;
    }
    Instant output = hold.isBefore(inputWatermark) ? hold : inputWatermark;
    if (output.isAfter(outputWatermark)) {
      outputWatermark = output;
    }
  }

  /** Sets the processing time reported to runners-core (the run loop's clock). */
  public void advanceProcessingTime(Instant now) {
    if (now.isAfter(processingNow)) {
      processingNow = now;
    }
  }

  /** Removes and returns the earliest event-time timer before the input watermark, or null. */
  public Entry pollReadyEventTimer() {
    if (eventTime.isEmpty() || !inputWatermark.isAfter(eventTime.first().data.getTimestamp())) {
      return null;
    }
    return remove(eventTime.pollFirst());
  }

  /** Removes and returns the earliest processing-time timer at or before now, or null. */
  public Entry pollReadyProcessingTimer() {
    if (processingTime.isEmpty() || processingNow.isBefore(processingTime.first().data.getTimestamp())) {
      return null;
    }
    return remove(processingTime.pollFirst());
  }

  /** Number of pending timers of all keys and domains. */
  public int size() {
    return index.size();
  }

  /** Drops every pending processing-time timer (at the end of input they can no longer matter). */
  public void clearProcessingTimers() {
    while (!processingTime.isEmpty()) {
      remove(processingTime.pollFirst());
    }
  }

  private Entry remove(Entry entry) {
    index.remove(entry.slot);
    entry.key.pendingTimers--;
    release(entry);
    return entry;
  }

  private void hold(Entry entry) {
    if (outputHolds != null && entry.data.getOutputTimestamp() != null) {
      outputHolds.replace(null, entry.data.getOutputTimestamp());
    }
  }

  private void release(Entry entry) {
    if (outputHolds != null && entry.data.getOutputTimestamp() != null) {
      outputHolds.replace(entry.data.getOutputTimestamp(), null);
    }
  }

  @Override
  public void setTimer(StateNamespace namespace, String timerId, String timerFamilyId, Instant target,
      Instant outputTimestamp, TimeDomain timeDomain) {
    setTimer(TimerData.of(timerId, timerFamilyId, namespace, target, outputTimestamp, timeDomain));
  }

  @Override
  public void setTimer(TimerData timer) {
    Slot slot = new Slot(current, timer.getNamespace(), timer.getTimerId(), timer.getTimerFamilyId());
    Entry entry = new Entry(current, timer, sequence++, slot);
    Entry old = index.put(slot, entry);
    if (old != null) {
      queue(old.data.getDomain()).remove(old);
      release(old);
    } else {
      current.pendingTimers++;
    }
    queue(timer.getDomain()).add(entry);
    hold(entry);
  }

  @Override
  public void deleteTimer(StateNamespace namespace, String timerId, String timerFamilyId, TimeDomain timeDomain) {
    deleteTimer(namespace, timerId, timerFamilyId);
  }

  @Override
  public void deleteTimer(StateNamespace namespace, String timerId, String timerFamilyId) {
    Entry old = index.remove(new Slot(current, namespace, timerId, timerFamilyId));
    if (old != null) {
      queue(old.data.getDomain()).remove(old);
      current.pendingTimers--;
      release(old);
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

  private TreeSet<Entry> queue(TimeDomain domain) {
    return domain == TimeDomain.EVENT_TIME ? eventTime : processingTime;
  }
}
