package dev.weir.runner.operators;

import java.util.function.BooleanSupplier;
import org.joda.time.Instant;

/**
 * Drives an operator directly in tests the way the task does around watermarks, through the one
 * watermark call {@link Operator#advanceWatermark}. Threading: the test's thread, which stands in
 * for the container thread.
 */
public final class OperatorDriver {
  /** An outbox that always has room. */
  private static final BooleanSupplier NEVER_BLOCKED = () -> false;
  /** A watermark never above the last one delivered: "no advance, only fire". */
  private static final long NO_ADVANCE = Long.MIN_VALUE;

  private OperatorDriver() {}

  /**
   * Delivers {@code watermark} to {@code operator} and fires every timer it made ready, in slices
   * of {@code slice} (as the task does, minus the pauses for a blocked outbox).
   */
  public static void advance(Operator operator, Instant watermark, int slice) {
    boolean done = operator.advanceWatermark(watermark.getMillis(), slice, NEVER_BLOCKED);
    while (!done) {
      done = operator.advanceWatermark(NO_ADVANCE, slice, NEVER_BLOCKED);
    }
  }

  /** {@link #advance(Operator, Instant, int)} in the task's slice size. */
  public static void advance(Operator operator, Instant watermark) {
    advance(operator, watermark, 64);
  }

  /** Delivers {@code watermark} and fires nothing (a timer budget of 0); returns whether no timer is ready. */
  public static boolean deliver(Operator operator, Instant watermark) {
    return operator.advanceWatermark(watermark.getMillis(), 0, NEVER_BLOCKED);
  }

  /** Fires up to {@code max} ready timers without a watermark advance; returns whether none is left. */
  public static boolean fire(Operator operator, int max) {
    return operator.advanceWatermark(NO_ADVANCE, max, NEVER_BLOCKED);
  }

  /** Whether {@code operator} has ready timers left to fire (asks with a budget of 0). */
  public static boolean hasReadyTimers(Operator operator) {
    return !operator.advanceWatermark(NO_ADVANCE, 0, NEVER_BLOCKED);
  }
}
