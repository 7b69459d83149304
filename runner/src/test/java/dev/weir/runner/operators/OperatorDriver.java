package dev.weir.runner.operators;

import org.joda.time.Instant;

/**
 * Drives an operator directly in tests the way the task does around watermarks. Threading: the
 * test's thread, which stands in for the container thread.
 */
public final class OperatorDriver {
  private OperatorDriver() {}

  /**
   * Delivers {@code watermark} to {@code operator} and fires every timer it made ready, in slices
   * of {@code slice} (as the task does, minus the pauses for a blocked outbox).
   */
  public static void advance(Operator operator, Instant watermark, int slice) {
    operator.onWatermark(watermark);
    while (operator.hasReadyTimers()) {
      operator.fireReadyTimers(slice);
    }
  }

  /** {@link #advance(Operator, Instant, int)} in the task's slice size. */
  public static void advance(Operator operator, Instant watermark) {
    advance(operator, watermark, 64);
  }
}
