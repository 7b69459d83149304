package dev.weir.runner.time;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;

/**
 * A {@link JobClock} that only moves when {@link #advance} is called: the clock of a job with a
 * {@code TestStream}, advanced by its processing-time events. Starts at
 * {@link BoundedWindow#TIMESTAMP_MIN_VALUE} by default, as Beam's Direct runner's test clock does,
 * so that tests see the same processing times on both runners.
 *
 * <p>Threading: one writer at a time (the test stream's source, on its container thread), any
 * number of readers; the time is a volatile field.
 */
@Internal
public final class ManualJobClock implements JobClock {
  private volatile long millis;

  /** A clock at {@link BoundedWindow#TIMESTAMP_MIN_VALUE}. */
  public ManualJobClock() {
    this(BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis());
  }

  /** A clock at {@code startMillis} (epoch ms). */
  public ManualJobClock(long startMillis) {
    this.millis = startMillis;
  }

  @Override
  public long millis() {
    return millis;
  }

  /**
   * Moves the clock forward.
   *
   * @param deltaMillis how far, in milliseconds
   * @throws IllegalArgumentException if {@code deltaMillis} is negative
   */
  public void advance(long deltaMillis) {
    if (deltaMillis < 0) {
      throw new IllegalArgumentException("a clock cannot go back: advance by " + deltaMillis + " ms");
    }
    millis = millis + deltaMillis; // single writer: no lost update
  }
}
