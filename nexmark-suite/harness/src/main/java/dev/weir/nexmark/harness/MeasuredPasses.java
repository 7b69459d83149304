// Role: the harness's measured passes: the measured run of the query, repeated in the same JVM over
// the same events until the passes took at least T seconds of wall time together, so that a fast
// runner's throughput is measured over seconds rather than a fraction of one; every pass after the
// first gets per-run locations of its own, as warm-up passes do (WarmupPass.forPass).
// Threading: immutable; built and used on the harness's main thread.
package dev.weir.nexmark.harness;

import java.util.ArrayList;
import java.util.List;

/**
 * The measured passes of one benchmark child JVM. The harness's own option
 * {@code --measuredSeconds=T} (T >= 0, default 0) is removed from the arguments.
 *
 * <p>Pass 1 runs with the arguments unchanged. While the passes so far took less than T seconds of
 * wall time in all, another pass runs over the same {@code --numEvents}, up to
 * {@value #MAX_PASSES} passes; pass k >= 2 writes its perf file, state directories and Kafka topics
 * under the suffix {@value #SUFFIX}{@code -k} ({@code perf.json} becomes
 * {@code perf-measured-2.json}), so no pass reads what another left. The driver sums the passes'
 * events and Nexmark runtimes: throughput is all measured events over all measured runtime.
 *
 * <p>Why: after the warm-up, Weir ran Q2's 500,000 events in 0.4 s and the bare limit in 0.2 s
 * (session 19's default command), so one pause of the collector or one late compilation moved
 * item 4's Weir/bare ratio by tens of percent; a slow runner's pass already lasts seconds and runs
 * once. JMH measures iterations of a fixed duration for the same reason.
 * See runner/BENCHMARKS.md, issue 14, session 20.
 *
 * @param minSeconds the least wall time of all measured passes together (T), s; 0 = one pass
 * @param args the first measured pass's arguments
 */
public record MeasuredPasses(long minSeconds, String[] args) {
  /** The harness's option naming the least wall time of all measured passes together, seconds. */
  public static final String OPTION = "--measuredSeconds=";
  /** Pass k >= 2 appends this and {@code -k} to its perf file, state directories and topic prefix. */
  public static final String SUFFIX = "-measured";
  /** At most this many measured passes, however short they were. */
  public static final int MAX_PASSES = 20;

  /** One measured pass; {@code pass} counts from 1. */
  @FunctionalInterface
  public interface Pass {
    void run(int pass) throws Exception;
  }

  /**
   * Takes {@code --measuredSeconds=T} out of {@code args}.
   *
   * @throws IllegalArgumentException naming the option when its value is not a whole number >= 0
   */
  public static MeasuredPasses of(String[] args) {
    long minSeconds = 0;
    List<String> rest = new ArrayList<>();
    for (String a : args) {
      if (a.startsWith(OPTION)) {
        minSeconds = parseSeconds(a.substring(OPTION.length()));
      } else {
        rest.add(a);
      }
    }
    return new MeasuredPasses(minSeconds, rest.toArray(new String[0]));
  }

  /** The same passes over other arguments (those left once the warm-up's options are out). */
  public MeasuredPasses withArgs(String[] measuredArgs) {
    return new MeasuredPasses(minSeconds, measuredArgs);
  }

  /** The arguments of measured pass {@code pass} (from 1): pass 1's unchanged. */
  public String[] passArgs(int pass) {
    if (pass <= 1) {
      return args.clone();
    }
    String[] out = new String[args.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = WarmupPass.forPass(args[i], -1, SUFFIX + "-" + pass);
    }
    return out;
  }

  /** The perf file of measured pass {@code pass} when pass 1 writes {@code perfFilename}. */
  public static String perfFilename(String perfFilename, int pass) {
    if (pass <= 1) {
      return perfFilename;
    }
    String option = "--perfFilename=";
    return WarmupPass.forPass(option + perfFilename, -1, SUFFIX + "-" + pass).substring(option.length());
  }

  /**
   * Runs the measured passes, each over {@code events} events.
   *
   * @return each pass as run, in order (at least one)
   * @throws Exception whatever a pass throws; no later pass runs
   */
  public List<PassStats> run(long events, Pass pass) throws Exception {
    return runPasses(minSeconds, events, pass);
  }

  /**
   * Runs measured passes over {@code events} events each until they took {@code minSeconds} of
   * wall time together, at most {@value #MAX_PASSES} (the bare limit, which has no Nexmark
   * arguments to split, calls this directly).
   *
   * @return each pass as run, in order (at least one)
   * @throws Exception whatever a pass throws; no later pass runs
   */
  public static List<PassStats> runPasses(long minSeconds, long events, Pass pass) throws Exception {
    List<PassStats> each = new ArrayList<>();
    double spentSec = 0;
    do {
      int passNumber = each.size() + 1;
      PassStats done = PassStats.measure(events, () -> pass.run(passNumber));
      each.add(done);
      spentSec += done.seconds();
    } while (spentSec < minSeconds && each.size() < MAX_PASSES);
    return List.copyOf(each);
  }

  /** The {@code --numEvents} of {@code args}, or -1 when they give none. */
  public static long numEvents(String[] args) {
    for (String a : args) {
      if (a.startsWith("--numEvents=")) {
        try {
          return Long.parseLong(a.substring("--numEvents=".length()).trim());
        } catch (NumberFormatException e) {
          return -1; // Nexmark reports the bad value itself
        }
      }
    }
    return -1;
  }

  /**
   * Parses the least measured duration.
   *
   * @throws IllegalArgumentException naming the option when {@code v} is not a whole number >= 0
   */
  static long parseSeconds(String v) {
    return WarmupPass.nonNegative(v, OPTION + v + " is not a measured duration; allowed: a whole "
        + "number of seconds >= 0 (0 = one measured pass)");
  }
}
