package dev.weir.runner.timers;

import dev.weir.runner.state.ByteKey;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.state.KeyContext;
import dev.weir.runner.state.WatermarkHolds;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.TimerInternals;
import org.apache.beam.runners.core.TimerInternals.TimerDataCoderV2;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.ByteArrayCoder;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.joda.time.Instant;

/**
 * The timers of one keyed operator instance (one task), across all its keys, and the
 * {@link TimerInternals} that runners-core code sees for the <em>current</em> key.
 *
 * <p>Shape: event-time timers live in the container's storage, in a {@link TimerIndex}
 * (timestamp-ordered index plus a bounded heap of the earliest {@value #DEFAULT_HEAP_CAPACITY}
 * timers), so that millions of pending event-time timers (one garbage-collection timer per live
 * key and window is the common case) are store entries, not heap objects; a fired timer's key is
 * found again from its encoded bytes through the operator's key resolver. Processing-time and
 * synchronized-processing-time timers are few and short-lived: they stay on the heap (and go into
 * checkpoints through {@link #snapshotProcessingTimers}), one ordered
 * set of entries by (timestamp, insertion sequence) with a hash index by (encoded key,
 * namespace, timer id, family) so that setting a timer again replaces it. A timer id is unique
 * per (key, namespace, id, family) across domains: setting it in one domain removes it from the
 * other.
 *
 * <p>Firing: event-time timers fire when the input watermark is strictly after their timestamp
 * (Beam's rule), in index order: by timestamp, then key; processing-time timers when the clock
 * is strictly after their timestamp. The operator polls ready timers one at a time
 * ({@link #pollReadyEventTimer}), so timers set while firing are seen by the same loop and all
 * timers ready at a watermark fire in the one bundle that watermark opens.
 *
 * <p>Output holds (for user timers of stateful DoFns, {@link #KeyedTimers(boolean)}): every
 * pending timer's output timestamp is kept in a {@link WatermarkHolds} multiset (one entry per
 * distinct timestamp), so that the operator's output watermark waits for what the timer may still
 * output ({@link #outputHold()}); rebuilt from the index when an instance opens over committed
 * timers. runners-core's own GroupByKey timers need no holds (their state holds carry them).
 *
 * <p>Resume mode ({@link #forResumes}): the timers of a splittable DoFn's {@code ProcessFn}, which
 * only sets processing-time timers to resume checkpointed restrictions. No event-time index is
 * opened (resumes stay on the heap; a checkpoint encodes them with the other processing-time
 * timers, {@link #snapshotProcessingTimers}), an
 * event-time timer is rejected, and a resume is due when the clock has reached its time
 * ({@link #pollDueResume}: at, not strictly after), so a resume without delay is due at once.
 *
 * <p>Threading: confined to the task's container thread.
 */
@Internal
public final class KeyedTimers implements TimerInternals {
  /** Default number of event-time timers kept decoded in memory per operator instance. */
  public static final int DEFAULT_HEAP_CAPACITY = 1024;

  /** A pending (or just polled) timer. */
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

  /** Identity of a processing-time timer; keys compare by encoding. */
  private record Slot(ByteKey key, StateNamespace namespace, String timerId, String familyId) {}

  private final TreeSet<Entry> processingTime = new TreeSet<>();
  private final Map<Slot, Entry> index = new HashMap<>();
  /** Output timestamps of pending timers, or null when timers do not hold the output watermark. */
  private final WatermarkHolds outputHolds;
  /** In resume mode, the operator's PTransform (for the error on an event-time timer); else null. */
  private final String resumesOf;
  private TimerIndex eventTime;
  private Function<byte[], KeyContext<?>> keyResolver;
  private long sequence;
  private KeyContext<?> current;
  private Instant inputWatermark = BoundedWindow.TIMESTAMP_MIN_VALUE;
  private Instant outputWatermark = BoundedWindow.TIMESTAMP_MIN_VALUE;
  /** Applied to every timer polled to fire ({@link #markFirings}); none by default. */
  private java.util.function.UnaryOperator<TimerData> firingMark;
  /** Set from the job's clock by the operator at open, then by each processing-time tick. */
  private Instant processingNow = BoundedWindow.TIMESTAMP_MIN_VALUE;

