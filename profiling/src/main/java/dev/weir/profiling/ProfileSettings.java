package dev.weir.profiling;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * What a profiling session records, together in one JFR file: async-profiler's CPU samples with
 * the given engine and interval, the {@code one.profiler.Span} intervals the program emits (Weir
 * tags each PTransform's bundles), and allocation samples from JDK Flight Recorder's own
 * {@code jdk.ObjectAllocationSample} event, which async-profiler records beside its samples (its
 * {@code jfrsync} option, with the settings file {@link #writeAllocationSettings()} writes).
 *
 * <h2>What it costs, and why these choices</h2>
 *
 * Measured on Nexmark Q0 on Weir (5,000,000 events; interleaved runs of the same child command
 * with only the agent options changed; {@code runner/BENCHMARKS.md}, "Issue 14, session 16"):
 * <ul>
 *   <li><b>Frame precision.</b> An agent loaded at the JVM's start turns on HotSpot's
 *       {@code DebugNonSafepoints} unless the command line set it: the JIT then records the
 *       inlined frames of every instruction, not only of safepoints and calls, so a sample lands
 *       on the exact inlined method. The flag alone took 2.9% more CPU seconds. By default
 *       ({@code preciseFrames} false) the options from {@link #jvmOptions} turn it off
 *       explicitly, which async-profiler respects: a sample in compiled code then goes to the
 *       inlined frames of the nearest recorded position (the same method or its caller in the
 *       inlining tree), as with JFR's own method sampling. Per-PTransform shares (spans: thread
 *       and time) do not depend on it. CPU samples then cost 1–2%.</li>
 *   <li><b>Allocation samples.</b> async-profiler's own allocation sampling (JVMTI's sampled
 *       allocation events) added 3–4% whatever its interval: one sample per 1 GiB cost as much as
 *       one per 2 MiB, so the cost is in enabling the events, not in the samples. JFR's
 *       {@code jdk.ObjectAllocationSample} comes from hooks HotSpot runs at every TLAB refill
 *       anyway and is throttled to a rate ({@code allocSamplesPerSec}); each sample carries the
 *       bytes allocated since the previous one as its weight, so {@code jfrconv --alloc --total}
 *       gives estimated bytes per stack as before.</li>
 * </ul>
 *
 * @param engine the CPU sampling engine
 * @param cpuIntervalNs CPU sampling interval, in ns of CPU time (async-profiler's default: 10 ms)
 * @param allocSamplesPerSec allocation samples per second, JVM-wide (0: no allocation profile)
 * @param preciseFrames whether samples are attributed to the exact inlined frame (HotSpot's
 *     {@code DebugNonSafepoints}, at a cost; see above)
 * @param jfr the JFR file to write
 */
public record ProfileSettings(CpuEngine engine, long cpuIntervalNs, int allocSamplesPerSec, boolean preciseFrames,
    Path jfr) {

  /** 10 ms CPU interval: about 100 samples per busy core per second. */
  public static final long DEFAULT_CPU_INTERVAL_NS = 10_000_000L;
  /**
   * 1,000 allocation samples per second: a 2-s measured pass gets about 2,000, as many as one
   * sample per 2 MiB (the earlier default) gave Nexmark Q0 at about 4 GB/s.
   */
  public static final int DEFAULT_ALLOC_SAMPLES_PER_SEC = 1000;

  /** Validates. */
  public ProfileSettings {
    Objects.requireNonNull(engine, "engine");
    Objects.requireNonNull(jfr, "jfr");
    if (cpuIntervalNs <= 0) {
      throw new IllegalArgumentException("cpuIntervalNs must be > 0, was " + cpuIntervalNs);
    }
    if (allocSamplesPerSec < 0) {
      throw new IllegalArgumentException("allocSamplesPerSec must be >= 0, was " + allocSamplesPerSec);
    }
  }

  /** Default rates with {@code engine}, frames as the JIT records them cheaply, writing {@code jfr}. */
  public static ProfileSettings defaults(CpuEngine engine, Path jfr) {
    return new ProfileSettings(engine, DEFAULT_CPU_INTERVAL_NS, DEFAULT_ALLOC_SAMPLES_PER_SEC, false, jfr);
  }

  /** These settings with {@code preciseFrames}. */
  public ProfileSettings withPreciseFrames(boolean precise) {
    return new ProfileSettings(engine, cpuIntervalNs, allocSamplesPerSec, precise, jfr);
  }

  /** The JFR settings file for the allocation samples: beside the recording, e.g. {@code profile.jfr.jfc}. */
  public Path allocationSettings() {
    return jfr.toAbsolutePath().resolveSibling(jfr.getFileName() + ".jfc");
  }

  /**
   * Writes {@link #allocationSettings()} (only {@code jdk.ObjectAllocationSample}, with stacks,
   * throttled to {@code allocSamplesPerSec}); does nothing without allocation samples. Call
   * before starting the profiler with {@link #startArguments()}.
   *
   * @throws IOException if the file cannot be written
   */
  public void writeAllocationSettings() throws IOException {
    if (allocSamplesPerSec == 0) {
      return;
    }
    String jfc = """
        <?xml version="1.0" encoding="UTF-8"?>
        <configuration version="2.0" label="weir-allocation" description="Allocation samples for Weir's profiles">
          <event name="jdk.ObjectAllocationSample">
            <setting name="enabled">true</setting>
            <setting name="throttle">%d/s</setting>
            <setting name="stackTrace">true</setting>
          </event>
        </configuration>
        """.formatted(allocSamplesPerSec);
    Files.createDirectories(allocationSettings().getParent());
    Files.writeString(allocationSettings(), jfc, StandardCharsets.UTF_8);
  }

  /**
   * The async-profiler arguments that start this session, e.g.
   * {@code start,event=cpu,interval=10000000,jfrsync=/x/profile.jfr.jfc,file=/x/profile.jfr}.
   */
  public String startArguments() {
    StringBuilder s = new StringBuilder("start,event=").append(engine.event()).append(",interval=").append(cpuIntervalNs);
    s.append(allocSamplesPerSec > 0 ? ",jfrsync=" + allocationSettings() : ",jfr");
    return s.append(",file=").append(jfr.toAbsolutePath()).toString();
  }

  /** A JVM option that profiles a child JVM from its start: {@code -agentpath:<lib>=<start arguments>}. */
  public String agentOption(Path library) {
    return "-agentpath:" + library.toAbsolutePath() + "=" + startArguments();
  }

  /**
   * The JVM options that profile a child JVM from its start: {@link #agentOption}, preceded,
   * unless {@code preciseFrames}, by the options that keep HotSpot's {@code DebugNonSafepoints} off.
   * The caller writes {@link #writeAllocationSettings()} first.
   */
  public List<String> jvmOptions(Path library) {
    return preciseFrames
        ? List.of(agentOption(library))
        : List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:-DebugNonSafepoints", agentOption(library));
  }
}
