package dev.weir.runner.checkpoint;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.joda.time.Instant;

/**
 * Deterministic unbounded test source: the longs {@code 0..count-1}, element {@code i} with
 * event timestamp {@code i} ms, read by a fixed number of splits (split {@code s} reads
 * {@code s, s + splits, s + 2*splits, ...}), each at a bounded rate. Unlike
 * {@code GenerateSequence}, what is read and its timestamps never depend on the wall clock; only
 * how fast it is read does (the pacing, so that a test can kill a job in the middle).
 *
 * <p>A split's watermark is the timestamp of the last element it emitted (the next one is later),
 * {@code TIMESTAMP_MIN_VALUE} before the first one, and +infinity once it has emitted its last.
 * Its {@link Mark} holds the split's index and the next index it would read, encoded with
 * {@link MarkCoder} (no Java serialization); a reader created from a mark resumes exactly there,
 * and refuses a mark of another split (so a runner that hands marks to the wrong split fails
 * loudly instead of reading the wrong elements).
 *
 * <p>With the system property {@code weir.crash.announce=true} (set by
 * {@link CrashablePipelineMain}) every reader prints {@code READER split=<s> from=<index>} to
 * standard output when it is created, so a crash test sees where a restarted job resumed.
 *
 * <p>Threading: a reader is used by one thread at a time (the runner's contract); the source is
 * immutable.
 */
public final class PacedIndexSource extends UnboundedSource<Long, PacedIndexSource.Mark> {
  private static final long serialVersionUID = 1L;

  private final long count;
  private final long elementsPerSecond;
  private final int splits;
  private final int split; // -1: the unsplit source

  /**
   * The source of {@code 0..count-1} read by {@code splits} splits at {@code elementsPerSecond}
   * in total (0: as fast as the runner reads).
   *
   * @throws IllegalArgumentException if {@code count < 0}, {@code elementsPerSecond < 0} or
   *     {@code splits < 1}
   */
  public PacedIndexSource(long count, long elementsPerSecond, int splits) {
    this(count, elementsPerSecond, splits, -1);
  }

  private PacedIndexSource(long count, long elementsPerSecond, int splits, int split) {
    if (count < 0 || elementsPerSecond < 0 || splits < 1) {
      throw new IllegalArgumentException("count >= 0, elementsPerSecond >= 0 and splits >= 1 expected, got "
          + count + ", " + elementsPerSecond + ", " + splits);
    }
    this.count = count;
    this.elementsPerSecond = elementsPerSecond;
    this.splits = splits;
    this.split = split;
  }

  /** Always exactly {@code splits} splits, whatever the runner asks for (determinism first). */
  @Override
  public List<PacedIndexSource> split(int desiredNumSplits, PipelineOptions options) {
    if (split >= 0) {
      return List.of(this);
    }
    List<PacedIndexSource> result = new ArrayList<>(splits);
    for (int s = 0; s < splits; s++) {
      result.add(new PacedIndexSource(count, elementsPerSecond, splits, s));
    }
    return result;
  }

  @Override
  public Reader createReader(PipelineOptions options, Mark checkpointMark) {
    int self = Math.max(split, 0);
    long next = self;
    if (checkpointMark != null) {
      if (checkpointMark.split != self) {
        throw new IllegalArgumentException("checkpoint mark of split " + checkpointMark.split
            + " given to split " + self + " of " + this);
      }
      next = checkpointMark.next;
    }
    if (Boolean.getBoolean("weir.crash.announce")) {
      System.out.println("READER split=" + self + " from=" + next);
      System.out.flush();
    }
    return new Reader(self, next);
  }

  @Override
  public Coder<Mark> getCheckpointMarkCoder() {
    return MarkCoder.INSTANCE;
  }

  @Override
  public Coder<Long> getOutputCoder() {
    return VarLongCoder.of();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PacedIndexSource other && count == other.count
        && elementsPerSecond == other.elementsPerSecond && splits == other.splits && split == other.split;
  }

  @Override
  public int hashCode() {
    return Objects.hash(count, elementsPerSecond, splits, split);
  }

  @Override
  public String toString() {
    return "PacedIndexSource[count=" + count + ", elementsPerSecond=" + elementsPerSecond + ", split="
        + split + " of " + splits + "]";
  }

  /** A split's position: its index and the next element index it reads. Immutable. */
  public static final class Mark implements UnboundedSource.CheckpointMark {
    final int split;
    final long next;

    /** The mark of split {@code split} before element index {@code next}. */
    public Mark(int split, long next) {
      this.split = split;
      this.next = next;
    }

    /** The next element index the split reads. */
    public long next() {
      return next;
    }

    /** Nothing to acknowledge: the source is a pure function of the index. */
    @Override
    public void finalizeCheckpoint() {}

    @Override
    public boolean equals(Object o) {
      return o instanceof Mark other && split == other.split && next == other.next;
    }

    @Override
    public int hashCode() {
      return 31 * split + Long.hashCode(next);
    }

    @Override
    public String toString() {
      return "Mark[split=" + split + ", next=" + next + "]";
    }
  }

  /** The mark coder: split index (var-int), then next index (var-long). Deterministic. */
  public static final class MarkCoder extends AtomicCoder<Mark> {
    private static final long serialVersionUID = 1L;
    static final MarkCoder INSTANCE = new MarkCoder();

    @Override
    public void encode(Mark value, OutputStream out) throws CoderException, IOException {
      VarIntCoder.of().encode(value.split, out);
      VarLongCoder.of().encode(value.next, out);
    }

    @Override
    public Mark decode(InputStream in) throws CoderException, IOException {
      int split = VarIntCoder.of().decode(in);
      return new Mark(split, VarLongCoder.of().decode(in));
    }

    @Override
    public void verifyDeterministic() {}
  }

  /** Reads one split from a position, at most {@code elementsPerSecond / splits} per second. */
  public final class Reader extends UnboundedReader<Long> {
    private final int self;
    private long next; // next index to emit
    private long current = -1;
    private long startNanos;
    private long emitted; // by this reader, for pacing

    Reader(int self, long next) {
      this.self = self;
      this.next = next;
    }

    @Override
    public boolean start() {
      startNanos = System.nanoTime();
      return advance();
    }

    @Override
    public boolean advance() {
      if (next >= count) {
        current = -1;
        return false;
      }
      if (elementsPerSecond > 0) {
        long elapsedMs = (System.nanoTime() - startNanos) / 1_000_000;
        if (emitted > elapsedMs * elementsPerSecond / splits / 1000) { // one element free at start
          current = -1;
          return false;
        }
      }
      current = next;
      next += splits;
      emitted++;
      return true;
    }

    @Override
    public Long getCurrent() {
      if (current < 0) {
        throw new NoSuchElementException();
      }
      return current;
    }

    @Override
    public Instant getCurrentTimestamp() {
      return new Instant(getCurrent());
    }

    /**
     * The timestamp of the last element emitted; +infinity once the reader found no element after
     * the split's last.
     */
    @Override
    public Instant getWatermark() {
      if (next >= count && current < 0) {
        return BoundedWindow.TIMESTAMP_MAX_VALUE;
      }
      long last = next - splits;
      return last < 0 ? BoundedWindow.TIMESTAMP_MIN_VALUE : new Instant(last);
    }

    @Override
    public Mark getCheckpointMark() {
      return new Mark(self, next);
    }

    @Override
    public PacedIndexSource getCurrentSource() {
      return PacedIndexSource.this;
    }

    @Override
    public void close() {}
  }
}
