package dev.weir.runner.time;


import java.util.concurrent.atomic.AtomicInteger;
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
 * also close every open bundle when nothing is in flight at the tick ({@link #settled()}): what a
 * bundle holds back, e.g. a lifted combine's partial accumulators, is part of what the event
 * caused; its output counts as sent, so the probe waits for it. Otherwise ticking more often
 * changes nothing a tick decides (timers fire by the clock), only how soon quiescence is observed.
 *
 * <p>Bundles: while a source replays ({@link #replaying()}: from {@link #probe()} to
 * {@link Probe#finish()}), tasks do not close bundles after {@code --maxBundleTimeMs}, only at
 * settled ticks (besides {@code --maxBundleSize}, watermarks, the end of input, and in the source's
 * stage the end of each event). Since the source emits an event only once the job is quiescent,
 * and a settled tick needs everything sent before it processed, each bundle of a stage then holds
 * what one event brought into the stage: an {@code addElements} group is one bundle, as on Beam's
 * Direct runner, and a GroupByKey hands its elements of a key to the trigger together.
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
  /** Probes whose source still has events to replay ({@link Probe#finish()} not called yet). */
  private final AtomicInteger replaying = new AtomicInteger();

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

  /**
   * Whether a probe waits for the job to settle ({@link #awaited()}) and nothing is in flight now:
   * every envelope sent has been processed, so every task has received all that the work before
   * it caused, and closing its open bundle now puts no later input of the same event in a bundle
   * of its own. What the closed bundles emit is in flight again, and the next settled tick closes
   * the bundles it lands in. Two atomic reads and a volatile one; any container thread, once per tick.
   */
  public boolean settled() {
    if (!awaited) {
      return false;
    }
    long p = processed.get();
    return p == sent.get(); // processed first: equal means nothing was in flight at this read
  }

  /**
   * Whether some test stream still has events to replay: its bundles then end when the job
   * settled after an event, not after a time (see {@code StageTask.tick}). One volatile read.
   */
  public boolean replaying() {
    return replaying.get() > 0;
  }

  /** A new probe, for one waiting source; the source replays until it calls {@link Probe#finish()}. */
  public Probe probe() {
    replaying.incrementAndGet();
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
    private boolean finished;

    /** The probe's source replayed its last event (or closed); idempotent. */
    public void finish() {
      if (!finished) {
        finished = true;
        replaying.decrementAndGet();
      }
    }

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
