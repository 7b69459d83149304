package dev.weir.runner.translation;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.CustomCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.joda.time.Instant;

/**
 * Several splits of one unbounded source read as one: the partition of a source stage that has
 * fewer partitions than its source has splits. On samza-core every partition is a Samza task with
 * its own store, changelog partition and run-loop slot, so a source that ignores the number of
 * splits asked for (Nexmark's generator always makes 100) would otherwise make every stage that
 * follows it 100 tasks wide; {@link ReadTranslator} groups such splits round-robin into
 * {@code --parallelism} groups. The idea is Beam's Flink runner's, whose source operator reads
 * every split assigned to its subtask.
 *
 * <p>The reader reads its splits in turn: each {@code advance()} moves on from the split whose
 * element was current and asks the splits one after another, starting with the next, until one has
 * an element. No split is ever asked for an element that is not returned at once, so a split's own
 * checkpoint mark ("everything up to and including my current element") always agrees with what
 * the group has returned. The group's mark is the list of its splits' marks (in split order,
 * encoded with each split's own mark coder); finalizing it finalizes each. The watermark is the
 * least of the splits' watermarks, with a split not yet started counting as
 * {@link BoundedWindow#TIMESTAMP_MIN_VALUE}; the group ends when every split's watermark is
 * {@link BoundedWindow#TIMESTAMP_MAX_VALUE}.
 *
 * <p>Which split an element comes from depends on which splits had data when asked, so the order
 * of elements across splits is not repeatable after a restore (within one split it is).
 *
 * <p>Threading: the source is immutable; a reader is used by one thread at a time, as Beam requires.
 *
 * @param <T> the element type
 */
@Internal
public final class UnboundedSplitGroup<T> extends UnboundedSource<T, UnboundedSplitGroup.Mark> {
  private static final long serialVersionUID = 1L;

  private final List<UnboundedSource<T, UnboundedSource.CheckpointMark>> splits;

  /**
   * Groups {@code splits} round-robin into at most {@code groups} sources: split {@code i} goes
   * to group {@code i % groups}. Returns {@code splits} itself when there are no more of them than
   * {@code groups}.
   *
   * @throws IllegalArgumentException if {@code groups} is less than 1
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static List<? extends UnboundedSource<?, ?>> group(List<? extends UnboundedSource<?, ?>> splits, int groups) {
    if (splits.size() <= checkGroups(groups)) {
      return splits;
    }
    List<UnboundedSplitGroup<?>> out = new ArrayList<>(groups);
    for (List<? extends UnboundedSource> m : roundRobin(splits, groups)) {
      out.add(new UnboundedSplitGroup(m));
    }
    return out;
  }

  /**
   * Returns {@code groups}, if at least 1.
   *
   * @throws IllegalArgumentException if {@code groups} is less than 1
   */
  static int checkGroups(int groups) {
    if (groups < 1) {
      throw new IllegalArgumentException("groups must be at least 1, got " + groups);
    }
    return groups;
  }

  /** {@code items} dealt into {@code groups} lists: item {@code i} into list {@code i % groups}, in order. */
  static <T> List<List<T>> roundRobin(List<? extends T> items, int groups) {
    List<List<T>> out = new ArrayList<>(groups);
    for (int g = 0; g < groups; g++) {
      out.add(new ArrayList<>());
    }
    for (int i = 0; i < items.size(); i++) {
      out.get(i % groups).add(items.get(i));
    }
    return out;
  }

  /** An action on one item that may throw an {@link IOException}. */
  @FunctionalInterface
  interface IoAction<T> {
    void apply(T item) throws IOException;
  }

