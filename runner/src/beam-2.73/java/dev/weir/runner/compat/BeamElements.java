package dev.weir.runner.compat;

import java.util.Collection;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;

/**
 * Rebuilds an element with new windows while keeping its metadata (record id and offset, drain
 * cause), in this build's Beam minor's spelling (Beam 2.73: the drain cause is a {@code CausedByDrain}).
 *
 * <p>Threading: stateless; called on the task thread. One allocation per call, as
 * {@code WindowedValues.of}.
 */
public final class BeamElements {
  private BeamElements() {}

  /** {@code element} in {@code windows}, with its value, timestamp, pane and metadata. */
  public static <T> WindowedValue<T> inWindows(WindowedValue<T> element, Collection<? extends BoundedWindow> windows) {
    return WindowedValues.of(element.getValue(), element.getTimestamp(), windows, element.getPaneInfo(),
        element.getRecordId(), element.getRecordOffset(), element.causedByDrain());
  }
}
