// Role: the driver's --runner-options: Beam/Nexmark options given to one runner only (e.g. Flink's
// --objectReuse, Weir's --objectCacheSize), where the options after `--` go to every runner.
// Threading: immutable after parsing; safe from any thread.
package dev.weir.nexmark.driver;

import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Options per runner, parsed from repeatable {@code --runner-options RUNNER=OPTIONS} values, where
 * {@code OPTIONS} is a list of {@code --name=value} (or a bare {@code --name}) separated by commas
 * or spaces, e.g. {@code flink=--objectReuse=true,--fasterCopy=true} or
 * {@code weir=--maxBundleSize=100}. A comma splits only before {@code --}, so a value may itself hold
 * commas ({@code weir-samza=--samzaConfigOverride=a=1,b=2}). A run's own options apply last: they
 * win over the driver's, the sweep's and those after {@code --}.
 */
public final class RunnerOptions {
  private final Map<RunnerKind, Map<String, String>> perRunner;

  private RunnerOptions(Map<RunnerKind, Map<String, String>> perRunner) {
    this.perRunner = perRunner;
  }

  /** No runner-specific options. */
  public static RunnerOptions none() {
    return new RunnerOptions(new EnumMap<>(RunnerKind.class));
  }

  /**
   * Parses the values of {@code --runner-options}; a runner named twice gets both lists, the later
   * winning where a name repeats.
   *
   * @throws IllegalArgumentException naming {@code --runner-options} and the value when a value has
   *     no {@code RUNNER=}, names an unknown runner, or holds an item that is not {@code --name[=value]}
   */
  public static RunnerOptions parse(List<String> values) {
    Map<RunnerKind, Map<String, String>> per = new EnumMap<>(RunnerKind.class);
    for (String value : values == null ? List.<String>of() : values) {
      int eq = value.indexOf('=');
      if (eq <= 0 || value.startsWith("-")) {
        throw new IllegalArgumentException("--runner-options '" + value + "' must look like RUNNER=--name=value,... "
            + "(RUNNER one of " + RunnerKind.ids() + ")");
      }
      RunnerKind runner;
      try {
        runner = RunnerKind.of(value.substring(0, eq));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--runner-options '" + value + "': " + e.getMessage());
      }
      Map<String, String> options = per.computeIfAbsent(runner, k -> new LinkedHashMap<>());
      for (String item : value.substring(eq + 1).trim().split("(,|\\s+)(?=--)")) {
        String it = item.trim();
        if (it.isEmpty()) {
          continue;
        }
        if (!it.startsWith("--") || it.length() == 2 || it.charAt(2) == '=') {
          throw new IllegalArgumentException("--runner-options '" + value + "': '" + it
              + "' is not an option; give --name=value or --name");
        }
        int e = it.indexOf('=');
        options.put(e < 0 ? it.substring(2) : it.substring(2, e), e < 0 ? null : it.substring(e + 1));
      }
    }
    return new RunnerOptions(per);
  }

  /** The options of {@code runner} (name -> value, null for a bare flag), in the order given; empty if none. */
  public Map<String, String> of(RunnerKind runner) {
    return Collections.unmodifiableMap(perRunner.getOrDefault(runner, Map.of()));
  }

  /** Runner id -> its options, for the results' settings; only runners that have some. */
  public Map<String, Map<String, String>> describe() {
    Map<String, Map<String, String>> d = new LinkedHashMap<>();
    perRunner.forEach((k, v) -> {
      if (!v.isEmpty()) {
        d.put(k.id(), v);
      }
    });
    return d;
  }
}
