package dev.weir.runner.source;

import dev.weir.runner.time.Quiescence;

import dev.weir.runner.time.ManualJobClock;
import java.util.Iterator;
import java.util.List;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.WindowedValues;

/**
 * Beam's {@code TestStream}, replayed in order: before each event the partition waits (polls
 * return null) until the job is quiescent ({@link Quiescence}), so that everything the earlier
 * events caused has been processed; then an element event emits its elements, a watermark event
 * one source watermark, and a processing-time event advances the job's manual clock (the run
 * loops fire the timers it made ready before the next event is taken).
 *
 * <p>Bundles: an element event's elements are emitted back to back and followed by
 * {@link #END_OF_EVENT}, at which the source's task ends its bundle; the tasks downstream end
 * theirs only once the job settled after the event ({@link Quiescence#replaying()}). So each
 * {@code addElements} group is one bundle through the pipeline, as Beam's Direct runner makes it
 * (unless it has more than {@code --maxBundleSize} elements).
 *
 * <p>Threading: confined to the consuming container's thread.
 */
final class TestStreamPartition extends SourcePartition {
  private final List<? extends TestStream.Event<?>> events;
  private final ManualJobClock clock;
  private final Quiescence.Probe probe;
  private int next;
  private Iterator<? extends TimestampedValue<?>> elements;
  private long lastWatermarkMs = BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis();

  TestStreamPartition(List<? extends TestStream.Event<?>> events, String stream, int partition, String task,
      ManualJobClock clock, Quiescence quiescence) {
    super(stream, partition, task);
    this.events = events;
    this.clock = clock;
    this.probe = quiescence.probe();
  }

  @Override
  Object next() {
    while (true) {
      if (elements != null) {
        if (elements.hasNext()) {
          TimestampedValue<?> value = elements.next();
          return WindowedValues.timestampedValueInGlobalWindow(value.getValue(), value.getTimestamp());
        }
        elements = null;
        return END_OF_EVENT; // the source's task ends the event's bundle here
      }
      if (next >= events.size()) {
        probe.finish(); // the last event is out: bundles may end by time again
        return null;
      }
      if (!probe.isQuiescent(clock.millis())) {
        return null;
      }
      TestStream.Event<?> event = events.get(next++);
      if (event instanceof TestStream.ElementEvent<?> e) {
        elements = e.getElements().iterator();
      } else if (event instanceof TestStream.WatermarkEvent<?> w) {
        long wm = Math.min(w.getWatermark().getMillis(), MAX_WATERMARK_MS);
        if (wm > lastWatermarkMs) {
          lastWatermarkMs = wm;
          return watermark(wm);
        }
      } else if (event instanceof TestStream.ProcessingTimeEvent<?> t) {
        clock.advance(t.getProcessingTimeAdvance().getMillis());
        return null; // the next event waits for the ticks at the new time
      } else {
        throw new IllegalStateException("unknown test stream event " + event);
      }
    }
  }

  /** A partition closed before its last event no longer holds bundles to events. */
  @Override
  void closeReader() {
    probe.finish();
  }

  @Override
  boolean exhausted() {
    return next >= events.size() && elements == null;
  }
}
