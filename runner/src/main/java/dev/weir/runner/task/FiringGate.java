package dev.weir.runner.task;

import dev.weir.runner.stream.TaskOutbox;

import java.util.function.BooleanSupplier;

/**
 * A task's answer to its operators' "may I fire one more timer?" (the {@code outputBlocked}
 * argument of {@code Operator.advanceWatermark}): no while the task's outbox waits for room
 * downstream, so the outbox holds at most one firing's output beyond what the streams took, and
 * while a concurrent ParDo of the stage has all the elements in flight it may (so what waits for
 * its workers is bounded the same way). Each
 * "yes" is followed by exactly one firing, so the gate also counts firings: the work count of a
 * pass, reset by the task before each pass.
 *
 * <p>Threading: confined to the task's container thread.
 */
final class FiringGate implements BooleanSupplier {
  private final TaskOutbox outbox;
  /** Whether a concurrent ParDo of the stage is saturated ({@code StageGraph.saturated()}). */
  private final BooleanSupplier saturated;
  private int firings;

  FiringGate(TaskOutbox outbox, BooleanSupplier saturated) {
    this.outbox = outbox;
    this.saturated = saturated;
  }

  /** Returns true (stop firing) while the outbox is blocked or a concurrent ParDo saturated; otherwise counts a firing. */
  @Override
  public boolean getAsBoolean() {
    if (outbox.isBlocked() || saturated.getAsBoolean()) {
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
