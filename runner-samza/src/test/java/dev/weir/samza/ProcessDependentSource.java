package dev.weir.samza;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.BoundedSource;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * A bounded source of the longs {@code [from, to)} whose {@link #split} is NOT deterministic across
 * processes, as a file pattern matched at different times or a split by estimated size can be: it
 * returns {@value #SPLITS} splits unless the JVM's system property {@value #COUNT_PROPERTY} says
 * another number (as a file pattern that matches more files by the time a late process starts), and
 * where it cuts depends on the system property {@value #SEED_PROPERTY} (a different seed per process
 * in {@link SamzaSplitPlanIT}). Two processes
 * that split it themselves and each read their own half of the splits read overlapping or missing
 * ranges; processes that read the same split plan read every element once.
 */
final class ProcessDependentSource extends BoundedSource<Long> {
  /** System property whose value shifts the split points. */
  static final String SEED_PROPERTY = "weir.test.splitSeed";
  /** System property: the number of splits (default {@value #SPLITS}), to vary the count per process. */
  static final String COUNT_PROPERTY = "weir.test.splitCount";
  static final int SPLITS = 4;

  private final long from;
  private final long to;

  ProcessDependentSource(long from, long to) {
    this.from = from;
    this.to = to;
  }

  @Override
  public List<? extends BoundedSource<Long>> split(long desiredBundleSizeBytes, PipelineOptions options) {
    int count = Integer.getInteger(COUNT_PROPERTY, SPLITS);
    if (count < 2 || to - from < 4L * count) {
      return List.of(this);
    }
    long seed = Long.getLong(SEED_PROPERTY, 0L);
    long step = (to - from) / count;
    long shift = Math.floorMod(seed * 7919L, step / 2) + 1; // 1 .. step/2: never 0, so seeds 0 and 1 differ
    List<ProcessDependentSource> splits = new ArrayList<>();
    long start = from;
    for (int i = 1; i < count; i++) {
      long end = from + i * step + (seed % 2 == 0 ? shift : -shift);
      splits.add(new ProcessDependentSource(start, end));
      start = end;
    }
    splits.add(new ProcessDependentSource(start, to));
    return splits;
  }

  @Override
  public long getEstimatedSizeBytes(PipelineOptions options) {
    return 8 * (to - from);
  }

  @Override
  public BoundedReader<Long> createReader(PipelineOptions options) {
    return new Reader(this);
  }

  @Override
  public Coder<Long> getOutputCoder() {
    return VarLongCoder.of();
  }

  @Override
  public String toString() {
    return "ProcessDependentSource[" + from + ", " + to + ")";
  }

  private static final class Reader extends BoundedReader<Long> {
    private final ProcessDependentSource source;
    private long next;
    private boolean started;

    Reader(ProcessDependentSource source) {
      this.source = source;
      this.next = source.from;
    }

    @Override
    public boolean start() {
      started = true;
      return next < source.to;
    }

    @Override
    public boolean advance() {
      next++;
      return next < source.to;
    }

    @Override
    public Long getCurrent() {
      if (!started || next >= source.to) {
        throw new NoSuchElementException();
      }
      return next;
    }

    @Override
    public void close() {}

    @Override
    public BoundedSource<Long> getCurrentSource() {
      return source;
    }
  }
}