  /**
   * Applies {@code action} to every item, even after one failed; then throws the first failure with
   * the later ones suppressed.
   */
  static <T> void forEachThenThrow(List<? extends T> items, IoAction<T> action) throws IOException {
    IOException failure = null;
    for (T item : items) {
      try {
        action.apply(item);
      } catch (IOException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * @param splits the splits, read in this order; at least one
   * @throws IllegalArgumentException if {@code splits} is empty
   */
  public UnboundedSplitGroup(List<UnboundedSource<T, UnboundedSource.CheckpointMark>> splits) {
    if (splits.isEmpty()) {
      throw new IllegalArgumentException("a split group needs at least one split");
    }
    this.splits = List.copyOf(splits);
  }

  /** The grouped splits, in reading order. */
  public List<UnboundedSource<T, UnboundedSource.CheckpointMark>> splits() {
    return splits;
  }

  /** Already split: returns this group alone. */
  @Override
  public List<UnboundedSplitGroup<T>> split(int desiredNumSplits, PipelineOptions options) {
    return List.of(this);
  }

  @Override
  public Reader<T> createReader(PipelineOptions options, Mark checkpointMark) throws IOException {
    if (checkpointMark != null && checkpointMark.marks.size() != splits.size()) {
      throw new IOException("a checkpoint mark of " + checkpointMark.marks.size() + " split(s) cannot resume a group of "
          + splits.size() + " split(s)");
    }
    List<UnboundedReader<T>> readers = new ArrayList<>(splits.size());
    try {
      for (int i = 0; i < splits.size(); i++) {
        readers.add(splits.get(i).createReader(options, checkpointMark == null ? null : checkpointMark.marks.get(i)));
      }
    } catch (IOException | RuntimeException e) {
      for (UnboundedReader<T> r : readers) {
        try {
          r.close();
        } catch (IOException | RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
    return new Reader<>(this, readers);
  }

  @Override
  public Coder<Mark> getCheckpointMarkCoder() {
    List<Coder<UnboundedSource.CheckpointMark>> coders = new ArrayList<>(splits.size());
    for (UnboundedSource<T, UnboundedSource.CheckpointMark> s : splits) {
      coders.add(NullableCoder.of(s.getCheckpointMarkCoder()));
    }
    return new MarkCoder(coders);
  }

  @Override
  public boolean requiresDeduping() {
    for (UnboundedSource<T, UnboundedSource.CheckpointMark> s : splits) {
      if (s.requiresDeduping()) {
        return true;
      }
    }
    return false;
  }

  @Override
  public Coder<T> getOutputCoder() {
    return splits.get(0).getOutputCoder();
  }

  @Override
  public void validate() {
    splits.forEach(UnboundedSource::validate);
  }

  @Override
  public String toString() {
    return "group of " + splits.size() + " split(s) of " + splits.get(0);
  }

  /** The checkpoint marks of a group's splits, in split order; finalizing it finalizes each. */
  public static final class Mark implements UnboundedSource.CheckpointMark {
    private final List<UnboundedSource.CheckpointMark> marks;

    Mark(List<UnboundedSource.CheckpointMark> marks) {
      this.marks = marks;
    }

    /** The splits' marks, in split order; an element may be null. */
    public List<UnboundedSource.CheckpointMark> marks() {
      return marks;
    }

    /** Finalizes every split's mark; throws the first failure with the others suppressed. */
    @Override
    public void finalizeCheckpoint() throws IOException {
      forEachThenThrow(marks, m -> {
        if (m != null) {
          m.finalizeCheckpoint();
        }
      });
    }
  }

  /** A {@link Mark}: the count of marks, then each mark with its split's (nullable) mark coder. */
  static final class MarkCoder extends CustomCoder<Mark> {
    private static final long serialVersionUID = 1L;
    private final List<Coder<UnboundedSource.CheckpointMark>> coders;

    MarkCoder(List<Coder<UnboundedSource.CheckpointMark>> coders) {
      this.coders = List.copyOf(coders);
    }

    @Override
    public void encode(Mark value, OutputStream out) throws IOException {
      if (value.marks.size() != coders.size()) {
        throw new CoderException("a mark of " + value.marks.size() + " split(s) for a group of " + coders.size());
      }
      VarIntCoder.of().encode(coders.size(), out);
      for (int i = 0; i < coders.size(); i++) {
        coders.get(i).encode(value.marks.get(i), out);
      }
    }

    @Override
    public Mark decode(InputStream in) throws IOException {
      int n = VarIntCoder.of().decode(in);
      if (n != coders.size()) {
        throw new CoderException("a checkpoint mark of " + n + " split(s) cannot resume a group of " + coders.size()
            + " split(s)");
      }
      List<UnboundedSource.CheckpointMark> marks = new ArrayList<>(n);
      for (Coder<UnboundedSource.CheckpointMark> c : coders) {
        marks.add(c.decode(in));
      }
      return new Mark(marks);
    }

    @Override
    public void verifyDeterministic() {
      // a mark is only ever decoded, never compared encoded
    }
  }

  /** Reads the group's splits in turn; see the class comment. One thread at a time. */
  static final class Reader<T> extends UnboundedReader<T> {
    private final UnboundedSplitGroup<T> source;
    private final List<UnboundedReader<T>> readers;
    private final boolean[] started;
    /** The reader whose element is current, or -1 before the first element. */
    private int current = -1;
    /** The reader asked last; the next ask starts after it. */
    private int asked = -1;

    Reader(UnboundedSplitGroup<T> source, List<UnboundedReader<T>> readers) {
      this.source = source;
      this.readers = readers;
      this.started = new boolean[readers.size()];
    }

    @Override
    public boolean start() throws IOException {
      return advance();
    }

    /**
     * Asks each split once, starting after the one asked last, and makes the first that has an
     * element current; false (and nothing current) if none has.
     */
    @Override
    public boolean advance() throws IOException {
      int n = readers.size();
      for (int k = 1; k <= n; k++) {
        int i = (asked + k) % n;
        UnboundedReader<T> r = readers.get(i);
        boolean has;
        if (started[i]) {
          has = r.advance();
        } else {
          started[i] = true;
          has = r.start();
        }
        if (has) {
          asked = i;
          current = i;
          return true;
        }
      }
      asked = (asked + n) % n;
      current = -1;
      return false;
    }

    private UnboundedReader<T> currentReader() {
      if (current < 0) {
        throw new NoSuchElementException("no current element");
      }
      return readers.get(current);
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
    public byte[] getCurrentRecordId() {
      return currentReader().getCurrentRecordId();
    }

    @Override
    public Instant getWatermark() {
      Instant min = BoundedWindow.TIMESTAMP_MAX_VALUE;
      for (int i = 0; i < readers.size(); i++) {
        if (!started[i]) {
          return BoundedWindow.TIMESTAMP_MIN_VALUE;
        }
        Instant w = readers.get(i).getWatermark();
        if (w.isBefore(min)) {
          min = w;
        }
      }
      return min;
    }

    @Override
    public CheckpointMark getCheckpointMark() {
      List<UnboundedSource.CheckpointMark> marks = new ArrayList<>(readers.size());
      for (int i = 0; i < readers.size(); i++) {
        // a reader never started has read nothing: its mark would be taken before start(), which
        // Beam does not allow; null resumes it from its beginning
        marks.add(started[i] ? readers.get(i).getCheckpointMark() : null);
      }
      return new Mark(marks);
    }

    @Override
    public long getSplitBacklogBytes() {
      long sum = 0;
      for (UnboundedReader<T> r : readers) {
        long b = r.getSplitBacklogBytes();
        if (b == BACKLOG_UNKNOWN) {
          return BACKLOG_UNKNOWN;
        }
        sum += b;
      }
      return sum;
    }

    @Override
    public UnboundedSource<T, ?> getCurrentSource() {
      return source;
    }

    /** Closes every split's reader; throws the first failure with the others suppressed. */
    @Override
    public void close() throws IOException {
      forEachThenThrow(readers, UnboundedReader::close);
    }
  }
}
