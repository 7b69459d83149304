package dev.weir.runner.operators;

import org.apache.beam.sdk.annotations.Internal;

import dev.weir.runner.sideinput.SideInputs;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * The side inputs of one DoFn operator and the main-input elements pushed back until they are
 * ready; shared by the stateless, stateful and splittable ParDo operators.
 *
 * <h2>Life of a pushed-back element</h2>
 *
 * The operator runs each main-input element through runners-core's pushback runner, which
 * processes the windows whose side inputs are ready ({@link SideInputs#isReady}) and returns the
 * rest; the operator {@link #pushBack}s those here, in arrival order, with whatever it needs to
 * run them again ({@code E}: the element itself, or with its encoded key) and the timestamp that
 * holds its output watermark. When a side-input element or watermark may have made a window ready
 * ({@link #acceptSideInput} / {@link #advanceSideInputWatermark} return true), the operator
 * {@link #takeAll takes all} of them and runs them again in a new bundle (runners-core's pushback
 * runner remembers not-ready windows until its next {@code startBundle}); those still not ready
 * come back here. Side-input watermarks never hold the main input; a pushed-back element holds
 * the operator's output watermark at its timestamp ({@link #holdMs()}).
 *
 * <p>Memory: pushed-back elements are kept on the heap by reference; nothing is copied. A
 * checkpoint writes them through the operator's {@link Codec}, so it need not wait for them.
 *
 * <p>Threading: the operator's container thread only.
 *
 * @param <E> what the operator keeps per pushed-back element
 */
@Internal
public final class SideInputPushback<E> {
  /** Snapshot part of the side inputs' contents. */
  public static final String PART = "side-inputs";
  private final SideInputs sideInputs;
  private List<E> pushedBack = new ArrayList<>();
  private long minTimestampMs = Long.MAX_VALUE;

  /**
   * How a checkpoint writes and reads a pushed-back element.
   *
   * @param <E> what the operator keeps per pushed-back element
   */
  public interface Codec<E> {
    void encode(E element, DataOutputStream out) throws IOException;

    E decode(DataInputStream in) throws IOException;

    /** The timestamp (epoch ms) that holds the output watermark while the element waits. */
    long timestampMs(E element);

    /**
     * The element's encoded key, if the operator is keyed (a rescaled restore gives the element to
     * the task owning its key); null for unkeyed elements.
     */
    default byte[] keyBytes(E element) {
      return null;
    }
  }

  /** Snapshot part of the pushed-back elements. */
  static final String ELEMENTS_PART = "pushed-back";

  /** Writes and reads pushed-back elements for checkpoints; null: a checkpoint waits until none waits. */
  private final Codec<E> codec;

  /** @param views the operator's side inputs, in the order of their broadcast streams (not empty) */
  public SideInputPushback(List<PCollectionView<?>> views) {
    this(views, null);
  }

  /**
   * @param views the operator's side inputs, in the order of their broadcast streams (not empty)
   * @param codec writes pushed-back elements into checkpoints; null if the operator cannot, and a
   *     checkpoint then waits until no element is pushed back ({@link #readyForCheckpoint()})
   */
  public SideInputPushback(List<PCollectionView<?>> views, Codec<E> codec) {
    this.sideInputs = new SideInputs(views);
    this.codec = codec;
  }

  /** The side inputs' contents and readiness: the reader to hand runners-core. */
  public SideInputs sideInputs() {
    return sideInputs;
  }

  /** Keeps {@code element}, whose side inputs are not ready, holding the output at {@code timestampMs}. */
  public void pushBack(E element, long timestampMs) {
    pushedBack.add(element);
    if (timestampMs < minTimestampMs) {
      minTimestampMs = timestampMs;
    }
  }

  /**
   * Adds a broadcast element of side input {@code index}.
   *
   * @return whether elements wait and a window may have become ready (a triggered view's pane):
   *     the operator should retry them
   */
  public boolean acceptSideInput(int index, WindowedValue<?> element) {
    return sideInputs.add(index, element) && !pushedBack.isEmpty();
  }

  /**
   * Advances side input {@code index}'s watermark to {@code watermarkMs} (epoch ms).
   *
   * @return whether elements wait and a window may have become ready: the operator should retry them
   */
  public boolean advanceSideInputWatermark(int index, long watermarkMs) {
    return sideInputs.advanceWatermark(index, watermarkMs) && !pushedBack.isEmpty();
  }

  /** Removes and returns every pushed-back element, in arrival order; the hold is released. */
  public List<E> takeAll() {
    List<E> all = pushedBack;
    pushedBack = new ArrayList<>();
    minTimestampMs = Long.MAX_VALUE;
    return all;
  }

  /** The earliest timestamp of a pushed-back element (epoch ms), or {@link Long#MAX_VALUE} if none. */
  public long holdMs() {
    return minTimestampMs;
  }

  /**
   * Whether a checkpoint may be taken: always with a {@link Codec} (pushed-back elements go into
   * the checkpoint); without one only while no element is pushed back.
   */
  public boolean readyForCheckpoint() {
    return codec != null || pushedBack.isEmpty();
  }

  /**
   * Writes the side inputs' contents (part {@value #PART}) and the pushed-back elements (part
   * {@value #ELEMENTS_PART}: a count, then each element through the {@link Codec}) into {@code out}.
   *
   * @throws IllegalStateException if an element cannot be encoded
   */
  public void snapshot(OperatorSnapshot out) {
    out.put(PART, sideInputs.snapshot());
    if (codec == null || pushedBack.isEmpty()) {
      return;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream data = new DataOutputStream(bytes)) {
      data.writeInt(pushedBack.size());
      for (E element : pushedBack) {
        codec.encode(element, data);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot write a pushed-back element into a checkpoint (" + e + ")", e);
    }
    out.put(ELEMENTS_PART, bytes.toByteArray());
  }

  /**
   * Restores the side inputs' contents and the pushed-back elements from a checkpoint, if it has
   * them (after a rescaled restore, the elements this instance owns of every old instance's); the
   * elements wait (and hold) as before, until a side input changes.
   *
   * @throws IllegalStateException if the elements cannot be decoded
   */
  public void restore(OperatorSnapshot restored) {
    byte[] bytes = restored.get(PART);
    if (bytes != null) {
      sideInputs.restore(bytes);
    }
    if (codec == null) {
      return;
    }
    for (OperatorSnapshot.Part part : restored.all(ELEMENTS_PART)) {
      try (DataInputStream data = new DataInputStream(new ByteArrayInputStream(part.bytes()))) {
        int n = data.readInt();
        for (int i = 0; i < n; i++) {
          E element = codec.decode(data);
          byte[] key = codec.keyBytes(element);
          if (key != null ? restored.owns(key) : restored.ownsUnkeyed(part)) {
            pushBack(element, codec.timestampMs(element));
          }
        }
      } catch (IOException | RuntimeException e) {
        throw new IllegalStateException("cannot restore the pushed-back elements from the checkpoint (" + e + ")", e);
      }
    }
  }

  /** Number of pushed-back elements. */
  public int size() {
    return pushedBack.size();
  }
}
