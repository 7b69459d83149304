package dev.weir.dashboards;

import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * One run of a results file: one runner, one query, one mode, one child JVM. Fields mirror the
 * {@code runs[]} items of {@code results.schema.json} (schema 1.x); a field a file lacks is null.
 *
 * @param runner {@code weir}, {@code weir-samza}, {@code flink}, {@code flink-tuned},
 *     {@code flink-tuned-rocksdb}, {@code direct} or {@code bare}
 * @param query Beam's Nexmark query number
 * @param queryName Nexmark's name of the query, may be null
 * @param mode {@code streaming} or {@code batch}
 * @param status {@code ok}, {@code failed} or {@code timeout}
 * @param eventsPerSec Nexmark's events/s
 * @param numResults results counted by Nexmark
 * @param correct the result check: true, false, or null where nothing could check
 * @param correctness how {@code correct} was decided (the driver's words), may be null
 * @param runtimeSec Nexmark's runtime, in s
 * @param cpuSeconds process CPU time of the run's JVM, in s
 * @param cpuMicrosPerEvent CPU time of the measured passes per event they processed, in µs
 *     ({@code cpuSeconds} over {@code events x measuredPasses}); null when either is missing
 * @param measuredCompileShare the JIT compilers' time over the measured passes' wall time, may be null
 * @param peakRssBytes peak resident set of the run's JVM, in bytes
 * @param gcTimeMs garbage-collection time of the run's JVM, in ms
 * @param sweep the swept option values of this run (empty when not a sweep)
 * @param firstErrorLine the first error of a failed or timed-out run
 * @param runDir the run's output directory, may be null
 * @param profiling where the run's profile (flame graphs, summary) is, may be null
 * @param beamVersion the Beam SDK release the run's JVM ran on (results schema 1.8.0 and later),
 *     may be null
 */
public record RunResult(
    String runner,
    int query,
    String queryName,
    String mode,
    String status,
    Double eventsPerSec,
    Long numResults,
    Boolean correct,
    String correctness,
    Double runtimeSec,
    Double cpuSeconds,
    Double cpuMicrosPerEvent,
    Double measuredCompileShare,
    Long peakRssBytes,
    Long gcTimeMs,
    Map<String, String> sweep,
    String firstErrorLine,
    String runDir,
    String profiling,
    String beamVersion) {

  /** Normalises the sweep map to a sorted, unmodifiable copy. */
  public RunResult {
    sweep = sweep == null ? Map.of() : Map.copyOf(new TreeMap<>(sweep));
  }

  /**
   * Whether the driver recorded the run's result count as timing-dependent (Q6/Q9 counts that
   * differ across runners because late-data drops depend on timing): no verdict, and not wrong.
   * The words may come after another verdict's (since results schema 1.7.0 a run's correctness
   * also gives its check pass's, after {@code "check pass: "}).
   */
  public boolean timingDependent() {
    return correctness != null && correctness.contains("timing-dependent");
  }

  /** Whether the run finished and its numbers can be compared. */
  public boolean ok() {
    return "ok".equals(status) && eventsPerSec != null && eventsPerSec > 0;
  }

  /** The sweep values as one stable label ("" when not a sweep), e.g. {@code maxBundleSize=100}. */
  public String sweepLabel() {
    return new TreeMap<>(sweep).entrySet().stream()
        .map(e -> e.getKey() + "=" + e.getValue())
        .collect(Collectors.joining(","));
  }
}
