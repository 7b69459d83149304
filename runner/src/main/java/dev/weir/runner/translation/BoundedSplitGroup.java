package dev.weir.runner.translation;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.io.BoundedSource;
import org.apache.beam.sdk.options.PipelineOptions;
import org.joda.time.Instant;

/**
 * Several splits of one bounded source read one after another: the partition of a source stage
 * that has fewer partitions than its source has splits (a file pattern matching many files, a
 * source that ignores the bundle size asked for). {@link ReadTranslator} groups such splits
 * round-robin into {@code --parallelism} groups on samza-core, where every partition is a Samza task
 * with its own store and changelog partition; see {@link UnboundedSplitGroup} for why.
 *
 * <p>The reader reads split 0 to its end, then split 1, and so on, so the order of elements is the
 * same on every read: a restored partition that skips the elements it had read (the position Weir
 * checkpoints for a bounded split) resumes exactly where it was. No dynamic splitting
 * ({@code splitAtFraction} returns null).
 *
 * <p>Threading: the source is immutable; a reader is used by one thread at a time, as Beam requires.
 *
 * @param <T> the element type
 */
@Internal
public final class BoundedSplitGroup<T> extends BoundedSource<T> {
  private static final long serialVersionUID = 1L;

  private final List<BoundedSource<T>> splits;

  /**
   * Groups {@code splits} round-robin into at most {@code groups} sources: split {@code i} goes
   * to group {@code i % groups}. Returns {@code splits} itself when there are no more of them than
   * {@code groups}.
   *
   * @throws IllegalArgumentException if {@code groups} is less than 1
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static List<? extends BoundedSource<?>> group(List<? extends BoundedSource<?>> splits, int groups) {
    if (splits.size() <= UnboundedSplitGroup.checkGroups(groups)) {
      return splits;
    }
    List<BoundedSplitGroup<?>> out = new ArrayList<>(groups);
    for (List<? extends BoundedSource> m : UnboundedSplitGroup.roundRobin(splits, groups)) {
      out.add(new BoundedSplitGroup(m));
    }
    return out;
  }

  /**
   * @param splits the splits, read in this order; at least one
   * @throws IllegalArgumentException if {@code splits} is empty
   */
  public BoundedSplitGroup(List<BoundedSource<T>> splits) {
    if (splits.isEmpty()) {
      throw new IllegalArgumentException("a split group needs at least one split");
    }
    this.splits = List.copyOf(splits);
  }

  /** The grouped splits, in reading order. */
  public List<BoundedSource<T>> splits() {
    return splits;
  }

  /** Already split: returns this group alone. */
  @Override
  public List<BoundedSplitGroup<T>> split(long desiredBundleSizeBytes, PipelineOptions options) {
    return List.of(this);
  }

  /** The sum of the splits' estimates, bytes; 0 if any split cannot estimate. */
  @Override
  public long getEstimatedSizeBytes(PipelineOptions options) throws Exception {
    long sum = 0;
    for (BoundedSource<T> s : splits) {
      sum += s.getEstimatedSizeBytes(options);
    }
    return sum;
  }

  @Override
  public BoundedReader<T> createReader(PipelineOptions options) {
    return new Reader<>(this, options);
  }

  @Override
  public Coder<T> getOutputCoder() {
    return splits.get(0).getOutputCoder();
  }

  @Override
  public void validate() {
    splits.forEach(BoundedSource::validate);
  }

  @Override
  public String toString() {
    return "group of " + splits.size() + " split(s) of " + splits.get(0);
  }

  /** Reads the splits one after another; a split's reader is open only while it is read. */
  static final class Reader<T> extends BoundedReader<T> {
    private final BoundedSplitGroup<T> source;
    private final PipelineOptions options;
    /** The split being read; {@code splits.size()} once all are read. */
    private int index = -1;
    private BoundedReader<T> reader;

    Reader(BoundedSplitGroup<T> source, PipelineOptions options) {
      this.source = source;
      this.options = options;
    }

    @Override
    public boolean start() throws IOException {
      return nextSplit();
    }

    @Override
    public boolean advance() throws IOException {
      if (reader == null) {
        return false;
      }
      return reader.advance() || nextSplit();
    }

    /** Closes the current split's reader and starts the next splits until one has an element. */
    private boolean nextSplit() throws IOException {
      while (true) {
        if (reader != null) {
          BoundedReader<T> done = reader;
          reader = null;
          done.close();
        }
        index++;
        if (index >= source.splits.size()) {
          return false;
        }
        reader = source.splits.get(index).createReader(options);
        if (reader.start()) {
          return true;
        }
      }
    }

    private BoundedReader<T> currentReader() {
      if (reader == null) {
        throw new NoSuchElementException("no current element");
      }
      return reader;
    }

    @Override
    public T getCurrent() {
      return currentReader().getCurrent();
    }

    @Override
    public Instant getCurrentTimestamp() {
      return currentReader().getCurrentTimestamp();
    }

    @Override
    public BoundedSource<T> getCurrentSource() {
      return source;
    }

    @Override
    public void close() throws IOException {
      if (reader != null) {
        BoundedReader<T> r = reader;
        reader = null;
        r.close();
      }
    }
  }
}
