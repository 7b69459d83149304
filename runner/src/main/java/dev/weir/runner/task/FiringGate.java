package dev.weir.runner.task;

import dev.weir.runner.stream.TaskOutbox;

import java.util.function.BooleanSupplier;

/**
 * A task's answer to its operators' "may I fire one more timer?" (the {@code outputBlocked}
 * argument of {@code Operator.advanceWatermark}): no while the task's outbox waits for room
 * downstream, so the outbox holds at most one firing's output beyond what the streams took. Each
 * "yes" is followed by exactly one firing, so the gate also counts firings: the work count of a
 * pass, reset by the task before each pass.
 *
 * <p>Threading: confined to the task's container thread.
 */
final class FiringGate implements BooleanSupplier {
  private final TaskOutbox outbox;
  private int firings;

  FiringGate(TaskOutbox outbox) {
    this.outbox = outbox;
  }

  /** Returns true (stop firing) while the outbox is blocked; otherwise counts a firing. */
  @Override
  public boolean getAsBoolean() {
    if (outbox.isBlocked()) {
      return true;
    }
    firings++;
    return false;
  }

  /** Starts counting a new pass. */
  void reset() {
    firings = 0;
  }

  /** Timers fired since the last {@link #reset()}. */
  int firings() {
    return firings;
  }
}
