// Role: the harness's no-delay pass: one more run of the query over the measured events, after the
// measured passes, with Nexmark's delayed events off (--probDelayedEvent=0), so that a query whose
// count depends on which late events a runner's watermark drops (Q6, Q9) gets a count every runner
// must match; then the same in batch mode, whose count (nothing is late in batch) is the reference.
// Threading: immutable; built and used on the harness's main thread.
package dev.weir.nexmark.harness;

import java.util.ArrayList;
import java.util.List;

/**
 * The no-delay pass of one benchmark child JVM. The harness's own option {@code --noDelayPass=true}
 * (default false) is removed from the arguments.
 *
 * <p>With it, after the measured passes, the query runs once more over the same events with
 * {@code --probDelayedEvent=0} (Nexmark's generator then delays no event past the ones after it, so
 * no bid arrives behind the watermark), writing its perf file, state directories and Kafka topics
 * under the suffix {@value #SUFFIX}. Its time and CPU are not in the measured figures.
 *
 * <p>Why: Q6 and Q9 join bids and auctions in windows without allowed lateness and drop what
 * arrives late; with the generator's default 10% of events delayed by up to
 * {@code occasionalDelaySec}, which bids are late depends on how far each runner's watermark has
 * moved when they arrive, so their counts differ between runners and between two runs of one
 * runner (issue 42: Weir's count 4-7% above Flink's in every stored run). Without delayed events,
 * the counts no longer depend on timing and must be equal across runners: the driver judges them.
 *
 * @param enabled whether the pass runs
 * @param args the arguments left once {@code --noDelayPass} is out
 */
public record NoDelayPass(boolean enabled, String[] args) {
  /** The harness's option that asks for the pass. */
  public static final String OPTION = "--noDelayPass=";
  /** Appended to the pass's perf file, state directories and topic prefix. */
  public static final String SUFFIX = "-nodelay";
  /** Appended to the batch reference pass's perf file, state directories and topic prefix. */
  public static final String BATCH_SUFFIX = "-nodelay-batch";
  /** Options of a streaming run that a batch run must not get (checkpoints, idle sources). */
  private static final List<String> STREAMING_ONLY = List.of(
      "--streaming=", "--checkpointingInterval=", "--checkpointingIntervalMs=", "--shutdownSourcesAfterIdleMs=");

  /**
   * Takes {@code --noDelayPass=true|false} out of {@code args}.
   *
   * @throws IllegalArgumentException naming the option when its value is not true or false
   */
  public static NoDelayPass of(String[] args) {
    boolean enabled = false;
    List<String> rest = new ArrayList<>();
    for (String a : args) {
      if (a.startsWith(OPTION)) {
        String v = a.substring(OPTION.length());
        if (!v.equals("true") && !v.equals("false")) {
          throw new IllegalArgumentException(OPTION + v + " is not allowed; allowed: true, false");
        }
        enabled = Boolean.parseBoolean(v);
      } else {
        rest.add(a);
      }
    }
    return new NoDelayPass(enabled, rest.toArray(new String[0]));
  }

  /**
   * The pass's arguments, from the measured pass's {@code nexmarkArgs}: the same events, every
   * per-run location ending in {@value #SUFFIX} ({@link WarmupPass#forPass}), and
   * {@code --probDelayedEvent=0} in place of any given value.
   */
  public String[] passArgs(String[] nexmarkArgs) {
    List<String> out = new ArrayList<>();
    for (String a : nexmarkArgs) {
      if (!a.startsWith("--probDelayedEvent=")) {
        out.add(WarmupPass.forPass(a, -1, SUFFIX));
      }
    }
    out.add("--probDelayedEvent=0");
    return out.toArray(new String[0]);
  }

  /**
   * The batch reference pass's arguments: the no-delay pass's ({@link #passArgs}) in batch mode
   * ({@code --streaming=false}, without the streaming-only checkpoint and idle-source options), in
   * locations ending in {@value #BATCH_SUFFIX}.
   *
   * <p>Why: a batch run has no watermark to fall behind, so it drops nothing as late; its count is
   * the count a streaming run without delayed events should reach. On Q9 at 500,000 events Weir
   * and Flink counted 16,563 in batch, Weir's streaming no-delay pass 16,563 and Flink's 15,775 and
   * 15,675 (runner/BENCHMARKS.md, 2026-11-29): without a reference, two runners that disagree
   * cannot be told apart.
   */
  public String[] batchPassArgs(String[] nexmarkArgs) {
    List<String> out = new ArrayList<>();
    for (String a : nexmarkArgs) {
      if (!a.startsWith("--probDelayedEvent=") && STREAMING_ONLY.stream().noneMatch(a::startsWith)) {
        out.add(WarmupPass.forPass(a, -1, BATCH_SUFFIX));
      }
    }
    out.add("--streaming=false");
    out.add("--probDelayedEvent=0");
    return out.toArray(new String[0]);
  }

  /**
   * Runs the pass when enabled.
   *
   * @param events the measured passes' event count (for the pass's statistics)
   * @return the pass as it ran, or null when not enabled
   * @throws Exception whatever the pass throws
   */
  public PassStats run(long events, PassStats.Body pass) throws Exception {
    return enabled ? PassStats.measure(events, pass) : null;
  }
}
