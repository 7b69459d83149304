package dev.weir.runner.executor;

import dev.weir.runner.time.JobClock;
import dev.weir.runner.time.ManualJobClock;
import dev.weir.runner.translation.SourceSpec;
import java.util.Iterator;
import java.util.List;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.values.TimestampedValue;
import java.io.IOException;
import org.apache.beam.sdk.io.BoundedSource;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.metrics.MetricsContainer;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.samza.Partition;
import org.apache.samza.system.IncomingMessageEnvelope;
import org.apache.samza.system.SystemStreamPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One split of a source stage, exposed to its task as an input partition (the role a Samza
 * {@code SystemConsumer} partition plays): the reader advances inside the container's run loop,
 * one element per {@link #poll()}, never blocking. After the data comes a watermark at +infinity
 * and an end-of-stream.
 *
 * <p>Watermarks: bounded sources hold the watermark at -infinity until they are exhausted;
 * unbounded readers are asked for their watermark when they have no data and every
 * {@value #WATERMARK_EVERY_ELEMENTS} elements, and a watermark envelope is emitted when it advanced.
 * Checkpoint marks are not taken yet (no durable commit of source positions in this slice).
 *
 * <p>A {@code TestStream} replays its events ({@link TestStreamPartition}): each one only once the
 * job is quiescent, watermark events as source watermarks, processing-time events as advances of
 * the job's {@link ManualJobClock}.
 *
 * <p>Threading: confined to the consuming container's thread (reader calls run there, with the
 * Read step's metrics container current).
 */
public abstract class SourcePartition implements InputPartition {
  private static final Logger LOG = LoggerFactory.getLogger(SourcePartition.class);
  static final long MAX_WATERMARK_MS = BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis();
  static final int WATERMARK_EVERY_ELEMENTS = 1000;

  private enum Phase { DATA, FINAL_WATERMARK, END_OF_STREAM, DONE }

  private final SystemStreamPartition ssp;
  private final String taskName;
  private Phase phase = Phase.DATA;
  SourceContext context;

  SourcePartition(String streamName, int partition, String taskName) {
    this.ssp = new SystemStreamPartition("weir-source", streamName, new Partition(partition));
    this.taskName = taskName;
  }

  /**
   * Creates the partition for split {@code partition} of {@code spec}.
   *
   * @param clock the job's clock; a test stream advances it, so it must then be a {@link ManualJobClock}
   * @param quiescence the job's quiescence tracker; required for a test stream, else may be null
   */
  public static SourcePartition create(SourceSpec spec, String streamName, int partition, String taskName,
      JobClock clock, Quiescence quiescence) {
    if (spec instanceof SourceSpec.Test t) {
      if (!(clock instanceof ManualJobClock manual) || quiescence == null) {
        throw new IllegalArgumentException("a test stream needs a manual clock and a quiescence tracker");
      }
      return new TestStreamPartition(t.events(), streamName, partition, taskName, manual, quiescence);
    } else if (spec instanceof SourceSpec.Impulse) {
      return new ImpulsePartition(streamName, partition, taskName);
    } else if (spec instanceof SourceSpec.Empty) {
      return new EmptyPartition(streamName, partition, taskName);
    } else if (spec instanceof SourceSpec.Bounded b) {
      return new BoundedPartition(b.splits().get(partition), streamName, partition, taskName);
    } else if (spec instanceof SourceSpec.Unbounded u) {
      return new UnboundedPartition(u.splits().get(partition), streamName, partition, taskName);
    }
    throw new IllegalArgumentException("unknown source " + spec);
  }

  @Override
  public SystemStreamPartition ssp() {
    return ssp;
  }

  @Override
  public int producers() {
    return 1;
  }

  @Override
  public void open(SourceContext context) {
    this.context = context;
    MetricsContainer previous = context.metrics().swap(context.stepMetrics());
    try {
      openReader();
    } catch (IOException e) {
      throw new IllegalStateException("cannot open a reader for " + ssp.getStream(), e);
    } finally {
      context.metrics().swap(previous);
    }
  }

  @Override
  public final IncomingMessageEnvelope poll() {
    switch (phase) {
      case DATA:
        MetricsContainer previous = context.metrics().swap(context.stepMetrics());
        String previousSpan = context.spans().enter(context.stepName());
        try {
          IncomingMessageEnvelope next = next();
          if (next != null || !exhausted()) {
            return next;
          }
        } catch (IOException e) {
          throw new IllegalStateException("reading " + ssp.getStream() + " failed", e);
        } finally {
          context.spans().exit(previousSpan);
          context.metrics().swap(previous);
        }
        phase = Phase.FINAL_WATERMARK;
        // fall through
      case FINAL_WATERMARK:
        phase = Phase.END_OF_STREAM;
        return watermark(MAX_WATERMARK_MS);
      case END_OF_STREAM:
        phase = Phase.DONE;
        return new IncomingMessageEnvelope(ssp, null, null, new ProducerEndOfStream(0, taskName), 0, 0L, 0L);
      default:
        return null;
    }
  }

  @Override
  public void close() {
    MetricsContainer previous = context == null ? null : context.metrics().swap(context.stepMetrics());
    try {
      closeReader();
    } catch (IOException | RuntimeException e) {
      LOG.warn("Closing the reader of {} failed", ssp, e);
    } finally {
      if (context != null) {
        context.metrics().swap(previous);
      }
    }
  }

  IncomingMessageEnvelope element(Object windowedValue) {
    return new IncomingMessageEnvelope(ssp, null, null, windowedValue, 0, 0L, 0L);
  }

  IncomingMessageEnvelope watermark(long timestampMs) {
    return new IncomingMessageEnvelope(ssp, null, null, new ProducerWatermark(timestampMs, 0, taskName), 0, 0L, 0L);
  }

  void openReader() throws IOException {}

  void closeReader() throws IOException {}

  /** The next element or source watermark envelope, or null if none now. */
  abstract IncomingMessageEnvelope next() throws IOException;

  /** Whether the source has nothing more to give, ever. */
  abstract boolean exhausted();

  /** Beam's Impulse: one empty byte array. */
  static final class ImpulsePartition extends SourcePartition {
    private boolean emitted;

    ImpulsePartition(String stream, int partition, String task) {
      super(stream, partition, task);
    }

    @Override
    IncomingMessageEnvelope next() {
      if (emitted) {
        return null;
      }
      emitted = true;
      return element(WindowedValues.valueInGlobalWindow(new byte[0]));
    }

    @Override
    boolean exhausted() {
      return emitted;
    }
  }

  /** No data at all. */
  static final class EmptyPartition extends SourcePartition {
    EmptyPartition(String stream, int partition, String task) {
      super(stream, partition, task);
    }

    @Override
    IncomingMessageEnvelope next() {
      return null;
    }

    @Override
    boolean exhausted() {
      return true;
    }
  }

  /** A bounded source split. */
  static final class BoundedPartition extends SourcePartition {
    private final BoundedSource<?> source;
    private BoundedSource.BoundedReader<?> reader;
    private boolean started;
    private boolean done;

    BoundedPartition(BoundedSource<?> source, String stream, int partition, String task) {
      super(stream, partition, task);
      this.source = source;
    }

    @Override
    void openReader() throws IOException {
      reader = source.createReader(context.options());
    }

    @Override
    IncomingMessageEnvelope next() throws IOException {
      if (done) {
        return null;
      }
      boolean available = started ? reader.advance() : reader.start();
      started = true;
      if (!available) {
        done = true;
        return null;
      }
      return element(WindowedValues.timestampedValueInGlobalWindow(reader.getCurrent(), reader.getCurrentTimestamp()));
    }

    @Override
    boolean exhausted() {
      return done;
    }

    @Override
    void closeReader() throws IOException {
      if (reader != null) {
        reader.close();
        reader = null;
      }
    }
  }

  /** An unbounded source split; ends when its watermark reaches +infinity. */
  static final class UnboundedPartition extends SourcePartition {
    private final UnboundedSource<?, ?> source;
    private UnboundedSource.UnboundedReader<?> reader;
    private boolean started;
    private boolean done;
    private long lastWatermarkMs = BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis();
    private int sinceWatermark;

    UnboundedPartition(UnboundedSource<?, ?> source, String stream, int partition, String task) {
      super(stream, partition, task);
      this.source = source;
    }

    @Override
    void openReader() throws IOException {
      reader = source.createReader(context.options(), null);
    }

    @Override
    IncomingMessageEnvelope next() throws IOException {
      if (done) {
        return null;
      }
      if (sinceWatermark >= WATERMARK_EVERY_ELEMENTS) {
        sinceWatermark = 0;
        IncomingMessageEnvelope wm = advancedWatermark();
        if (wm != null) {
          return wm;
        }
      }
      boolean available = started ? reader.advance() : reader.start();
      started = true;
      if (available) {
        sinceWatermark++;
        return element(WindowedValues.timestampedValueInGlobalWindow(reader.getCurrent(), reader.getCurrentTimestamp()));
      }
      return advancedWatermark();
    }

    private IncomingMessageEnvelope advancedWatermark() {
      long wm = reader.getWatermark().getMillis();
      if (wm >= MAX_WATERMARK_MS) {
        done = true;
        return null;
      }
      if (wm > lastWatermarkMs) {
        lastWatermarkMs = wm;
        return watermark(wm);
      }
      return null;
    }

    @Override
    boolean exhausted() {
      return done;
    }

    @Override
    void closeReader() throws IOException {
      if (reader != null) {
        reader.close();
        reader = null;
      }
    }
  }

  /**
   * Beam's {@code TestStream}, replayed in order: before each event the partition waits (polls
   * return null) until the job is quiescent ({@link Quiescence}), so that everything the earlier
   * events caused has been processed; then an element event emits its elements, a watermark event
   * one source watermark, and a processing-time event advances the job's manual clock (the run
   * loops fire the timers it made ready before the next event is taken).
   */
  static final class TestStreamPartition extends SourcePartition {
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
    IncomingMessageEnvelope next() {
      while (true) {
        if (elements != null) {
          if (elements.hasNext()) {
            TimestampedValue<?> value = elements.next();
            return element(WindowedValues.timestampedValueInGlobalWindow(value.getValue(), value.getTimestamp()));
          }
          elements = null;
        }
        if (next >= events.size() || !probe.isQuiescent(clock.millis())) {
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

    @Override
    boolean exhausted() {
      return next >= events.size() && elements == null;
    }
  }
}
