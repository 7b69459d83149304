package dev.weir.runner.operators;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * An operator that reads side inputs: the task hands it the elements and watermarks of each
 * broadcast side-input stream, by the view's index in the operator's side-input list.
 *
 * <p>Threading: called only on the task's container thread.
 */
@Internal
public interface SideInputConsumer {
  /** One element of side input {@code index} arrived. */
  void acceptSideInput(int index, WindowedValue<?> element);

  /** The watermark (epoch ms) of side input {@code index} advanced to {@code watermarkMs}. */
  void advanceSideInputWatermark(int index, long watermarkMs);
}
