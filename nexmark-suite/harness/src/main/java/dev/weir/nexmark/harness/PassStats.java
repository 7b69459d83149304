// Role: one pass of the harness (a warm-up pass or a measured pass) as it ran: its events, its wall
// time and the time HotSpot's JIT compilers spent during it; and the one place that times a pass.
// Threading: an immutable record; measure() runs the pass on the calling thread (the harness's
// main thread) and reads the JVM-wide compilation total around it.
package dev.weir.nexmark.harness;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * One pass as run (written to the process facts as it is, by Jackson: {@code events},
 * {@code seconds}, {@code compileSeconds}).
 *
 * @param events the pass's events
 * @param seconds its wall time, s
 * @param compileSeconds time the JIT compilers spent during it, summed over compiler threads, s
 *     (-1 when the JVM does not report it)
 */
public record PassStats(long events, double seconds, double compileSeconds) {
  /** A pass's body. */
  @FunctionalInterface
  public interface Body {
    void run() throws Exception;
  }

  /** Compilation time over wall time (may exceed 1 with several compiler threads); -1 if unknown. */
  public double compileShare() {
    return compileSeconds < 0 ? -1 : compileSeconds / Math.max(seconds, 1e-3);
  }

  /**
   * Runs {@code body} and times it: wall time from {@link System#nanoTime()}, compile time from
   * {@link CompilationMXBean#getTotalCompilationTime()} (all compiler threads, so it counts any
   * compilation during the pass, whichever code it was for).
   *
   * @param events the events the body runs, recorded as they are
   * @throws Exception whatever the body throws
   */
  public static PassStats measure(long events, Body body) throws Exception {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    boolean timed = jit != null && jit.isCompilationTimeMonitoringSupported();
    long compileMs = timed ? jit.getTotalCompilationTime() : 0;
    long startNs = System.nanoTime();
    body.run();
    double sec = (System.nanoTime() - startNs) / 1e9;
    double compileSec = timed ? (jit.getTotalCompilationTime() - compileMs) / 1e3 : -1;
    return new PassStats(events, sec, compileSec);
  }
}
