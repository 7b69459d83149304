package dev.weir.runner.time;


import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.beam.sdk.annotations.Internal;

/**
 * Detects that a job is quiescent: no envelope is queued in or being processed from any
 * in-process stream, and every container has run its processing-time tick at the current clock
 * at least once since then, so that everything caused by earlier input (including timers made
 * ready by a clock advance) has run. A {@code TestStream} source waits for this before each of
 * its events, which makes watermark and processing-time advances deterministic.
 *
 * <p>Counting: every envelope a task sends counts once in {@link #sent()} (also when it waits in
 * the task's outbox), and once in {@link #processed()} after the consuming task has processed it,
 * so any output it caused has been counted as sent before. Only jobs that need quiescence
 * (those with a test stream) create one; others pass null, so the hot path pays one null check.
 *
 * <p>Pace: while a probe waits with nothing in flight ({@link #awaited()}), containers tick on
 * every run-loop iteration instead of every {@code Container.TICK_NS}, so that a test stream
 * replays an event as soon as the job has settled rather than after two tick periods. Those ticks
 * also close every open bundle (what a bundle holds back, e.g. a lifted combine's partial
 * accumulators, is part of what the event caused; its output counts as sent, so the probe waits
 * for it); otherwise ticking more often changes nothing a tick decides (timers fire by the clock),
 * only how soon quiescence is observed.
 *
 * <p>Threading: {@link #sent()}, {@link #processed()} and {@link #ticked} from any container
 * thread (atomics: two contended increments per envelope, acceptable for test streams only);
 * a {@link Probe} belongs to one source partition, on its container's thread.
 */
@Internal
public final class Quiescence {
  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong processed = new AtomicLong();
  /** Per container: number of ticks run; Long.MAX_VALUE once the container exited. */
  private final AtomicLongArray ticks;
  /** Per container: the clock value its last tick ran at; Long.MAX_VALUE once it exited. */
  private final AtomicLongArray tickedAt;
  /** Whether a probe saw nothing in flight and now waits for ticks; cleared when one fires. */
  private volatile boolean awaited;

  /** Tracks {@code containers} containers. */
  public Quiescence(int containers) {
    this.ticks = new AtomicLongArray(containers);
    this.tickedAt = new AtomicLongArray(containers);
    for (int i = 0; i < containers; i++) {
      tickedAt.set(i, Long.MIN_VALUE);
    }
  }

  /** An envelope was sent into an in-process stream (or queued for one). */
  public void sent() {
    sent.incrementAndGet();
  }

  /** An envelope read from an in-process stream has been processed. */
  public void processed() {
    processed.incrementAndGet();
  }

  /** Container {@code container} finished a tick of all its tasks at clock {@code clockMillis}. */
  public void ticked(int container, long clockMillis) {
    tickedAt.set(container, clockMillis);
    ticks.incrementAndGet(container);
  }

  /** Container {@code container} exited; it no longer holds quiescence back. */
  public void exited(int container) {
    tickedAt.set(container, Long.MAX_VALUE);
    ticks.set(container, Long.MAX_VALUE);
  }

  /**
   * Whether a probe is waiting for the containers' ticks (nothing in flight): containers should
   * tick now rather than at their next tick period. One volatile read; any container thread.
   */
  public boolean awaited() {
    return awaited;
  }

  /** A new probe, for one waiting source. */
  public Probe probe() {
    return new Probe();
  }

  /**
   * Checks quiescence in two steps: a first observation (nothing in flight, every container ticked
   * at the clock) arms the probe; it fires when, later, nothing was sent in between and every live
   * container ran at least one more tick. Confined to the caller's thread.
   */
  public final class Probe {
    private boolean armed;
    private long armedSent;
    private final long[] armedTicks = new long[ticks.length()];

    /**
     * Whether the job is quiescent at clock {@code clockMillis}; call repeatedly (it never blocks).
     * Allocation-free: it runs on every poll of a waiting source.
     */
    public boolean isQuiescent(long clockMillis) {
      long p = processed.get();
      long s = sent.get(); // read after processed: p == s means nothing was in flight at this read
      if (p != s) {
        armed = false;
        return false;
      }
      if (!awaited) {
        awaited = true; // only ticks are missing now: ask the containers for them
      }
      for (int c = 0; c < armedTicks.length; c++) {
        if (tickedAt.get(c) < clockMillis) {
          armed = false;
          return false;
        }
      }
      if (!armed || s != armedSent) {
        armed = true;
        armedSent = s;
        for (int c = 0; c < armedTicks.length; c++) {
          armedTicks[c] = ticks.get(c);
        }
        return false;
      }
      for (int c = 0; c < armedTicks.length; c++) {
        long t = ticks.get(c);
        if (t != Long.MAX_VALUE && t <= armedTicks[c]) {
          return false;
        }
      }
      armed = false;
      awaited = false;
      return true;
    }
  }
}
