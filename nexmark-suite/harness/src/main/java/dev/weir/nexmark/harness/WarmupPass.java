// Role: the harness's warm-up: splits the child's arguments into those of warm-up runs of the same
// query (fewer events, their own perf files, state directories and Kafka topics) and those of the
// measured run, and decides how many warm-up passes to run (at least N events and at least S
// seconds, then more until HotSpot's compilers have settled, up to M seconds), so that JIT
// compilation and class loading happen before the measured interval, for every runner alike (the
// bare limit does the same in BareRunner).
// Threading: immutable; built and used on the harness's main thread.
package dev.weir.nexmark.harness;

import java.lang.management.CompilationMXBean;
import java.util.ArrayList;
import java.util.List;

/**
 * The warm-up passes and the measured pass of one benchmark child JVM. The harness's own options
 * {@code --warmupEvents=N} (N >= 0, 0 = no warm-up), {@code --warmupSeconds=S} (S >= 0, default 0)
 * and {@code --warmupMaxSeconds=M} (M >= 0, default 0) are removed from both argument lists.
 *
 * <p>The first warm-up pass runs N events. While the passes so far took less than S seconds of
 * wall time in all, another pass runs, sized from the last pass's rate to fill the rest (at least
 * {@value #MIN_PASS_EVENTS} events, at most {@value #MAX_PASS_GROWTH} times N), up to
 * {@value #MAX_PASSES} passes. Why a floor in seconds: HotSpot's compiler threads need about the
 * same CPU time to compile a pipeline's hot path whatever its event rate, so a warm-up counted in
 * events alone leaves a fast runner compiling during its measured pass (Weir's Q10 after 300,000
 * events: 7.4 s of compilation in an 8.4 s measured pass, from {@code -XX:+LogCompilation}), while a
 * slower runner's warm-up over the same events already lasts long enough (Flink's passes took 9-40
 * s). See runner/BENCHMARKS.md, issue 14, session 14.
 *
 * <p>Settling: with M > S, the warm-up goes on after the floor while the last pass kept the
 * compilers busy for more than {@value #SETTLED_COMPILE_SHARE} of its wall time (compilation time
 * of all compiler threads, from {@link CompilationMXBean}), with passes of about
 * {@value #SETTLING_PASS_SECONDS} s, until one pass is settled, less than
 * {@value #MIN_SETTLING_PASS_SECONDS} s are left of M seconds for all passes, or
 * {@value #MAX_PASSES} + {@value #MAX_SETTLING_PASSES} passes ran. Why: after the 10-s floor both
 * Weir's and Flink's last warm-up pass still kept the compilers busy for about its whole wall time
 * (the bare limit's for 1-13% of it), so the measured pass shared the cores with C2; the compilers'
 * own account says when a pass ran compiled code, which is what steady state means here (JMH's
 * warm-up iterations serve the same end). A floor alone cannot say that: it is too short for a fast
 * runner on a query with a large hot path (runners-core's merging windows, triggers) and longer
 * than needed for a small one. See runner/BENCHMARKS.md, issue 14, session 19.
 *
 * <p>Every warm-up pass gets {@code --numEvents} of its own and, so that nothing it leaves behind
 * is read by a later pass, its own copy of every per-run location: {@code --perfFilename},
 * {@code --stateDirectory} (Weir), {@code --stateBackendStoragePath} (Flink) and the
 * {@code weir.kafka.topic.prefix} entry of {@code --samzaConfigOverride} (weir-samza) each get the
 * suffix {@value #SUFFIX} (pass 1) or {@value #SUFFIX}{@code -k} (pass k >= 2). The measured pass
 * gets the arguments unchanged.
 *
 * @param events the first pass's events (N)
 * @param minSeconds the least wall time of all passes together (S), s
 * @param maxSeconds the most wall time of all passes together while the compilers settle (M), s;
 *     at or below {@code minSeconds}: no settling passes
 * @param measuredArgs the measured pass's arguments
 */
