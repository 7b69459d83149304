// Role: a whole number per runner, for the driver's options that size each runner's runs: --events
// (Nexmark's numEvents, so that each runner can be measured at a size where it runs in steady state
// within the suite's time budget), --warmup-events, and the seconds of --warmup-seconds,
// --warmup-max-seconds and --measured-seconds.
// Threading: immutable; safe from any thread.
package dev.weir.nexmark.driver;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A whole number per runner (events, or seconds). Parsed from a comma-separated list whose items
 * are either a bare count (the default for every runner not named) or {@code runner=count}; e.g.
 * {@code 1000000}, {@code direct=50000,flink=1000000,weir=1000000,bare=1000000} or
 * {@code 500000,direct=50000}. Every runner must end up with a count: a list that names some
 * runners and gives no bare default leaves the others unset, which {@link #forRunner} reports as an
 * error.
 */
public final class PerRunner {
  private final String option;
  private final String unit;
  private final Long defaultCount;
  private final Map<RunnerKind, Long> perRunner;

  private PerRunner(String option, String unit, Long defaultCount, Map<RunnerKind, Long> perRunner) {
    this.option = option;
    this.unit = unit;
    this.defaultCount = defaultCount;
    this.perRunner = perRunner;
  }

  /**
   * Parses an {@code --events} value.
   *
   * @throws IllegalArgumentException naming the item when a count is not a positive integer, a
   *     runner is unknown, or the same runner (or the default) is given twice
   */
  public static PerRunner parse(String text) {
    return parse(text, "--events", 1, "events");
  }

  /**
   * Parses a {@code --warmup-events} value: the same syntax, counts >= 0 (0 = no warm-up pass).
   *
   * @throws IllegalArgumentException as {@link #parse(String)}, naming {@code --warmup-events}
   */
  public static PerRunner parseWarmup(String text) {
    return parse(text, "--warmup-events", 0, "events");
  }

  /**
   * Parses a duration option's value ({@code --warmup-seconds}, {@code --warmup-max-seconds},
   * {@code --measured-seconds}): the same syntax, whole seconds >= 0.
   *
   * @throws IllegalArgumentException as {@link #parse(String)}, naming {@code option}
   */
  public static PerRunner parseSeconds(String text, String option) {
    return parse(text, option, 0, "s");
  }

  private static PerRunner parse(String text, String option, long minimum, String unit) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException(option + " is empty; give a number (e.g. 10) or "
          + "runner=number items (e.g. 10,direct=0)");
    }
    Long dflt = null;
    Map<RunnerKind, Long> per = new LinkedHashMap<>();
    for (String raw : text.split(",")) {
      String item = raw.trim();
      int eq = item.indexOf('=');
      if (eq < 0) {
        if (dflt != null) {
          throw new IllegalArgumentException(option + " gives two default counts ('" + text + "')");
        }
        dflt = count(item, option, minimum, unit);
      } else {
        RunnerKind r = RunnerKind.of(item.substring(0, eq));
        if (per.put(r, count(item.substring(eq + 1), option, minimum, unit)) != null) {
          throw new IllegalArgumentException(option + " names " + r.id() + " twice ('" + text + "')");
        }
      }
    }
    return new PerRunner(option, unit, dflt, per);
  }

  private static long count(String s, String option, long minimum, String unit) {
    try {
      long n = Long.parseLong(s.trim().replace("_", ""));
      if (n >= minimum) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    String what = unit.equals("s") ? "a whole number of seconds" : "an event count";
    throw new IllegalArgumentException(option + ": '" + s.trim() + "' is not "
        + (minimum > 0 ? "a positive " + what.substring(what.indexOf(' ') + 1) : what + " >= 0"));
  }

  /**
   * The count for {@code runner}.
   *
   * @throws IllegalArgumentException when the option neither names the runner nor gives a default
   */
  public long forRunner(RunnerKind runner) {
    Long n = perRunner.getOrDefault(runner, defaultCount);
    if (n == null) {
      throw new IllegalArgumentException(option + " gives no count for runner " + runner.id()
          + "; add " + runner.id() + "=N or a default count");
    }
    return n;
  }

  /** runner id -> count, for the runners given, in their order. */
  public Map<String, Long> asMap(Collection<RunnerKind> runners) {
    Map<String, Long> m = new LinkedHashMap<>();
    for (RunnerKind r : runners) {
      m.put(r.id(), forRunner(r));
    }
    return m;
  }

  /** Whether every one of {@code runners} gets the same count. */
  public boolean uniform(Collection<RunnerKind> runners) {
    return asMap(runners).values().stream().distinct().count() <= 1;
  }

  /** The largest count over {@code runners} (0 when there are none). */
  public long max(Collection<RunnerKind> runners) {
    return asMap(runners).values().stream().mapToLong(Long::longValue).max().orElse(0);
  }

  /**
   * The runners' counts without those that are 0: "10 s" when the others agree, else
   * "flink 10, weir 12 s"; then " (direct: none)" for the runners at 0. "" when all are 0.
   */
  public String describeNonZero(Collection<RunnerKind> runners) {
    Map<String, Long> given = new LinkedHashMap<>(asMap(runners));
    List<String> none = new ArrayList<>();
    given.forEach((r, n) -> {
      if (n == 0) {
        none.add(r);
      }
    });
    none.forEach(given::remove);
    if (given.isEmpty()) {
      return "";
    }
    return none.isEmpty() ? format(given) : format(given) + " (" + String.join(", ", none) + ": none)";
  }

  /** "50,000 events" when uniform, else "direct 50,000, flink 1,000,000 events" (or "... s"). */
  public String describe(Collection<RunnerKind> runners) {
    return format(asMap(runners));
  }

  /** "50,000 events" when all of {@code m} agree, else "direct 50,000, flink 1,000,000 events". */
  private String format(Map<String, Long> m) {
    if (m.values().stream().distinct().count() <= 1 && !m.isEmpty()) {
      return String.format(Locale.ROOT, "%,d %s", m.values().iterator().next(), unit);
    }
    StringBuilder sb = new StringBuilder();
    m.forEach((r, n) -> sb.append(sb.length() == 0 ? "" : ", ")
        .append(String.format(Locale.ROOT, "%s %,d", r, n)));
    return sb.append(' ').append(unit).toString();
  }

}
