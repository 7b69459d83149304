package dev.weir.runner.stream;

import org.apache.beam.sdk.annotations.Internal;

import dev.weir.runner.time.Quiescence;
import java.util.ArrayDeque;

/**
 * A task's overflow for messages its downstream streams had no room for. While the outbox is
 * non-empty, every further send is queued behind it (preserving per-stream order) and the
 * container gives the task no new input: the task is <em>blocked</em>. So the outbox holds at most
 * what one input message (or one timer firing: a watermark's ready timers fire one at a time,
 * pausing while the outbox is blocked, see {@code StageTask#continueTimers}) produced, and
 * upstream queues fill up in turn: back-pressure without unbounded buffering.
 *
 * <p>Threading: confined to the task's container thread.
 */
@Internal
public final class TaskOutbox {
  private record Pending(InProcessStream stream, int partition, Object message) {}

  private final ArrayDeque<Pending> pending = new ArrayDeque<>();
  /** Counts sends when the job tracks quiescence (test streams); null otherwise. */
  private final Quiescence quiescence;

  /** An outbox that does not count sends. */
  public TaskOutbox() {
    this(null);
  }

  /** An outbox that counts every send in {@code quiescence} (may be null: no counting). */
  public TaskOutbox(Quiescence quiescence) {
    this.quiescence = quiescence;
  }

  /** Sends {@code message} to partition {@code partition} of {@code stream}, or queues it. */
  public void send(InProcessStream stream, int partition, Object message) {
    if (quiescence != null) {
      quiescence.sent();
    }
    if (pending.isEmpty() && stream.offer(partition, message)) {
      return;
    }
    pending.addLast(new Pending(stream, partition, message)); // allocates only when blocked
  }

  /**
   * Moves queued messages into their streams, in order, until one does not fit.
   *
   * @return the number of messages moved
   */
  public int drain() {
    int moved = 0;
    Pending head;
    while ((head = pending.peekFirst()) != null && head.stream().offer(head.partition(), head.message())) {
      pending.pollFirst();
      moved++;
    }
    return moved;
  }

  /** Whether messages are waiting for room downstream. */
  public boolean isBlocked() {
    return !pending.isEmpty();
  }

  /** Number of waiting messages. */
  public int size() {
    return pending.size();
  }
}
