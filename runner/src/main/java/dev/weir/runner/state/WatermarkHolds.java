package dev.weir.runner.state;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
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
 * watermark-hold cell reports its old and new value here when it changes. A checkpoint keeps the
 * multiset ({@link #snapshot()}), and an operator restored from it starts with it again
 * ({@link #restore}), so that holds of keys not touched since still hold.
 *
 * <p>Threading: confined to the task's container thread.
 */
@Internal
public final class WatermarkHolds {
  /** The name of a keyed operator's checkpoint part holding its {@link #snapshot()}. */
  public static final String SNAPSHOT_PART = "holds";

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

  /**
   * The multiset as bytes for a checkpoint (count, then per distinct hold its epoch ms and
   * multiplicity, big-endian), or null if it is empty.
   */
  public byte[] snapshot() {
    if (holds.isEmpty()) {
      return null;
    }
    ByteBuffer out = ByteBuffer.allocate(4 + holds.size() * 12).putInt(holds.size());
    holds.forEach((ms, count) -> out.putLong(ms).putInt(count[0]));
    return out.array();
  }

  /**
   * Adds the holds of a {@link #snapshot()} (null: none).
   *
   * @throws IllegalArgumentException if the bytes are not such a snapshot
   */
  public void restore(byte[] snapshot) {
    if (snapshot == null) {
      return;
    }
    try {
      ByteBuffer in = ByteBuffer.wrap(snapshot);
      int n = in.getInt();
      for (int i = 0; i < n; i++) {
        long ms = in.getLong();
        holds.computeIfAbsent(ms, t -> new int[1])[0] += in.getInt();
      }
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException("truncated watermark-hold snapshot (" + snapshot.length + " bytes)", e);
    }
  }

  /** Number of distinct hold timestamps. */
  public int size() {
    return holds.size();
  }
}
