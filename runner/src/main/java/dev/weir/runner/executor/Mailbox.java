package dev.weir.runner.executor;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.apache.beam.sdk.annotations.Internal;

/**
 * The one way another thread hands work to a container's run loop: a queue of letters
 * ({@link Runnable}s) that any thread {@linkplain #put puts} and only the container's thread
 * {@linkplain #runLetters runs}, in a named, timed phase of its loop
 * ({@code RunLoopMetrics.Phase.MAILBOX}). Flink's {@code MailboxProcessor}/{@code MailboxExecutor}
 * are the anchor: a task's state stays confined to its thread because nothing else ever touches
 * it; other threads only ask the thread to.
 *
 * <h2>Who writes letters</h2>
 *
 * Worker threads that ran a DoFn's {@code @ProcessElement} for a concurrent ParDo
 * ({@code ConcurrentParDoOperator}): the letter emits the element's outputs into the fused graph,
 * which is confined to the container thread. Letters never block and never call back into the
 * thread that wrote them.
 *
 * <h2>Waking the loop</h2>
 *
 * A container with nothing to do parks (its idle back-off, up to 1 ms); a letter should not wait
 * for the park to time out. The loop parks through {@link #park(long)}, which publishes that it is
 * about to park, checks the queue once more and then parks; {@link #put} unparks the owner only
 * while that flag is up, so a busy loop costs writers no {@code unpark} (a futex call) per letter.
 * The flag is raised before the re-check and read after the offer (both volatile), so a letter
 * offered while the owner decides to park is either seen by the re-check or followed by an unpark.
 *
 * <p>Threading: {@link #put} from any thread; everything else from the owner (the container's
 * thread, {@link #bindOwner} at the start of its loop). Unbounded on purpose: letters are bounded
 * by their writers (a concurrent ParDo writes at most one per element in flight, and elements in
 * flight are bounded by {@code --taskMaxConcurrency}).
 */
@Internal
public final class Mailbox {
  private final ConcurrentLinkedQueue<Runnable> letters = new ConcurrentLinkedQueue<>();
  /** Whether the owner is parking or about to; raised and lowered by the owner only. */
  private volatile boolean parking;
  /** The thread that runs the letters; set once by the owner before any letter may be put. */
  private volatile Thread owner;

  /** Makes the calling thread the owner (the container's, at the start of its run loop). */
  public void bindOwner() {
    owner = Thread.currentThread();
  }

  /**
   * Hands {@code letter} to the owner's loop, which runs it in its next mailbox phase (FIFO per
   * writer). Any thread; never blocks.
   */
  public void put(Runnable letter) {
    letters.offer(letter);
    if (parking) {
      Thread thread = owner;
      if (thread != null) {
        LockSupport.unpark(thread);
      }
    }
  }

  /**
   * Runs up to {@code max} letters in the order they arrived. Owner only. A letter that throws
   * ends this call with its exception; later letters stay queued.
   *
   * @return letters run
   */
  public int runLetters(int max) {
    int ran = 0;
    Runnable letter;
    while (ran < max && (letter = letters.poll()) != null) {
      ran++;
      letter.run();
    }
    return ran;
  }

  /** Whether the calling thread is the owner. Any thread. */
  public boolean isOwner() {
    return Thread.currentThread() == owner;
  }

  /** Whether no letter waits. Any thread; a volatile read. */
  public boolean isEmpty() {
    return letters.isEmpty();
  }

  /**
   * Parks the owner for up to {@code ns} nanoseconds unless a letter waits; a {@link #put} during
   * the park ends it early. Owner only.
   */
  public void park(long ns) {
    parking = true;
    try {
      if (letters.isEmpty()) {
        LockSupport.parkNanos(this, ns);
      }
    } finally {
      parking = false;
    }
  }

  /** Drops every waiting letter (the loop ended; their work is abandoned with it). Owner only. */
  void clear() {
    letters.clear();
  }
}
