package dev.weir.runner.source;

import java.io.IOException;
import java.io.Serializable;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.joda.time.Instant;

/**
 * Test source: one split of the longs {@code 0..count-1} (timestamp = value), whose watermark
 * reaches +infinity after the last one; a reader created from a mark resumes after its position. Its checkpoint marks record when they are taken and
 * finalized into a {@link Log} shared by id (the runner may serialize the source), together with
 * how many elements a downstream step had seen ({@link Log#emitted}) at finalization.
 *
 * <p>Threading: the reader runs on one container thread; the log is safe to read from the test.
 */
public final class FinalizationRecordingSource extends UnboundedSource<Long, FinalizationRecordingSource.Mark> {
  private static final long serialVersionUID = 1L;
  private static final Map<String, Log> LOGS = new ConcurrentHashMap<>();

  /** What happened to one source's marks. */
  public static final class Log {
    /** Elements the test's downstream step has seen; it increments this itself. */
    public final AtomicLong emitted = new AtomicLong();
    /** Per mark taken: the number of elements read before it. */
    public final List<Long> taken = new CopyOnWriteArrayList<>();
    /** Per finalization: {position of the mark, elements emitted downstream at that moment}. */
    public final List<long[]> finalized = new CopyOnWriteArrayList<>();
  }

  /** A mark: the number of elements read before it was taken. */
  public static final class Mark implements UnboundedSource.CheckpointMark, Serializable {
    private static final long serialVersionUID = 1L;
    final String id;
    final long position;

    Mark(String id, long position) {
      this.id = id;
      this.position = position;
    }

    @Override
    public void finalizeCheckpoint() {
      Log log = log(id);
      log.finalized.add(new long[] {position, log.emitted.get()});
    }
  }

  private final String id;
  private final long count;

  /** A source of {@code count} elements recording into the log {@link #log(String) log(id)}. */
  public FinalizationRecordingSource(String id, long count) {
    this.id = id;
    this.count = count;
    LOGS.put(id, new Log());
  }

  /** The log of the source created with {@code id}. */
  public static Log log(String id) {
    return LOGS.get(id);
  }

  @Override
  public List<FinalizationRecordingSource> split(int desiredNumSplits, PipelineOptions options) {
    return List.of(this);
  }

  @Override
  public UnboundedReader<Long> createReader(PipelineOptions options, Mark checkpointMark) {
    return new Reader(checkpointMark == null ? 0 : checkpointMark.position);
  }

  @Override
  public Coder<Mark> getCheckpointMarkCoder() {
    return SerializableCoder.of(Mark.class);
  }

  @Override
  public Coder<Long> getOutputCoder() {
    return VarLongCoder.of();
  }

  private final class Reader extends UnboundedReader<Long> {
    private long next; // elements read so far
    private Long current;

    /** A reader resuming after the first {@code position} elements (a mark's position). */
    Reader(long position) {
      this.next = position;
    }

    @Override
    public boolean start() throws IOException {
      return advance();
    }

    @Override
    public boolean advance() {
      if (next >= count) {
        current = null;
        return false;
      }
      current = next++;
      return true;
    }

    @Override
    public Long getCurrent() {
      if (current == null) {
        throw new NoSuchElementException();
      }
      return current;
    }

    @Override
    public Instant getCurrentTimestamp() {
      return new Instant(getCurrent());
    }

    @Override
    public Instant getWatermark() {
      return next >= count ? BoundedWindow.TIMESTAMP_MAX_VALUE : new Instant(Math.max(0, next - 1));
    }

    @Override
    public Mark getCheckpointMark() {
      log(id).taken.add(next);
      return new Mark(id, next);
    }

    @Override
    public FinalizationRecordingSource getCurrentSource() {
      return FinalizationRecordingSource.this;
    }

    @Override
    public void close() {}
  }
}