public record WarmupPass(long events, long minSeconds, long maxSeconds, String[] measuredArgs) {
  /** The harness's option naming the warm-up pass's event count. */
  public static final String OPTION = "--warmupEvents=";
  /** The harness's option naming the least wall time of all warm-up passes together, seconds. */
  public static final String SECONDS_OPTION = "--warmupSeconds=";
  /** The harness's option naming the most wall time of all warm-up passes while the compilers settle, s. */
  public static final String MAX_SECONDS_OPTION = "--warmupMaxSeconds=";
  /** Appended to the first warm-up pass's perf file, state directories and topic prefix. */
  public static final String SUFFIX = "-warmup";
  /** At most this many warm-up passes, however short they were. */
  public static final int MAX_PASSES = 4;
  /** A pass after the first runs at least this many events. */
  public static final long MIN_PASS_EVENTS = 1_000;
  /** A pass after the first runs at most this many times the first pass's events. */
  public static final long MAX_PASS_GROWTH = 20;
  /**
   * A pass whose compilers worked for at most this share of its wall time is settled (0.2
   * core-seconds of compilation per second: a tenth of a two-core machine).
   */
  public static final double SETTLED_COMPILE_SHARE = 0.20;
  /** The wall time a settling pass is sized for, from the last pass's rate, s. */
  public static final double SETTLING_PASS_SECONDS = 4.0;
  /**
   * No settling pass is shorter than this, s: with less of the most left, the warm-up ends. A
   * shorter pass is mostly its pipeline's start-up (Flink's last 1-s passes ran at a tenth of the
   * rate of the pass before), so it would neither compile the hot path nor say how settled it is.
   */
  public static final double MIN_SETTLING_PASS_SECONDS = 2.0;
  /** Settling passes end when all passes together reach {@value #MAX_PASSES} plus this many. */
  public static final int MAX_SETTLING_PASSES = 6;

  /** One warm-up pass: runs the query over {@code events} events; {@code pass} counts from 1. */
  @FunctionalInterface
  public interface Pass {
    void run(int pass, long events) throws Exception;
  }

  /**
   * What the warm-up passes ran, each pass in order (written to the process facts as they are: a
   * list of {@link PassStats} objects); the counts are sums over them.
   */
  public record Done(List<PassStats> each) {
    /** No warm-up. */
    public static final Done NONE = new Done(List.of());

    public Done {
      each = List.copyOf(each);
    }

    /** How many passes ran. */
    public int passes() {
      return each.size();
    }

    /** Their events in all. */
    public long events() {
      return each.stream().mapToLong(PassStats::events).sum();
    }

    /** Their wall time in all, s. */
    public double seconds() {
      return each.stream().mapToDouble(PassStats::seconds).sum();
    }
  }

  /**
   * Splits {@code args}.
   *
   * @throws IllegalArgumentException naming the option when its value is not a whole number >= 0
   */
  public static WarmupPass of(String[] args) {
    long events = 0;
    long minSeconds = 0;
    long maxSeconds = 0;
    List<String> measured = new ArrayList<>();
    for (String a : args) {
      if (a.startsWith(OPTION)) {
        events = parseEvents(a.substring(OPTION.length()));
      } else if (a.startsWith(SECONDS_OPTION)) {
        minSeconds = parseSeconds(a.substring(SECONDS_OPTION.length()));
      } else if (a.startsWith(MAX_SECONDS_OPTION)) {
        maxSeconds = parseMaxSeconds(a.substring(MAX_SECONDS_OPTION.length()));
      } else {
        measured.add(a);
      }
    }
    return new WarmupPass(events, minSeconds, maxSeconds, measured.toArray(new String[0]));
  }

  /** The first warm-up pass's arguments (over {@link #events()} events); empty without a warm-up. */
  public String[] warmupArgs() {
    return events > 0 ? warmupArgs(1, events) : new String[0];
  }

