package dev.weir.runner.operators;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.joda.time.Instant;

/**
 * Runs a DoFn whose {@code @ProcessElement} is annotated {@code @RequiresStableInput} (e.g. the
 * exactly-once sinks of KafkaIO and FileIO): its input is held until a checkpoint that contains it
 * has completed, so that after a crash the DoFn sees exactly the same elements again, never others
 * (the same guarantee Beam's Flink runner gives by buffering until the checkpoint is acknowledged).
 *
 * <p>How: the wrapper buffers every element (with its encoded key, for keyed input) instead of
 * handing it to the DoFn's operator, writes the buffer into every checkpoint ({@link #snapshot}, the
 * elements encoded with the input's windowed-value coder) and hands it on when that checkpoint
 * completed ({@link #checkpointCompleted()}). Elements restored from a checkpoint were in a
 * completed checkpoint, so they are handed on at the first watermark pass after the restore.
 * Meanwhile the buffer holds the operator's output watermark and the watermark the DoFn sees at
 * its earliest element, so nothing it holds becomes late; at the end of input the task waits for
 * the next checkpoint ({@link #hasPendingWork()}).
 *
 * <p>In a job without checkpoints there is nothing to be stable against: elements go straight
 * through.
 *
 * <p>Threading: the task's container thread only.
 */
@Internal
public final class StableInputOperator implements Operator, SideInputConsumer {
  /** Snapshot part of the held elements. */
  static final String PART = "stable-input";

  private final Operator inner;
  private final Coder<WindowedValue<?>> elementCoder;
  private final List<byte[]> keys = new ArrayList<>();
  private final List<WindowedValue<?>> held = new ArrayList<>();
  /** Elements of the last snapshot, handed on when its checkpoint completes. */
  private int inSnapshot;
  private long holdMs = Long.MAX_VALUE;
  private boolean checkpointed;
  /** Whether restored elements wait to be handed on at the first watermark pass. */
  private boolean releaseRestored;

  /**
   * @param inner the DoFn's operator
   * @param inputCoder the DoFn's input element coder
   * @param windowCoder the input's window coder
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public StableInputOperator(Operator inner, Coder<?> inputCoder, Coder<? extends BoundedWindow> windowCoder) {
    this.inner = inner;
    this.elementCoder = (Coder) WindowedValues.getFullCoder(inputCoder, windowCoder);
  }

  @Override
  public void open(OperatorContext context) {
    this.checkpointed = context.checkpointed();
    List<OperatorSnapshot.Part> restored = context.restored().all(PART);
    for (OperatorSnapshot.Part part : restored) {
      restore(part, context.restored(), context.stepName());
    }
    if (!restored.isEmpty()) {
      inSnapshot = held.size();
      releaseRestored = true;
    }
    inner.open(context);
  }

  @Override
  public void accept(WindowedValue<?> element) {
    if (!checkpointed) {
      inner.accept(element);
      return;
    }
    hold(null, element);
  }

  @Override
  public void acceptKeyed(byte[] keyBytes, WindowedValue<?> element) {
    if (!checkpointed) {
      inner.acceptKeyed(keyBytes, element);
      return;
    }
    hold(keyBytes, element);
  }

  private void hold(byte[] key, WindowedValue<?> element) {
    keys.add(key);
    held.add(element);
    holdMs = Math.min(holdMs, element.getTimestamp().getMillis());
  }

  @Override
  public boolean advanceWatermark(long inputWatermarkMs, int timerBudget, BooleanSupplier outputBlocked) {
    if (releaseRestored) {
      releaseRestored = false;
      release();
    }
    // the DoFn must not see the watermark pass elements it has not been given yet
    long visible = holdMs == Long.MAX_VALUE ? inputWatermarkMs : Math.min(inputWatermarkMs, holdMs);
    return inner.advanceWatermark(visible, timerBudget, outputBlocked);
  }

  /** Side inputs are not held: they go to the DoFn's operator at once (its own pushback applies). */
  @Override
  public void acceptSideInput(int index, WindowedValue<?> element) {
    ((SideInputConsumer) inner).acceptSideInput(index, element);
  }