  /** Timers that do not hold the output watermark (runners-core's GroupByKey). */
  public KeyedTimers() {
    this(false);
  }

  /**
   * @param holdOutput whether each pending timer holds the output watermark at its output
   *     timestamp (user timers of stateful DoFns)
   */
  public KeyedTimers(boolean holdOutput) {
    this(holdOutput, null);
  }

  private KeyedTimers(boolean holdOutput, String resumesOf) {
    this.outputHolds = holdOutput ? new WatermarkHolds() : null;
    this.resumesOf = resumesOf;
  }

  /**
   * Timers in resume mode (see the class comment): processing-time only, on the heap, no
   * {@link #open} needed.
   *
   * @param stepName the splittable DoFn's PTransform, for the error an event-time timer raises
   */
  public static KeyedTimers forResumes(String stepName) {
    return new KeyedTimers(false, stepName);
  }

  /**
   * Opens the event-time index of {@code stepName}'s task {@code partition} in {@code state} and
   * loads any committed timers. Must be called once before any timer is set.
   *
   * @param stepName the operator's PTransform (unique full name)
   * @param partition the task's partition of its stage
   * @param windowCoder the operator's window coder (decodes namespaces of stored timers)
   * @param keyResolver finds or recreates the key context of encoded key bytes (a fired timer's key)
   * @param heapCapacity event-time timers kept decoded in memory
   */
  public void open(ContainerState state, String stepName, int partition, Coder<? extends BoundedWindow> windowCoder,
      Function<byte[], KeyContext<?>> keyResolver, int heapCapacity) {
    this.keyResolver = keyResolver;
    this.eventTime = new TimerIndex(state, stepName, partition, windowCoder, heapCapacity);
    eventTime.open(outputHolds == null ? null : ms -> outputHolds.replace(null, new Instant(ms)));
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
    TimerIndex.Pending first = eventTime.peek();
    return first == null ? null : first.data().getTimestamp();
  }

  /**
   * Whether an event-time timer is strictly before the input watermark, i.e. whether
   * {@link #pollReadyEventTimer} would return one.
   */
  public boolean hasReadyEventTimer() {
    TimerIndex.Pending first = eventTime.peek();
    return first != null && first.data().getTimestamp().getMillis() < inputWatermark.getMillis();
  }

  /** Removes and returns the earliest processing-time timer whatever its time, or null. */
  public Entry pollAnyProcessingTimer() {
    return processingTime.isEmpty() ? null : remove(processingTime.pollFirst());
  }

  /** Makes {@code key} the key that {@link TimerInternals} calls refer to. */
  public void setCurrentKey(KeyContext<?> key) {
    this.current = key;
  }

