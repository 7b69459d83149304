// Role: the harness's check pass: one run of the query over the reference runner's event count
// (Direct's, in the driver's default plan), before the warm-up, whose result count the driver
// compares with the reference runner's; it runs the same query in the same JVM, so it also warms
// it, and its wall time counts toward the warm-up's floor and most.
// Threading: immutable; built and used on the harness's main thread.
package dev.weir.nexmark.harness;

import java.util.ArrayList;
import java.util.List;

/**
 * The check pass of one benchmark child JVM. The harness's own option {@code --checkEvents=N}
 * (N >= 0, default 0 = no check pass) is removed from the arguments.
 *
 * <p>With N > 0 the query runs once over N events before any warm-up pass, writing its perf file,
 * state directories and Kafka topics under the suffix {@value #SUFFIX} ({@code perf.json} becomes
 * {@code perf-check.json}), so no later pass reads what it left. The driver reads that file's
 * result count.
 *
 * <p>Why: the main command measures Flink and Weir over 500,000 events and Beam's Direct runner,
 * about a hundred times slower, over 10,000, so Direct's counts had nothing to be compared with
 * and the reference runner checked nobody. A pass over Direct's events in each measured JVM costs
 * a second or two that the warm-up spends anyway (it counts toward the warm-up's seconds), and
 * puts every runner's count next to the reference runner's on every query.
 *
 * @param events the check pass's events (N); 0 = none
 * @param args the arguments left once {@code --checkEvents} is out
 */
public record CheckPass(long events, String[] args) {
  /** The harness's option naming the check pass's event count. */
  public static final String OPTION = "--checkEvents=";
  /** Appended to the check pass's perf file, state directories and topic prefix. */
  public static final String SUFFIX = "-check";

  /**
   * Takes {@code --checkEvents=N} out of {@code args}.
   *
   * @throws IllegalArgumentException naming the option when its value is not a whole number >= 0
   */
  public static CheckPass of(String[] args) {
    long events = 0;
    List<String> rest = new ArrayList<>();
    for (String a : args) {
      if (a.startsWith(OPTION)) {
        String v = a.substring(OPTION.length());
        events = WarmupPass.nonNegative(v, OPTION + v + " is not a check-pass event count; allowed: a whole "
            + "number >= 0 (0 = no check pass)");
      } else {
        rest.add(a);
      }
    }
    return new CheckPass(events, rest.toArray(new String[0]));
  }

  /**
   * The check pass's arguments, from the measured pass's {@code nexmarkArgs} (all harness options
   * out): {@code --numEvents} is {@link #events()} and every per-run location ends in
   * {@value #SUFFIX} ({@link WarmupPass#forPass}).
   */
  public String[] passArgs(String[] nexmarkArgs) {
    String[] out = new String[nexmarkArgs.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = WarmupPass.forPass(nexmarkArgs[i], events, SUFFIX);
    }
    return out;
  }

  /**
   * Runs the check pass when there is one.
   *
   * @return the pass as it ran, or null without a check pass
   * @throws Exception whatever the pass throws
   */
  public PassStats run(PassStats.Body pass) throws Exception {
    return events > 0 ? PassStats.measure(events, pass) : null;
  }
}
