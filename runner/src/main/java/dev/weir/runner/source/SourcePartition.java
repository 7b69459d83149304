package dev.weir.runner.source;

import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.stream.InputPartition;
import dev.weir.runner.stream.ProducerEndOfStream;
import dev.weir.runner.stream.ProducerWatermark;
import dev.weir.runner.operators.FailureContext;
import dev.weir.runner.time.Quiescence;

import dev.weir.runner.time.JobClock;
import dev.weir.runner.time.ManualJobClock;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.SourceSpec;
import org.apache.beam.sdk.annotations.Internal;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import org.apache.beam.sdk.io.BoundedSource;
import org.apache.beam.sdk.io.Source;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.samza.Partition;
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
 * {@value #WATERMARK_EVERY_ELEMENTS} elements, and a watermark message is emitted when it advanced.
 *
 * <p>Checkpoint marks (unbounded splits), in a job without checkpoints, are held for commit, not
 * encoded per element: the task takes the reader's mark when it finishes a bundle that read
 * elements ({@link #checkpoint()}), and the mark is finalized after the container's next commit
 * at which the task's outbox is empty ({@link #finalizeCheckpoints()}). In a job that takes
 * checkpoints, a split's whole position goes into each checkpoint instead ({@link #position()}: an
 * unbounded split's mark encoded with the source's mark coder, a bounded split's count of elements
 * read, whether an impulse fired, and the phase), the mark is finalized when that checkpoint
 * completed ({@link #checkpointCompleted()}), and a restored job resumes every split from its
 * position ({@link #restorePosition}).
 *
 * <p>A {@code TestStream} replays its events ({@link TestStreamPartition}): each one only once the
 * job is quiescent, watermark events as source watermarks, processing-time events as advances of
 * the job's {@link ManualJobClock}.
 *
 * <p>Steps: a source partition is polled by the container (or a polling thread), not called
 * through a task's brackets, so it enters its Read step ({@link SourceContext#step()}) itself
 * around every reader call (open, advance, checkpoint, finalize, close): readers' metrics count
 * for the Read step and their time shows in its profiling span.
 *
 * <p>Threading: confined to the consuming container's thread.
 */
@Internal
public abstract class SourcePartition implements InputPartition {
  private static final Logger LOG = LoggerFactory.getLogger(SourcePartition.class);
  static final long MAX_WATERMARK_MS = BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis();
  static final int WATERMARK_EVERY_ELEMENTS = 1000;

  /**
   * What a test stream's partition returns after the last element of an element event: the task
   * ends its open bundle there, so that the event's elements are one bundle of the source's stage,
   * as the bundle Beam's Direct runner makes of an {@code addElements} group. Only the embedded
   * executor runs test streams; no other source returns it.
   */
  public static final Object END_OF_EVENT = new Object() {
    @Override
    public String toString() {
      return "end of a test stream event";
    }
  };

  private enum Phase { DATA, FINAL_WATERMARK, END_OF_STREAM, DONE }

  private final SystemStreamPartition ssp;
  private final String taskName;
  private Phase phase = Phase.DATA;
  /** Set by {@link #drain()} while the split still had data: its final watermark then says so. */
  boolean drained;
  SourceContext context;

  SourcePartition(String streamName, int partition, String taskName) {
    this.ssp = new SystemStreamPartition(JobPlan.SOURCE_SYSTEM, streamName, new Partition(partition));
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

  /** Opens the split's reader on the reading (container) thread, in the Read step of {@code context}. */
  public void open(SourceContext context) {
    this.context = context;
    StepScope.Step previous = context.scope().enter(context.step());
    try {
      openReader();
    } catch (IOException | RuntimeException e) {
      throw FailureContext.attach(e, "opening the reader of " + ssp.getStream() + " (task " + taskName + ")");
    } finally {
      context.scope().exit(previous);
    }
  }

  /**
   * The split's next message: an element ({@code WindowedValue}, in the global window) or a
   * {@link ProducerWatermark} (from a test stream also {@link #END_OF_EVENT}); after the data, the
   * final watermark and a {@link ProducerEndOfStream}.
   */
  @Override
  public final Object poll() {
    switch (phase) {
      case DATA:
        StepScope.Step previous = context.scope().enter(context.step());
        try {
          Object next = next();
          if (next != null || !exhausted()) {
            return next;
          }
        } catch (IOException | RuntimeException e) {
          // the reader's own exception is the job's failure cause; Weir's context is suppressed
          throw FailureContext.attach(e, "reading " + ssp.getStream() + " (task " + taskName + ")");
        } finally {
          context.scope().exit(previous);
        }
        phase = Phase.FINAL_WATERMARK;
        // fall through
      case FINAL_WATERMARK:
        phase = Phase.END_OF_STREAM;
        return drained ? new ProducerWatermark(MAX_WATERMARK_MS, 0, taskName, true) : watermark(MAX_WATERMARK_MS);
      case END_OF_STREAM:
        phase = Phase.DONE;
        return new ProducerEndOfStream(0, taskName);
      default:
        return null;
    }
  }

  /**
   * Drains the split: it reads nothing more and ends as if its source had (its final watermark,
   * the end of time, marked {@linkplain ProducerWatermark#drained() drained}, then end of stream),
   * so that downstream every window and timer fires, caused by the drain. No effect on a split
   * without a reader of its own (a test stream), or on one that already sent its final watermark.
   * Container thread.
   */
  public void drain() {}

  @Override
  public void close() {
    StepScope.Step previous = context == null ? null : context.scope().enter(context.step());
    try {
      closeReader();
    } catch (IOException | RuntimeException e) {
      LOG.warn("Closing the reader of {} failed", ssp, e);
    } finally {
      if (context != null) {
        context.scope().exit(previous);
      }
    }
  }

  /** A source watermark message (epoch ms) of this split, its only producer. */
  ProducerWatermark watermark(long timestampMs) {
    return new ProducerWatermark(timestampMs, 0, taskName);
  }

  void openReader() throws IOException {}

  void closeReader() throws IOException {}

  /**
   * Takes the reader's checkpoint mark if elements were read since the last one, and holds it until
   * {@link #finalizeCheckpoints()}. Called by the task when it finishes a bundle, after the bundle's
   * outputs left its operators. Only unbounded splits have marks.
   *
   * @return whether a mark was taken (the task then asks the container for a commit)
   */
  boolean checkpoint() {
    return false;
  }

  /** Whether marks taken by {@link #checkpoint()} wait for finalization. */
  boolean hasHeldCheckpoints() {
    return false;
  }

  /**
   * Finalizes every held mark, oldest first ({@code CheckpointMark.finalizeCheckpoint}). Called by
   * the task after a container commit, when every output emitted before the marks has left the task.
   *
   * @throws IllegalStateException if a mark's finalization fails (the job fails)
   */
  void finalizeCheckpoints() {}

  /**
   * The split's position for a checkpoint, taken while the job is quiescent (every element this
   * partition returned has been processed): the partition's kind and source class (its identity,
   * checked on restore), its phase, and what the kind needs to resume (see the subclasses). An
   * unbounded split's mark is held until {@link #checkpointCompleted()}.
   *
   * <p>A host that checkpoints positions itself (runner-samza's source system) takes one after
   * each drained batch and owns the held mark through {@link #takePositionMark()}.
   *
   * @throws IllegalStateException if the position cannot be encoded (e.g. the mark coder fails)
   */
  public final byte[] position() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeUTF(identity());
      out.writeByte(phase.ordinal());
      writePosition(out);
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("cannot write the position of " + ssp.getStream() + " (task " + taskName
          + ") into a checkpoint (" + e + ")", e);
    }
    return bytes.toByteArray();
  }

  /**
   * Resumes from a {@link #position()} written by the same split of the same plan; called before
   * {@link #open}.
   *
   * @throws IllegalStateException naming the stream and task if the position is of another kind
   *     of split or cannot be decoded
   */
  public final void restorePosition(byte[] position) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(position))) {
      String identity = in.readUTF();
      if (!identity.equals(identity())) {
        throw new IllegalStateException("the checkpoint holds a position of '" + identity + "', this split is '"
            + identity() + "'");
      }
      phase = Phase.values()[in.readByte()];
      readPosition(in);
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("cannot resume " + ssp.getStream() + " (task " + taskName
          + ") from the checkpoint: " + e.getMessage(), e);
    }
  }

  /**
   * As {@link #restorePosition}, for a host that checkpoints the position of the last envelope it
   * processed (runner-samza): a split whose position says its final watermark or end-of-stream was
   * already returned returns both again, since the restarted task does not remember them.
   *
   * @throws IllegalStateException as {@link #restorePosition}
   */
  public final void resumeAt(byte[] position) {
    restorePosition(position);
    if (phase == Phase.END_OF_STREAM || phase == Phase.DONE) {
      phase = Phase.FINAL_WATERMARK;
    }
  }

  /** Whether the split's data has ended: what {@link #poll()} returns now are its final control messages. */
  public final boolean dataEnded() {
    return phase != Phase.DATA;
  }

  /**
   * The checkpoint mark the last {@link #position()} encoded, now the caller's to finalize
   * ({@link #finalizeMark}) once the checkpoint holding that position is durable; null if none
   * (bounded splits, or nothing read yet). {@link #checkpointCompleted()} no longer finalizes it.
   */
  public UnboundedSource.CheckpointMark takePositionMark() {
    return null;
  }

  /**
   * Finalizes a mark from {@link #takePositionMark()} inside the Read step, on the reading thread.
   *
   * @throws IllegalStateException naming the stream if the finalization fails
   */
  public final void finalizeMark(UnboundedSource.CheckpointMark mark) {
    StepScope.Step previous = context == null ? null : context.scope().enter(context.step());
    try {
      mark.finalizeCheckpoint();
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("finalizing a checkpoint mark of " + ssp.getStream() + " (task " + taskName
          + ") failed: " + e, e);
    } finally {
      if (context != null) {
        context.scope().exit(previous);
      }
    }
  }

  /** The split's kind and source class, e.g. {@code unbounded:org.example.MySource}. */
  String identity() {
    return getClass().getSimpleName();
  }

  /** Writes what the split needs to resume (after the common header). Default: nothing. */
  void writePosition(DataOutputStream out) throws IOException {}

  /** Reads what {@link #writePosition} wrote. Default: nothing. */
  void readPosition(DataInputStream in) throws IOException {}

  /**
   * The checkpoint whose {@link #position()} was taken last is complete: finalize what it held
   * (an unbounded split's checkpoint mark). Default: nothing.
   *
   * @throws IllegalStateException if the finalization fails (the job fails)
   */
  public void checkpointCompleted() {}

  /** The next element ({@code WindowedValue}) or source watermark ({@link #watermark}), or null if none now. */
  abstract Object next() throws IOException;

  /** Whether the source has nothing more to give, ever. */
  abstract boolean exhausted();

  /** Beam's Impulse: one empty byte array. */
  static final class ImpulsePartition extends SourcePartition {
    private boolean emitted;

    ImpulsePartition(String stream, int partition, String task) {
      super(stream, partition, task);
    }

    @Override
    Object next() {
      if (emitted) {
        return null;
      }
      emitted = true;
      return WindowedValues.valueInGlobalWindow(new byte[0]);
    }

    /** Whether the impulse fired. */
    @Override
    void writePosition(DataOutputStream out) throws IOException {
      out.writeBoolean(emitted);
    }

    @Override
    void readPosition(DataInputStream in) throws IOException {
      emitted = in.readBoolean();
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
    Object next() {
      return null;
    }

    @Override
    boolean exhausted() {
      return true;
    }
  }

  /**
   * A split read through a Beam {@link Source.Reader}: the reader's lifecycle ({@code start} once,
   * then {@code advance}), end-of-data bookkeeping and closing, shared by bounded and unbounded
   * splits.
   */
  abstract static class ReaderPartition<R extends Source.Reader<?>> extends SourcePartition {
    R reader;
    private boolean started;
    /** Set when the split has nothing more to give, ever. */
    boolean done;

    ReaderPartition(String stream, int partition, String task) {
      super(stream, partition, task);
    }

    /** Moves the reader to its next record ({@code start} the first time); whether there is one. */
    final boolean advanceReader() throws IOException {
      boolean available = started ? reader.advance() : reader.start();
      started = true;
      return available;
    }

    /** The reader's current record as an element, in the global window. */
    final Object currentElement() {
      return WindowedValues.timestampedValueInGlobalWindow(reader.getCurrent(), reader.getCurrentTimestamp());
    }

    @Override
    final boolean exhausted() {
      return done;
    }

    @Override
    public final void drain() {
      drained |= !done;
      done = true;
    }

    @Override
    final void closeReader() throws IOException {
      if (reader != null) {
        try {
          reader.close();
        } finally {
          reader = null;
        }
      }
    }
  }

  /** A bounded source split. */
  static final class BoundedPartition extends ReaderPartition<BoundedSource.BoundedReader<?>> {
    private final BoundedSource<?> source;
    /** Elements returned so far (over restores). */
    private long read;
    /** Elements still to skip after a restore. */
    private long skip;

    BoundedPartition(BoundedSource<?> source, String stream, int partition, String task) {
      super(stream, partition, task);
      this.source = source;
    }

    @Override
    void openReader() throws IOException {
      reader = source.createReader(context.options());
    }

    @Override
    Object next() throws IOException {
      if (done) {
        return null;
      }
      while (skip > 0) { // resuming from a checkpoint: re-read what the checkpoint already holds
        if (!advanceReader()) {
          throw new IllegalStateException("the bounded source has " + (read - skip) + " elements now, the "
              + "checkpoint had read " + read + ": it is not deterministic and cannot resume");
        }
        skip--;
      }
      if (!advanceReader()) {
        done = true;
        return null;
      }
      read++;
      return currentElement();
    }

    @Override
    String identity() {
      return "bounded:" + source.getClass().getName();
    }

    /**
     * Elements read and whether the split is exhausted. Bounded readers have no checkpoint mark,
     * so a restored split re-reads its first elements and skips them (Beam's {@code BoundedReader}
     * contract: a split reads the same elements in the same order every time).
     */
    @Override
    void writePosition(DataOutputStream out) throws IOException {
      out.writeLong(read);
      out.writeBoolean(done);
    }

    @Override
    void readPosition(DataInputStream in) throws IOException {
      read = in.readLong();
      done = in.readBoolean();
      skip = done ? 0 : read;
    }
  }

}
