package dev.weir.profiling;

import java.nio.file.Path;
import java.util.Objects;

/**
 * What a profiling session records: CPU samples with the given engine and interval and allocation
 * samples, together in one JFR file (async-profiler's {@code jfr} output), along with any
 * {@code one.profiler.Span} intervals the program emits (Weir tags each PTransform's bundles).
 *
 * @param engine the CPU sampling engine
 * @param cpuIntervalNs CPU sampling interval, in ns of CPU time (async-profiler's default: 10 ms)
 * @param allocIntervalBytes allocation sampling interval, in bytes allocated (0 disables)
 * @param jfr the JFR file to write
 */
public record ProfileSettings(CpuEngine engine, long cpuIntervalNs, long allocIntervalBytes, Path jfr) {

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

  /** Default intervals with {@code engine}, writing {@code jfr}. */
  public static ProfileSettings defaults(CpuEngine engine, Path jfr) {
    return new ProfileSettings(engine, DEFAULT_CPU_INTERVAL_NS, DEFAULT_ALLOC_INTERVAL_BYTES, jfr);
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
}
