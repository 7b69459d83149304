// Role: one --sweep NAME=v1,v2,... option (a runner or Nexmark option varied across values) and
// the cartesian product of several sweeps. Threading: immutable; safe from any thread.
package dev.weir.nexmark.driver;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A pipeline option (without the leading dashes, e.g. {@code maxBundleSize}) and the values it
 * takes, each value its own run.
 */
public record Sweep(String name, List<String> values) {

  public Sweep {
    values = List.copyOf(values);
  }

  /**
   * Parses {@code NAME=v1,v2,...}; a leading {@code --} on NAME is allowed and dropped.
   *
   * @throws IllegalArgumentException when the name or every value is missing
   */
  public static Sweep parse(String spec) {
    int eq = spec == null ? -1 : spec.indexOf('=');
    if (eq < 0) {
      throw new IllegalArgumentException("sweep must be NAME=v1,v2,...: '" + spec + "'");
    }
    String name = spec.substring(0, eq).trim();
    while (name.startsWith("-")) {
      name = name.substring(1);
    }
    if (name.isEmpty() || !name.matches("[A-Za-z][A-Za-z0-9_.]*")) {
      throw new IllegalArgumentException("bad sweep option name in '" + spec + "'");
    }
    List<String> values = new ArrayList<>();
    for (String v : spec.substring(eq + 1).split(",", -1)) {
      String t = v.trim();
      if (t.isEmpty()) {
        throw new IllegalArgumentException("empty value in sweep '" + spec + "'");
      }
      values.add(t);
    }
    return new Sweep(name, values);
  }

  /**
   * Every combination of one value per sweep, in the order given (the first sweep varies
   * slowest). With no sweeps, one empty combination.
   */
  public static List<Map<String, String>> combinations(List<Sweep> sweeps) {
    List<Map<String, String>> out = new ArrayList<>();
    out.add(new LinkedHashMap<>());
    for (Sweep s : sweeps) {
      List<Map<String, String>> next = new ArrayList<>();
      for (Map<String, String> base : out) {
        for (String v : s.values()) {
          Map<String, String> m = new LinkedHashMap<>(base);
          m.put(s.name(), v);
          next.add(m);
        }
      }
      out = next;
    }
    return out;
  }
}
