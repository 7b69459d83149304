// Role: the outcome of one run as serialised into results.json (one item of "runs") and
// results.csv. Field names are the schema (results.schema.json); change both together.
// Threading: a plain mutable holder, filled by one thread (the driver's main thread).
package dev.weir.nexmark.driver;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One run's numbers. Units: events and results per second, seconds (runtime, wall, CPU),
 * bytes (peak RSS), milliseconds (GC time). Missing measurements are null.
 */
@JsonPropertyOrder({"runner", "query", "queryName", "mode", "beamVersion", "events", "warmupEvents", "warmupPasses", "warmupSec",
    "warmupCompileShare", "repeat", "sweep", "status",
    "exitStatus", "eventsPerSec", "resultsPerSec", "numResults", "runtimeSec", "measuredPasses", "measuredSec",
    "measuredCompileShare", "measuredPassResults", "checkEvents", "checkResults", "checkSec", "noDelayResults", "noDelayBatchResults", "wallSec",
    "cpuSeconds", "warmupCpuSeconds", "peakRssBytes", "peakRssScope", "warmupPeakRssBytes", "gcTimeMs", "gcCount", "correct", "correctness",
    "firstErrorLine", "nexmarkErrors", "runnerConfig", "command", "childJvm", "runDir",
    "profiling"})
public final class RunRecord {
  public static final String OK = "ok";
  public static final String FAILED = "failed";
  public static final String TIMEOUT = "timeout";

  public String runner;
  public int query;
  public String queryName;
  public String mode;
  /**
   * The Beam SDK release the run's JVM ran on, as its harness read it from the classpath
   * (beam-sdks-java-core's {@code sdk_version}, e.g. 2.73.0 for Weir, 2.70.0 for Direct and
   * Flink); null when the child did not say (since results schema 1.8.0).
   */
  public String beamVersion;
  public long events;
  /**
   * Events of the warm-up passes run in the same JVM before the measured one, all passes together
   * (as the child reported them; the planned first pass's when it reported nothing); 0 = none.
   */
  public long warmupEvents;
  /** Warm-up passes the child ran; null when it reported none. */
  public Integer warmupPasses;
  /** Wall time of all warm-up passes together, seconds; null when the child reported none. */
  public Double warmupSec;
  /**
   * The last warm-up pass's JIT compilation time over its wall time (all compiler threads; 0.5 =
   * the compilers kept half a core busy): how settled the code was when the measured pass began.
   * Null when the child reported none.
   */
  public Double warmupCompileShare;
  public int repeat;
  public Map<String, String> sweep = new LinkedHashMap<>();
  /** ok, failed or timeout. */
  public String status;
  /** Child exit status; null when killed on timeout or never started. */
  public Integer exitStatus;
  /** Events per second of the measured passes: their events over their Nexmark runtime. */
  public Double eventsPerSec;
  /** The first measured pass's results per second. */
  public Double resultsPerSec;
  public Long numResults;
  /** Nexmark's runtime (first event to last result, seconds), summed over the measured passes. */
  public Double runtimeSec;
  /**
   * Measured passes the child ran over {@link #events} events each (the harness repeats the
   * measured pass until the passes took {@code --measured-seconds}); {@link #eventsPerSec} is all
   * their events over all their runtime. Null when the child reported no perf file.
   */
  public Integer measuredPasses;
  /** Wall time of all measured passes together, pipeline set-up included, seconds; null if unknown. */
  public Double measuredSec;
  /**
   * JIT compilation time over wall time of the measured passes (all compiler threads): how much of
   * the measured interval the compilers shared the cores; null when the child reported none.
   */
  public Double measuredCompileShare;
  /**
   * Each measured pass's result count, in pass order, when there was more than one pass (null
   * otherwise); {@link #numResults} is the first pass's. Counts of timing-dependent queries may
   * differ from pass to pass.
   */
  public List<Long> measuredPassResults;
  /**
   * Events of the check pass run before the warm-up (the reference runner's event count), null
   * without one; its result count is judged against the reference runner's run over as many
   * events (since results schema 1.7.0).
   */
  public Long checkEvents;
  /** The check pass's result count; null without a check pass or when it reported none. */
  public Long checkResults;
  /**
   * The result count of the no-delay pass (the measured events again with Nexmark's delayed events
   * off, after the measured passes; Q6 and Q9 in streaming mode), which every runner's must equal;
   * null without one (since results schema 1.9.0).
   */
  public Long noDelayResults;
  /**
   * The result count of the batch reference pass (the no-delay pass's events again in batch mode,
   * where nothing is late), the count the no-delay pass should reach; null without one or when it
   * failed (since results schema 1.10.0).
   */
  public Long noDelayBatchResults;
  /**
   * Wall time of the check pass, seconds (the JVM's first, cold pass; it counts toward the
   * warm-up's floor and most but not toward {@link #warmupSec}); null without one.
   */
  public Double checkSec;
  /** Wall time of the child JVM as seen by the driver, seconds. */
  public Double wallSec;
  /** CPU seconds of the measured pass (after a warm-up pass, the warm-up's are not in it). */
  public Double cpuSeconds;
  /** CPU seconds of the warm-up passes; null without one. */
  public Double warmupCpuSeconds;
  /**
   * Peak resident set of the child JVM, bytes: over the measured pass when {@link #peakRssScope} is
   * "measured" (the high-water mark was reset when it started, so it still counts what the warm-up
   * left resident), over the whole process when "process".
   */
  public Long peakRssBytes;
  /** "measured" or "process": what {@link #peakRssBytes} covers; null when the child did not say. */
  public String peakRssScope;
  /** Peak resident set of the child JVM up to the end of its warm-up passes, bytes; null without. */
  public Long warmupPeakRssBytes;
  public Long gcTimeMs;
  public Long gcCount;
  /** true, false, or null when nothing could check. */
  public Boolean correct;
  /** How {@link #correct} was decided. */
  public String correctness;
  public String firstErrorLine;
  public List<String> nexmarkErrors = new ArrayList<>();
  public Map<String, Object> runnerConfig = new LinkedHashMap<>();
  public List<String> command = new ArrayList<>();
  /** JVM facts reported by the child (version, vendor, heap). */
  public Map<String, Object> childJvm;
  public String runDir;
  public String profiling;
}
