package dev.weir.runner.state;

import java.util.TreeMap;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.joda.time.Instant;

/**
 * The watermark holds of one keyed operator instance (one task), over all its keys and windows:
 * a multiset of hold timestamps, so that the operator's output watermark can respect the earliest
 * {@code WatermarkHoldState} in O(log n) without scanning state.
 *
 * <p>Kept in memory next to the state that defines it: each {@link CachedStateInternals}
 * watermark-hold cell reports its old and new value here when it changes. Holds do not survive a
 * restart of the operator (Weir does not restore state yet; the state directory is per job).
 *
 * <p>Threading: confined to the task's container thread.
 */
@Internal
public final class WatermarkHolds {
  private final TreeMap<Long, int[]> holds = new TreeMap<>();

  /** Replaces hold {@code old} (null: none) with {@code next} (null: none). */
  public void replace(Instant old, Instant next) {
    if (old != null) {
      long t = old.getMillis();
      int[] count = holds.get(t);
      if (count != null && --count[0] == 0) {
        holds.remove(t);
      }
    }
    if (next != null) {
      holds.computeIfAbsent(next.getMillis(), t -> new int[1])[0]++;
    }
  }

  /** The earliest hold, or {@link BoundedWindow#TIMESTAMP_MAX_VALUE} if there is none. */
  public Instant min() {
    return holds.isEmpty() ? BoundedWindow.TIMESTAMP_MAX_VALUE : new Instant(holds.firstKey().longValue());
  }

  /** The earliest hold in epoch millis, or {@link Long#MAX_VALUE} if there is none. */
  public long minMillis() {
    return holds.isEmpty() ? Long.MAX_VALUE : holds.firstKey();
  }

  /** Number of distinct hold timestamps. */
  public int size() {
    return holds.size();
  }
}
