package dev.weir.runner.metrics;


import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.beam.sdk.annotations.Internal;

/**
 * Where one container's run loop spends its time (Samza's {@code RunLoop} keeps choose, process,
 * commit and window timings and a utilization the same way): cumulative nanoseconds per
 * {@link Phase}, the number of loop iterations, and from them the loop's utilization, busy time
 * over busy plus idle time.
 *
 * <p>Cost: the loop reads {@link System#nanoTime()} once per phase boundary per iteration (never
 * per element) and adds each phase's time with {@link #add}: a plain read and an opaque write of
 * one array slot, no allocation, no lock.
 *
 * <p>Threading: written only by the container's thread; {@link #snapshot()} may be called from
 * any thread while the job runs. Each value in a snapshot is one the loop wrote (opaque reads of
 * longs never tear), but values may come from adjacent iterations: the snapshot is not atomic
 * across phases.
 */
@Internal
public final class RunLoopMetrics {
  /** The phases of one run-loop iteration, in loop order. */
  public enum Phase {
    /** Running letters other threads handed the loop (elements completed on worker threads). */
    MAILBOX,
    /** Moving blocked tasks' output into downstream streams. */
    DRAIN_OUTBOXES,
    /** Firing slices of ready timers of FIRING or ENDING tasks. */
    FIRE_TIMERS,
    /** Polling input partitions and processing their envelopes. */
    PROCESS_ENVELOPES,
    /** The periodic tick: timed-out bundles, processing-time timers. */
    TICK,
    /** The container's commit point. */
    COMMIT,
    /** After an iteration without work: encoding state values any task sealed ({@code SealerQueue}). */
    SEAL,
    /** Spinning, yielding or parking after an iteration without work. */
    IDLE
  }

  private static final Phase[] PHASES = Phase.values();
  private static final int ITERATIONS = PHASES.length;

  /** Per phase: cumulative ns; the last slot: iterations. */
  private final AtomicLongArray values = new AtomicLongArray(PHASES.length + 1);

  /** Adds {@code ns} nanoseconds to {@code phase}. Container thread only. */
  public void add(Phase phase, long ns) {
    int slot = phase.ordinal();
    values.setOpaque(slot, values.getPlain(slot) + ns);
  }

  /** Counts one loop iteration. Container thread only. */
  public void iterationDone() {
    values.setOpaque(ITERATIONS, values.getPlain(ITERATIONS) + 1);
  }

  /** The values so far. Any thread; allocates the snapshot. */
  public Snapshot snapshot() {
    long[] ns = new long[PHASES.length];
    for (int i = 0; i < ns.length; i++) {
      ns[i] = values.getOpaque(i);
    }
    return new Snapshot(ns, values.getOpaque(ITERATIONS));
  }

  /**
   * The run loop's cumulative times at one moment.
   *
   * <p>Immutable; any thread.
   */
  public static final class Snapshot {
    private final long[] phaseNs;
    private final long iterations;

    Snapshot(long[] phaseNs, long iterations) {
      this.phaseNs = phaseNs;
      this.iterations = iterations;
    }

    /** Cumulative nanoseconds spent in {@code phase}. */
    public long phaseNs(Phase phase) {
      return phaseNs[phase.ordinal()];
    }

    /** Loop iterations completed. */
    public long iterations() {
      return iterations;
    }

    /** Cumulative nanoseconds in every phase but {@link Phase#IDLE}. */
    public long busyNs() {
      long busy = 0;
      for (Phase phase : PHASES) {
        if (phase != Phase.IDLE) {
          busy += phaseNs[phase.ordinal()];
        }
      }
      return busy;
    }

    /** Cumulative nanoseconds in {@link Phase#IDLE}. */
    public long idleNs() {
      return phaseNs[Phase.IDLE.ordinal()];
    }

    /** Busy time over busy plus idle time, from 0 to 1; 0 before the first iteration. */
    public double utilization() {
      long busy = busyNs();
      long total = busy + idleNs();
      return total == 0 ? 0.0 : (double) busy / total;
    }

    @Override
    public String toString() {
      StringBuilder s = new StringBuilder("RunLoop{iterations=").append(iterations);
      for (Phase phase : PHASES) {
        s.append(", ").append(phase).append("Ns=").append(phaseNs[phase.ordinal()]);
      }
      return s.append(", utilization=").append(String.format("%.3f", utilization())).append('}').toString();
    }
  }
}
