// Role: the harness's warm-up pass: splits the child's arguments into those of a warm-up run of the
// same query (fewer events, its own perf file, state directories and Kafka topics) and those of the
// measured run, so that JIT compilation and class loading happen before the measured interval, for
// every runner alike (the bare limit does the same in BareRunner).
// Threading: immutable; built and used on the harness's main thread.
package dev.weir.nexmark.harness;

import java.util.ArrayList;
import java.util.List;

/**
 * The two passes of one benchmark child JVM. The harness's own option {@code --warmupEvents=N}
 * (N >= 0, 0 = no warm-up) is removed from both argument lists. The warm-up pass gets
 * {@code --numEvents=N} and, so that nothing it leaves behind is read by the measured pass, its own
 * copy of every per-run location: {@code --perfFilename}, {@code --stateDirectory} (Weir),
 * {@code --stateBackendStoragePath} (Flink) and the {@code weir.kafka.topic.prefix} entry of
 * {@code --samzaConfigOverride} (weir-samza) each get the suffix {@value #SUFFIX}. The measured pass
 * gets the arguments unchanged.
 */
public record WarmupPass(long events, String[] warmupArgs, String[] measuredArgs) {
  /** The harness's option naming the warm-up pass's event count. */
  public static final String OPTION = "--warmupEvents=";
  /** Appended to the warm-up pass's perf file, state directories and topic prefix. */
  public static final String SUFFIX = "-warmup";

  /**
   * Splits {@code args}.
   *
   * @throws IllegalArgumentException naming the option when its value is not a whole number >= 0
   */
  public static WarmupPass of(String[] args) {
    long events = 0;
    List<String> measured = new ArrayList<>();
    for (String a : args) {
      if (a.startsWith(OPTION)) {
        events = parseEvents(a.substring(OPTION.length()));
      } else {
        measured.add(a);
      }
    }
    List<String> warm = new ArrayList<>();
    if (events > 0) {
      for (String a : measured) {
        warm.add(forWarmup(a, events));
      }
    }
    return new WarmupPass(events, warm.toArray(new String[0]), measured.toArray(new String[0]));
  }

  /**
   * Parses a warm-up event count.
   *
   * @throws IllegalArgumentException naming the option when {@code v} is not a whole number >= 0
   */
  static long parseEvents(String v) {
    try {
      long n = Long.parseLong(v.trim());
      if (n >= 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(OPTION + v + " is not a warm-up event count; allowed: a whole "
        + "number >= 0 (0 = no warm-up pass)");
  }

  /** One argument as the warm-up pass sees it. */
  static String forWarmup(String arg, long events) {
    if (arg.startsWith("--numEvents=")) {
      return "--numEvents=" + events;
    }
    if (arg.startsWith("--perfFilename=")) {
      String f = arg.substring("--perfFilename=".length());
      return "--perfFilename=" + (f.endsWith(".json") ? f.substring(0, f.length() - 5) + SUFFIX + ".json" : f + SUFFIX);
    }
    if (arg.startsWith("--stateDirectory=") || arg.startsWith("--stateBackendStoragePath=")) {
      String trimmed = arg.endsWith("/") ? arg.substring(0, arg.length() - 1) : arg;
      return trimmed + SUFFIX;
    }
    if (arg.startsWith("--samzaConfigOverride=")) {
      String[] entries = arg.substring("--samzaConfigOverride=".length()).split(",", -1);
      StringBuilder sb = new StringBuilder("--samzaConfigOverride=");
      for (int i = 0; i < entries.length; i++) {
        String e = entries[i];
        sb.append(i == 0 ? "" : ",").append(e.startsWith("weir.kafka.topic.prefix=") ? e + SUFFIX : e);
      }
      return sb.toString();
    }
    return arg;
  }
}
