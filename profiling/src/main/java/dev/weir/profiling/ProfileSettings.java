package dev.weir.profiling;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * What a profiling session records: CPU samples with the given engine and interval and allocation
 * samples, together in one JFR file (async-profiler's {@code jfr} output), along with any
 * {@code one.profiler.Span} intervals the program emits (Weir tags each PTransform's bundles).
 *
 * <h2>Frame precision against overhead</h2>
 *
 * An agent loaded at the JVM's start turns on HotSpot's {@code DebugNonSafepoints} unless the
 * command line set it: the JIT then records the inlined frames of every instruction, not only of
 * safepoints and calls, so a sample lands on the exact inlined method. That precision costs the
 * profiled JVM more than the sampling does: on Nexmark Q0 on Weir (5,000,000 events, interleaved
 * runs of the same child command) the flag alone, without the profiler, took 2.9% more CPU
 * seconds; the profiler with it cost 4.5–5% of the throughput, without it 1% (CPU samples only)
 * and 2.5% (with allocation samples). So by default ({@code preciseFrames} false) the options
 * from {@link #jvmOptions} turn the flag off explicitly, which async-profiler respects: a sample
 * in compiled code is then attributed to the inlined frames of the nearest recorded position (the
 * same method or its caller in the inlining tree), which is what JFR's own method sampling does
 * without the flag. Per-PTransform shares (spans: thread and time) do not depend on it.
 *
 * @param engine the CPU sampling engine
 * @param cpuIntervalNs CPU sampling interval, in ns of CPU time (async-profiler's default: 10 ms)
 * @param allocIntervalBytes allocation sampling interval, in bytes allocated (0 disables)
 * @param preciseFrames whether samples are attributed to the exact inlined frame (HotSpot's
 *     {@code DebugNonSafepoints}, at a cost; see above)
 * @param jfr the JFR file to write
 */
public record ProfileSettings(CpuEngine engine, long cpuIntervalNs, long allocIntervalBytes, boolean preciseFrames,
    Path jfr) {

  /** 10 ms CPU interval: about 100 samples per busy core per second, well under 3% overhead. */
  public static final long DEFAULT_CPU_INTERVAL_NS = 10_000_000L;
  /**
   * One allocation sample per 2 MiB allocated. At 512 KiB, Nexmark Q0 (about 5.7 KB allocated per
   * event) took some 2,700 allocation samples per second and its CPU seconds rose 8-12% over a
   * CPU-only profile; at 2 MiB they were within the run-to-run spread (profiling/README.md).
   * A 3,000,000-event run still gets about 8,000 samples.
   */
  public static final long DEFAULT_ALLOC_INTERVAL_BYTES = 2L << 20;

  /** Validates. */
  public ProfileSettings {
    Objects.requireNonNull(engine, "engine");
    Objects.requireNonNull(jfr, "jfr");
    if (cpuIntervalNs <= 0) {
      throw new IllegalArgumentException("cpuIntervalNs must be > 0, was " + cpuIntervalNs);
    }
    if (allocIntervalBytes < 0) {
      throw new IllegalArgumentException("allocIntervalBytes must be >= 0, was " + allocIntervalBytes);
    }
  }

  /** Default intervals with {@code engine}, frames as the JIT records them cheaply, writing {@code jfr}. */
  public static ProfileSettings defaults(CpuEngine engine, Path jfr) {
    return new ProfileSettings(engine, DEFAULT_CPU_INTERVAL_NS, DEFAULT_ALLOC_INTERVAL_BYTES, false, jfr);
  }

  /** These settings with {@code preciseFrames}. */
  public ProfileSettings withPreciseFrames(boolean precise) {
    return new ProfileSettings(engine, cpuIntervalNs, allocIntervalBytes, precise, jfr);
  }

  /** The async-profiler arguments that start this session, e.g. {@code start,event=cpu,...,jfr,file=x.jfr}. */
  public String startArguments() {
    StringBuilder s = new StringBuilder("start,event=").append(engine.event()).append(",interval=").append(cpuIntervalNs);
    if (allocIntervalBytes > 0) {
      s.append(",alloc=").append(allocIntervalBytes);
    }
    return s.append(",jfr,file=").append(jfr.toAbsolutePath()).toString();
  }

  /** A JVM option that profiles a child JVM from its start: {@code -agentpath:<lib>=<start arguments>}. */
  public String agentOption(Path library) {
    return "-agentpath:" + library.toAbsolutePath() + "=" + startArguments();
  }

  /**
   * The JVM options that profile a child JVM from its start: {@link #agentOption}, preceded,
   * unless {@code preciseFrames}, by the options that keep HotSpot's {@code DebugNonSafepoints} off.
   */
  public List<String> jvmOptions(Path library) {
    return preciseFrames
        ? List.of(agentOption(library))
        : List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:-DebugNonSafepoints", agentOption(library));
  }
}