  @Override
  public void advanceSideInputWatermark(int index, long watermarkMs) {
    ((SideInputConsumer) inner).advanceSideInputWatermark(index, watermarkMs);
  }

  @Override
  public void onProcessingTime(Instant now) {
    inner.onProcessingTime(now);
  }

  @Override
  public Instant watermarkHold() {
    Instant innerHold = inner.watermarkHold();
    return holdMs < innerHold.getMillis() ? new Instant(holdMs) : innerHold;
  }

  /** Held elements wait for the next checkpoint, also after the end of input. */
  @Override
  public boolean hasPendingWork() {
    return !held.isEmpty() || inner.hasPendingWork();
  }

  @Override
  public boolean inBundle() {
    return inner.inBundle();
  }

  @Override
  public boolean readyForCheckpoint() {
    return inner.readyForCheckpoint();
  }

  /** Writes the held elements (part {@value #PART}) and the DoFn operator's own parts. */
  @Override
  public void snapshot(OperatorSnapshot out) {
    inSnapshot = held.size();
    if (!held.isEmpty()) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (DataOutputStream data = new DataOutputStream(bytes)) {
        data.writeInt(held.size());
        for (int i = 0; i < held.size(); i++) {
          byte[] key = keys.get(i);
          data.writeInt(key == null ? -1 : key.length);
          if (key != null) {
            data.write(key);
          }
          elementCoder.encode(held.get(i), data);
        }
      } catch (IOException e) {
        throw new IllegalStateException("cannot write the input held for a @RequiresStableInput DoFn into a "
            + "checkpoint (" + e + ")", e);
      }
      out.put(PART, bytes.toByteArray());
    }
    inner.snapshot(out);
  }

  /** Hands on the elements the completed checkpoint holds. */
  @Override
  public void checkpointCompleted() {
    release();
    inner.checkpointCompleted();
  }

  private void release() {
    int n = Math.min(inSnapshot, held.size());
    inSnapshot = 0;
    if (n == 0) {
      return;
    }
    List<WindowedValue<?>> values = new ArrayList<>(held.subList(0, n));
    List<byte[]> valueKeys = new ArrayList<>(keys.subList(0, n));
    held.subList(0, n).clear();
    keys.subList(0, n).clear();
    holdMs = Long.MAX_VALUE;
    for (WindowedValue<?> value : held) {
      holdMs = Math.min(holdMs, value.getTimestamp().getMillis());
    }
    for (int i = 0; i < n; i++) {
      if (valueKeys.get(i) == null) {
        inner.accept(values.get(i));
      } else {
        inner.acceptKeyed(valueKeys.get(i), values.get(i));
      }
    }
  }

  /** Holds again the elements of {@code part} that this instance owns ({@link OperatorSnapshot#owns}). */
  private void restore(OperatorSnapshot.Part part, OperatorSnapshot snapshot, String stepName) {
    try (DataInputStream data = new DataInputStream(new ByteArrayInputStream(part.bytes()))) {
      int n = data.readInt();
      for (int i = 0; i < n; i++) {
        int keyLength = data.readInt();
        byte[] key = null;
        if (keyLength >= 0) {
          key = new byte[keyLength];
          data.readFully(key);
        }
        WindowedValue<?> element = elementCoder.decode(data);
        if (key != null ? snapshot.owns(key) : snapshot.ownsUnkeyed(part)) {
          hold(key, element);
        }
      }
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("cannot restore the input held for " + stepName + " from the checkpoint ("
          + e + ")", e);
    }
  }

  @Override
  public void finishBundle() {
    inner.finishBundle();
  }

  @Override
  public void close() {
    inner.close();
  }
}
