package dev.weir.runner.operators;

import dev.weir.runner.sideinput.SideInputs;
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
 * <p>Memory: pushed-back elements are kept on the heap by reference; nothing is copied.
 *
 * <p>Threading: the operator's container thread only.
 *
 * @param <E> what the operator keeps per pushed-back element
 */
final class SideInputPushback<E> {
  /** Snapshot part of the side inputs' contents. */
  static final String PART = "side-inputs";
  private final SideInputs sideInputs;
  private List<E> pushedBack = new ArrayList<>();
  private long minTimestampMs = Long.MAX_VALUE;

  /** @param views the operator's side inputs, in the order of their broadcast streams (not empty) */
  SideInputPushback(List<PCollectionView<?>> views) {
    this.sideInputs = new SideInputs(views);
  }

  /** The side inputs' contents and readiness: the reader to hand runners-core. */
  SideInputs sideInputs() {
    return sideInputs;
  }

  /** Keeps {@code element}, whose side inputs are not ready, holding the output at {@code timestampMs}. */
  void pushBack(E element, long timestampMs) {
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
  boolean acceptSideInput(int index, WindowedValue<?> element) {
    return sideInputs.add(index, element) && !pushedBack.isEmpty();
  }

  /**
   * Advances side input {@code index}'s watermark to {@code watermarkMs} (epoch ms).
   *
   * @return whether elements wait and a window may have become ready: the operator should retry them
   */
  boolean advanceSideInputWatermark(int index, long watermarkMs) {
    return sideInputs.advanceWatermark(index, watermarkMs) && !pushedBack.isEmpty();
  }

  /** Removes and returns every pushed-back element, in arrival order; the hold is released. */
  List<E> takeAll() {
    List<E> all = pushedBack;
    pushedBack = new ArrayList<>();
    minTimestampMs = Long.MAX_VALUE;
    return all;
  }

  /** The earliest timestamp of a pushed-back element (epoch ms), or {@link Long#MAX_VALUE} if none. */
  long holdMs() {
    return minTimestampMs;
  }

  /**
   * Whether a checkpoint may be taken: no element is pushed back (pushed-back elements are not
   * written into checkpoints; a checkpoint waits until they ran).
   */
  boolean readyForCheckpoint() {
    return pushedBack.isEmpty();
  }

  /** Writes the side inputs' contents into {@code out} (part {@value #PART}). */
  void snapshot(OperatorSnapshot out) {
    out.put(PART, sideInputs.snapshot());
  }

  /** Restores the side inputs' contents from a checkpoint, if it has them. */
  void restore(OperatorSnapshot restored) {
    byte[] bytes = restored.get(PART);
    if (bytes != null) {
      sideInputs.restore(bytes);
    }
  }

  /** Number of pushed-back elements. */
  int size() {
    return pushedBack.size();
  }
}
