package dev.weir.runner.executor;

import java.util.ArrayDeque;
import org.apache.samza.system.IncomingMessageEnvelope;

/**
 * A task's overflow for envelopes its downstream streams had no room for. While the outbox is
 * non-empty, every further send is queued behind it (preserving per-stream order) and the
 * container gives the task no new input: the task is <em>blocked</em>. So the outbox holds at most
 * what one input envelope (or one timer firing: a watermark's ready timers fire one at a time,
 * pausing while the outbox is blocked, see {@code StageTask#continueTimers}) produced, and
 * upstream queues fill up in turn: back-pressure without unbounded buffering.
 *
 * <p>Threading: confined to the task's container thread.
 */
final class TaskOutbox {
  private record Pending(InProcessStream stream, int partition, IncomingMessageEnvelope envelope) {}

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

  /** Sends {@code envelope} to partition {@code partition} of {@code stream}, or queues it. */
  public void send(InProcessStream stream, int partition, IncomingMessageEnvelope envelope) {
    if (quiescence != null) {
      quiescence.sent();
    }
    if (pending.isEmpty() && stream.offer(partition, envelope)) {
      return;
    }
    pending.addLast(new Pending(stream, partition, envelope)); // allocates only when blocked
  }

  /**
   * Moves queued envelopes into their streams, in order, until one does not fit.
   *
   * @return the number of envelopes moved
   */
  public int drain() {
    int moved = 0;
    Pending head;
    while ((head = pending.peekFirst()) != null && head.stream().offer(head.partition(), head.envelope())) {
      pending.pollFirst();
      moved++;
    }
    return moved;
  }

  /** Whether envelopes are waiting for room downstream. */
  public boolean isBlocked() {
    return !pending.isEmpty();
  }

  /** Number of waiting envelopes. */
  public int size() {
    return pending.size();
  }
}