  /**
   * Sets the input watermark (what makes event-time timers ready) and leaves the output watermark
   * where it is: timers ready at a new watermark fire while runners-core still sees the output
   * watermark of before the advance (as on Beam's Direct runner), so that a pane fired by the
   * end-of-window timer is on time, not late. Call {@link #advanceInputWatermark(Instant, Instant)}
   * after firing them.
   */
  public void setInputWatermark(Instant watermark) {
    if (watermark.isAfter(inputWatermark)) {
      inputWatermark = watermark;
    }
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

  /**
   * Applies {@code mark} to every timer polled to fire, before the operator sees it: the operator
   * marks the timers its task fires because the job is draining (Beam 2.73's
   * {@code CausedByDrain}, which runners-core hands to {@code @OnTimer} and a GroupByKey to its
   * panes). {@code mark} returns its argument when it has nothing to add.
   */
  public void markFirings(java.util.function.UnaryOperator<TimerData> mark) {
    this.firingMark = mark;
  }

  /**
   * Removes and returns the earliest event-time timer before the input watermark, or null. Its
   * key context comes from the key resolver (a polled entry has no sequence or slot).
   */
  public Entry pollReadyEventTimer() {
    TimerIndex.Pending ready = eventTime.pollBefore(inputWatermark.getMillis());
    if (ready == null) {
      return null;
    }
    if (outputHolds != null) {
      outputHolds.replace(new Instant(TimerIndex.outputMillis(ready.data())), null);
    }
    return new Entry(keyResolver.apply(ready.keyBytes()), caused(ready.data()), 0, null);
  }

  private TimerData caused(TimerData timer) {
    return firingMark == null ? timer : firingMark.apply(timer);
  }

  /**
   * Removes and returns the earliest processing-time timer strictly before now, or null. Strict,
   * as for event time and as runners-core's in-memory timers: a trigger set at the current time
   * (runners-core's synchronized-processing-time continuation triggers) checks that the clock has
   * moved past it, and would be consumed without firing if polled at the same instant.
   */
  public Entry pollReadyProcessingTimer() {
    if (processingTime.isEmpty() || !processingNow.isAfter(processingTime.first().data.getTimestamp())) {
      return null;
    }
    Entry polled = remove(processingTime.pollFirst());
    TimerData marked = caused(polled.data);
    return marked == polled.data ? polled : new Entry(polled.key, marked, polled.sequence, polled.slot);
  }

  /** Whether {@link #pollReadyProcessingTimer()} would return a timer. */
  public boolean hasReadyProcessingTimer() {
    return !processingTime.isEmpty() && processingNow.isAfter(processingTime.first().data.getTimestamp());
  }

  /**
   * Resume mode: removes and returns the earliest processing-time timer at or before
   * {@code nowMs}, or null.
   *
   * @param nowMs epoch ms; {@link Long#MAX_VALUE} makes every timer due
   */
  public Entry pollDueResume(long nowMs) {
    if (processingTime.isEmpty() || processingTime.first().data.getTimestamp().getMillis() > nowMs) {
      return null;
    }
    return remove(processingTime.pollFirst());
  }

  /** Number of pending timers of all keys and domains. */
  public long size() {
    return eventTime == null ? index.size() : index.size() + eventTime.size();
  }

  /**
   * The pending processing-time timers, encoded for a checkpoint (event-time timers need no
   * snapshot: they are in the store): a count, then per timer, in firing order, its encoded key
   * ({@code ByteArrayCoder}) and its {@link TimerData} ({@code TimerDataCoderV2} over
   * {@code windowCoder}). Null if there are none.
   *
   * @throws IllegalStateException if a namespace's window cannot be encoded
   */
  public byte[] snapshotProcessingTimers(Coder<? extends BoundedWindow> windowCoder) {
    if (processingTime.isEmpty()) {
      return null;
    }
    TimerDataCoderV2 timerCoder = TimerDataCoderV2.of(windowCoder);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try {
      VarIntCoder.of().encode(processingTime.size(), bytes);
      for (Entry entry : processingTime) {
        ByteArrayCoder.of().encode(entry.key.id().bytes(), bytes);
        timerCoder.encode(entry.data, bytes);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode a processing-time timer for a checkpoint", e);
    }
    return bytes.toByteArray();
  }

  /**
   * Sets again the processing-time timers of a {@link #snapshotProcessingTimers} snapshot (at
   * restore, before anything else touches the timers), each for the key {@code keyResolver} finds
   * for its bytes; the current key is unset afterwards.
   *
   * @param owns whether this instance owns a timer's encoded key (after a rescaled restore, every
   *     old instance's timers are offered); others are skipped
   * @throws IllegalStateException naming {@code what} if the snapshot cannot be decoded
   */
  public void restoreProcessingTimers(byte[] snapshot, Coder<? extends BoundedWindow> windowCoder,
      Function<byte[], KeyContext<?>> keyResolver, String what, java.util.function.Predicate<byte[]> owns) {
    if (snapshot == null) {
      return;
    }
    TimerDataCoderV2 timerCoder = TimerDataCoderV2.of(windowCoder);
    ByteArrayInputStream in = new ByteArrayInputStream(snapshot);
    try {
      int count = VarIntCoder.of().decode(in);
      for (int i = 0; i < count; i++) {
        byte[] key = ByteArrayCoder.of().decode(in);
        TimerData timer = timerCoder.decode(in);
        if (!owns.test(key)) {
          continue;
        }
        setCurrentKey(keyResolver.apply(key));
        setTimer(timer);
      }
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("cannot restore the processing-time timers of " + what
          + " from the checkpoint (" + e + ")", e);
    } finally {
      current = null;
    }
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
    release(entry.data);
    return entry;
  }

  private void hold(TimerData data) {
    if (outputHolds != null && data.getOutputTimestamp() != null) {
      outputHolds.replace(null, data.getOutputTimestamp());
    }
  }

  private void release(TimerData data) {
    if (outputHolds != null && data.getOutputTimestamp() != null) {
      outputHolds.replace(data.getOutputTimestamp(), null);
    }
  }

  @Override
  public void setTimer(StateNamespace namespace, String timerId, String timerFamilyId, Instant target,
      Instant outputTimestamp, TimeDomain timeDomain) {
    setTimer(TimerData.of(timerId, timerFamilyId, namespace, target, outputTimestamp, timeDomain));
  }

  @Override
  public void setTimer(TimerData timer) {
    if (resumesOf != null && timer.getDomain() != TimeDomain.PROCESSING_TIME) {
      throw new UnsupportedOperationException("WeirRunner cannot run '" + resumesOf + "': a splittable DoFn's "
          + "ProcessFn set a " + timer.getDomain() + " timer; only processing-time resumes are supported");
    }
    if (timer.getDomain() == TimeDomain.EVENT_TIME) {
      deleteProcessingTimer(timer.getNamespace(), timer.getTimerId(), timer.getTimerFamilyId());
      long[] old = eventTime.set(current.id().bytes(), timer);
      long out = TimerIndex.outputMillis(timer);
      if (outputHolds != null && (old == null || old[1] != out)) {
        if (old != null) {
          outputHolds.replace(new Instant(old[1]), null);
        }
        outputHolds.replace(null, new Instant(out));
      }
      return;
    }
    deleteEventTimer(timer.getNamespace(), timer.getTimerId(), timer.getTimerFamilyId());
    Slot slot = new Slot(current.id(), timer.getNamespace(), timer.getTimerId(), timer.getTimerFamilyId());
    Entry entry = new Entry(current, timer, sequence++, slot);
    Entry old = index.put(slot, entry);
    if (old != null) {
      processingTime.remove(old);
      release(old.data);
      old.key.pendingTimers--;
    }
    current.pendingTimers++;
    processingTime.add(entry);
    hold(timer);
  }

  @Override
  public void deleteTimer(StateNamespace namespace, String timerId, String timerFamilyId, TimeDomain timeDomain) {
    deleteTimer(namespace, timerId, timerFamilyId);
  }

  @Override
  public void deleteTimer(StateNamespace namespace, String timerId, String timerFamilyId) {
    deleteEventTimer(namespace, timerId, timerFamilyId);
    deleteProcessingTimer(namespace, timerId, timerFamilyId);
  }

  private void deleteEventTimer(StateNamespace namespace, String timerId, String timerFamilyId) {
    if (eventTime == null) {
      return; // resume mode: no event-time timers
    }
    long out = eventTime.delete(current.id().bytes(), namespace, timerId, timerFamilyId);
    if (out != Long.MIN_VALUE && outputHolds != null) {
      outputHolds.replace(new Instant(out), null);
    }
  }

  private void deleteProcessingTimer(StateNamespace namespace, String timerId, String timerFamilyId) {
    if (index.isEmpty()) {
      return; // the common case: no processing-time timers, no slot allocated
    }
    Entry old = index.remove(new Slot(current.id(), namespace, timerId, timerFamilyId));
    if (old != null) {
      processingTime.remove(old);
      old.key.pendingTimers--;
      release(old.data);
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