  /** The arguments of warm-up pass {@code pass} (from 1) over {@code passEvents} events. */
  public String[] warmupArgs(int pass, long passEvents) {
    String suffix = pass <= 1 ? SUFFIX : SUFFIX + "-" + pass;
    String[] out = new String[measuredArgs.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = forPass(measuredArgs[i], passEvents, suffix);
    }
    return out;
  }

  /**
   * Runs this warm-up's passes in order (none when {@link #events()} is 0).
   *
   * @throws Exception whatever a pass throws; no later pass runs
   */
  public Done run(Pass pass) throws Exception {
    return run(0, pass);
  }

  /**
   * Runs this warm-up's passes in order (none when {@link #events()} is 0), counting
   * {@code spentSec} seconds already spent warming this JVM on the same query (the check pass,
   * {@link CheckPass}) toward the floor and the most: the first pass always runs.
   *
   * @param spentSec wall time already spent on the same query in this JVM, s (>= 0)
   * @throws Exception whatever a pass throws; no later pass runs
   */
  public Done run(double spentSec, Pass pass) throws Exception {
    return runPasses(events, minSeconds, maxSeconds, spentSec, pass);
  }

  /**
   * Runs warm-up passes: the first over {@code events} events, then more while they took less than
   * {@code minSeconds} of wall time in all, then more while the compilers have not settled and
   * they took less than {@code maxSeconds} ({@link #nextPassEvents}).
   *
   * @throws Exception whatever a pass throws; no later pass runs
   */
  public static Done runPasses(long events, long minSeconds, long maxSeconds, Pass pass) throws Exception {
    return runPasses(events, minSeconds, maxSeconds, 0, pass);
  }

  /**
   * As {@link #runPasses(long, long, long, Pass)}, with {@code alreadySpentSec} seconds of earlier
   * work on the same query in this JVM counted toward {@code minSeconds} and {@code maxSeconds}.
   *
   * @throws Exception whatever a pass throws; no later pass runs
   */
  static Done runPasses(long events, long minSeconds, long maxSeconds, double alreadySpentSec, Pass pass)
      throws Exception {
    List<PassStats> each = new ArrayList<>();
    double spentSec = Math.max(0, alreadySpentSec);
    long next = events;
    while (next > 0) {
      int passNumber = each.size() + 1;
      long passEvents = next;
      PassStats done = PassStats.measure(passEvents, () -> pass.run(passNumber, passEvents));
      each.add(done);
      spentSec += done.seconds();
      next = nextPassEvents(events, minSeconds, maxSeconds, each.size(), done, spentSec);
    }
    return new Done(each);
  }

  /**
   * The events of the next warm-up pass, or 0 when the warm-up is done.
   *
   * <ul>
   *   <li>Below {@code minSeconds} in all, with fewer than {@value #MAX_PASSES} passes: the last
   *       pass's rate times the seconds still missing, between {@value #MIN_PASS_EVENTS} and
   *       {@value #MAX_PASS_GROWTH} times {@code firstEvents}. The last pass's rate includes its
   *       pipeline's start-up, so it is low, and a pass sized from it tends to end early; the next
   *       pass corrects that.
   *   <li>Else, while the last pass's compile share is above {@value #SETTLED_COMPILE_SHARE}, at
   *       least {@value #MIN_SETTLING_PASS_SECONDS} s are left of {@code maxSeconds}, and fewer
   *       than {@value #MAX_PASSES} + {@value #MAX_SETTLING_PASSES} passes ran in all: a pass of
   *       {@value #SETTLING_PASS_SECONDS} s at the last rate (or the seconds left, if fewer), within
   *       the same bounds.
   *   <li>Else 0.
   * </ul>
   *
   * @param firstEvents the first pass's events (the {@code --warmupEvents} value)
   * @param passesDone passes run so far (>= 1)
   * @param last the last pass
   * @param spentSec all passes' wall time so far, s
   */
  static long nextPassEvents(long firstEvents, long minSeconds, long maxSeconds, int passesDone,
      PassStats last, double spentSec) {
    double eventsPerSec = last.events() / Math.max(last.seconds(), 1e-3);
    double wantedSec;
    if (spentSec < minSeconds && passesDone < MAX_PASSES) {
      wantedSec = minSeconds - spentSec;
    } else if (maxSeconds - spentSec >= MIN_SETTLING_PASS_SECONDS
        && last.compileShare() > SETTLED_COMPILE_SHARE && passesDone < MAX_PASSES + MAX_SETTLING_PASSES) {
      wantedSec = Math.min(SETTLING_PASS_SECONDS, maxSeconds - spentSec);
    } else {
      return 0;
    }
    double wanted = Math.ceil(eventsPerSec * wantedSec);
    return (long) Math.max(MIN_PASS_EVENTS, Math.min(wanted, (double) firstEvents * MAX_PASS_GROWTH));
  }

