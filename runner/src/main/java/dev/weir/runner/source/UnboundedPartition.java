package dev.weir.runner.source;

import org.apache.beam.sdk.annotations.Internal;

import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.stream.ProducerWatermark;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayDeque;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.util.CoderUtils;

/**
 * An unbounded source split; ends when its watermark reaches +infinity.
 *
 * <p>Checkpoint marks: {@link #checkpoint()} takes the reader's mark (at most once per bundle
 * that read elements, never per element) and holds it; {@link #finalizeCheckpoints()} finalizes
 * the held marks, oldest first, once the container committed with every output before them out
 * of the task. With checkpoints, {@link #position()} encodes the mark instead, and a restored
 * reader is created from the decoded mark.
 */
@Internal
public final class UnboundedPartition extends SourcePartition.ReaderPartition<UnboundedSource.UnboundedReader<?>> {
  private final UnboundedSource<?, ?> source;
  private long lastWatermarkMs = BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis();
  private int sinceWatermark;
  /** Whether elements were read since the last mark was taken. */
  private boolean readSinceMark;
  /** Marks taken and not yet finalized, oldest first; rarely more than one. */
  private final ArrayDeque<UnboundedSource.CheckpointMark> held = new ArrayDeque<>(2);

  UnboundedPartition(UnboundedSource<?, ?> source, String stream, int partition, String task) {
    super(stream, partition, task);
    this.source = source;
  }

  /** The mark a restore resumes from, decoded from the checkpoint; null on a fresh start. */
  private UnboundedSource.CheckpointMark restoredMark;
  /** The mark taken by the last {@link #position()}, finalized when that checkpoint completes. */
  private UnboundedSource.CheckpointMark checkpointMark;

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  void openReader() throws IOException {
    reader = ((UnboundedSource) source).createReader(context.options(), restoredMark);
    restoredMark = null;
  }

  @Override
  String identity() {
    return "unbounded:" + source.getClass().getName();
  }

  /**
   * The reader's checkpoint mark, encoded with the source's own mark coder (never Java
   * serialization of the source), and the last watermark sent. The mark is held and finalized
   * only when the checkpoint completed ({@link #checkpointCompleted()}).
   */
  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  void writePosition(DataOutputStream out) throws IOException {
    out.writeLong(lastWatermarkMs);
    out.writeBoolean(done);
    if (reader == null || done) {
      out.writeBoolean(false);
      return;
    }
    StepScope.Step previous = context.scope().enter(context.step());
    try {
      UnboundedSource.CheckpointMark mark = reader.getCheckpointMark();
      Coder coder = source.getCheckpointMarkCoder();
      out.writeBoolean(true);
      byte[] encoded = CoderUtils.encodeToByteArray(coder, mark);
      out.writeInt(encoded.length);
      out.write(encoded);
      checkpointMark = mark;
    } finally {
      context.scope().exit(previous);
    }
  }

  @Override
  void readPosition(DataInputStream in) throws IOException {
    lastWatermarkMs = in.readLong();
    done = in.readBoolean();
    if (in.readBoolean()) {
      byte[] encoded = new byte[in.readInt()];
      in.readFully(encoded);
      restoredMark = CoderUtils.decodeFromByteArray(source.getCheckpointMarkCoder(), encoded);
    }
  }

  @Override
  public UnboundedSource.CheckpointMark takePositionMark() {
    UnboundedSource.CheckpointMark mark = checkpointMark;
    checkpointMark = null;
    return mark;
  }

  @Override
  public void checkpointCompleted() {
    UnboundedSource.CheckpointMark mark = checkpointMark;
    if (mark == null) {
      return;
    }
    checkpointMark = null;
    StepScope.Step previous = context.scope().enter(context.step());
    try {
      mark.finalizeCheckpoint();
    } catch (IOException e) {
      throw new IllegalStateException("finalizing a checkpoint mark of " + ssp().getStream() + " failed", e);
    } finally {
      context.scope().exit(previous);
    }
  }

  @Override
  Object next() throws IOException {
    if (done) {
      return null;
    }
    if (sinceWatermark >= WATERMARK_EVERY_ELEMENTS) {
      sinceWatermark = 0;
      ProducerWatermark wm = advancedWatermark();
      if (wm != null) {
        return wm;
      }
    }
    if (advanceReader()) {
      sinceWatermark++;
      readSinceMark = true;
      return currentElement();
    }
    return advancedWatermark();
  }

  private ProducerWatermark advancedWatermark() {
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
  boolean checkpoint() {
    if (!readSinceMark || reader == null) {
      return false;
    }
    readSinceMark = false;
    StepScope.Step previous = context.scope().enter(context.step());
    try {
      held.addLast(reader.getCheckpointMark());
    } finally {
      context.scope().exit(previous);
    }
    return true;
  }

  @Override
  boolean hasHeldCheckpoints() {
    return !held.isEmpty();
  }

  @Override
  void finalizeCheckpoints() {
    StepScope.Step previous = context.scope().enter(context.step());
    try {
      UnboundedSource.CheckpointMark mark;
      while ((mark = held.pollFirst()) != null) {
        mark.finalizeCheckpoint();
      }
    } catch (IOException e) {
      throw new IllegalStateException("finalizing a checkpoint mark of " + ssp().getStream() + " failed", e);
    } finally {
      context.scope().exit(previous);
    }
  }
}