  /**
   * Parses a warm-up event count.
   *
   * @throws IllegalArgumentException naming the option when {@code v} is not a whole number >= 0
   */
  static long parseEvents(String v) {
    return nonNegative(v, OPTION + v + " is not a warm-up event count; allowed: a whole number >= 0 "
        + "(0 = no warm-up pass)");
  }

  /**
   * Parses the least warm-up duration.
   *
   * @throws IllegalArgumentException naming the option when {@code v} is not a whole number >= 0
   */
  static long parseSeconds(String v) {
    return nonNegative(v, SECONDS_OPTION + v + " is not a warm-up duration; allowed: a whole number of "
        + "seconds >= 0 (0 = the first pass only)");
  }

  /**
   * Parses the most warm-up duration while the compilers settle.
   *
   * @throws IllegalArgumentException naming the option when {@code v} is not a whole number >= 0
   */
  static long parseMaxSeconds(String v) {
    return nonNegative(v, MAX_SECONDS_OPTION + v + " is not a warm-up duration; allowed: a whole number of "
        + "seconds >= 0 (at most --warmupSeconds: no passes after the floor's)");
  }

  /**
   * {@code v} as a whole number >= 0.
   *
   * @throws IllegalArgumentException with {@code error} when it is not one
   */
  static long nonNegative(String v, String error) {
    try {
      long n = Long.parseLong(v.trim());
      if (n >= 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(error);
  }

  /**
   * One argument as another pass of the same JVM (a warm-up pass, or a measured pass after the
   * first) sees it: its per-run locations end in {@code suffix}, and {@code --numEvents} becomes
   * {@code events} (kept as it is when {@code events} < 0).
   */
  static String forPass(String arg, long events, String suffix) {
    if (arg.startsWith("--numEvents=") && events >= 0) {
      return "--numEvents=" + events;
    }
    if (arg.startsWith("--perfFilename=")) {
      String f = arg.substring("--perfFilename=".length());
      return "--perfFilename=" + (f.endsWith(".json") ? f.substring(0, f.length() - 5) + suffix + ".json" : f + suffix);
    }
    if (arg.startsWith("--stateDirectory=") || arg.startsWith("--stateBackendStoragePath=")) {
      String trimmed = arg.endsWith("/") ? arg.substring(0, arg.length() - 1) : arg;
      return trimmed + suffix;
    }
    if (arg.startsWith("--samzaConfigOverride=")) {
      String[] entries = arg.substring("--samzaConfigOverride=".length()).split(",", -1);
      StringBuilder sb = new StringBuilder("--samzaConfigOverride=");
      for (int i = 0; i < entries.length; i++) {
        String e = entries[i];
        sb.append(i == 0 ? "" : ",").append(e.startsWith("weir.kafka.topic.prefix=") ? e + suffix : e);
      }
      return sb.toString();
    }
    return arg;
  }
}
