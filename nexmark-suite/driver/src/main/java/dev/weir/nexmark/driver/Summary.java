// Role: reduces the runs to one row per (query, mode, sweep values): the median events/s of each
// runner, the Weir/Flink and Weir/Direct ratios and their geometric means; renders the
// Nexmark-style console table.
// Threading: stateless apart from the built rows; built and read on the driver's main thread.
package dev.weir.nexmark.driver;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The comparative summary. Ratios are of Nexmark's events/s (higher is faster); a ratio is null
 * unless both runs of the pair finished ok. With --repeat, each runner's median over repeats is used.
 */
@JsonPropertyOrder({"rows", "geomeanWeirOverFlink", "geomeanWeirOverDirect", "ratioQueries"})
public final class Summary {
  /** One table row. */
  @JsonPropertyOrder({"query", "queryName", "mode", "sweep", "eventsPerSec", "status",
      "numResults", "weirOverFlink", "weirOverDirect", "weirOverBare"})
  public static final class Row {
    public int query;
    public String queryName;
    public String mode;
    public String sweep;
    /** runner -> median events/s of its ok runs (null when none was ok). */
    public Map<String, Double> eventsPerSec = new LinkedHashMap<>();
    /** runner -> status of its (last) run. */
    public Map<String, String> status = new LinkedHashMap<>();
    /** runner -> result count of its (last ok) run. */
    public Map<String, Long> numResults = new LinkedHashMap<>();
    public Double weirOverFlink;
    public Double weirOverDirect;
    public Double weirOverBare;
  }

  public List<Row> rows = new ArrayList<>();
  public Double geomeanWeirOverFlink;
  public Double geomeanWeirOverDirect;
  /** Number of rows that have a Weir/Flink resp. Weir/Direct ratio. */
  public Map<String, Integer> ratioQueries = new LinkedHashMap<>();

  /** Builds the summary from runs, keeping the runner order given. */
  public static Summary of(List<RunRecord> runs, List<String> runnerOrder) {
    Map<String, List<RunRecord>> byRow = new TreeMap<>();
    for (RunRecord r : runs) {
      String sweep = sweepLabel(r.sweep);
      String key = String.format("%s|%02d|%s", r.mode, r.query, sweep);
      byRow.computeIfAbsent(key, k -> new ArrayList<>()).add(r);
    }
    Summary s = new Summary();
    List<Double> wf = new ArrayList<>();
    List<Double> wd = new ArrayList<>();
    for (List<RunRecord> group : byRow.values()) {
      Row row = new Row();
      RunRecord first = group.get(0);
      row.query = first.query;
      row.queryName = first.queryName;
      row.mode = first.mode;
      row.sweep = sweepLabel(first.sweep);
      for (String runner : runnerOrder) {
        List<Double> eps = new ArrayList<>();
        String status = null;
        Long results = null;
        for (RunRecord r : group) {
          if (r.runner.equals(runner)) {
            status = r.status;
            if (RunRecord.OK.equals(r.status)) {
              eps.add(r.eventsPerSec);
              results = r.numResults;
            }
          }
        }
        if (status != null) {
          row.eventsPerSec.put(runner, Stats.median(eps));
          row.status.put(runner, eps.isEmpty() ? status : RunRecord.OK);
          row.numResults.put(runner, results);
        }
      }
      row.weirOverFlink = Stats.ratio(row.eventsPerSec.get("weir"), row.eventsPerSec.get("flink"));
      row.weirOverDirect = Stats.ratio(row.eventsPerSec.get("weir"), row.eventsPerSec.get("direct"));
      row.weirOverBare = Stats.ratio(row.eventsPerSec.get("weir"), row.eventsPerSec.get("bare"));
      if (row.weirOverFlink != null) {
        wf.add(row.weirOverFlink);
      }
      if (row.weirOverDirect != null) {
        wd.add(row.weirOverDirect);
      }
      s.rows.add(row);
    }
    s.geomeanWeirOverFlink = Stats.geomean(wf);
    s.geomeanWeirOverDirect = Stats.geomean(wd);
    s.ratioQueries.put("weirOverFlink", wf.size());
    s.ratioQueries.put("weirOverDirect", wd.size());
    return s;
  }

  /** The console table, one line per row, in the spirit of Nexmark's own summary. */
  public String table(List<String> runnerOrder) {
    StringBuilder sb = new StringBuilder();
    boolean sweeps = rows.stream().anyMatch(r -> !r.sweep.isEmpty());
    sb.append(String.format(Locale.ROOT, "%-4s %-31s %-9s", "Q", "query", "mode"));
    if (sweeps) {
      sb.append(String.format(Locale.ROOT, " %-22s", "sweep"));
    }
    for (String r : runnerOrder) {
      sb.append(String.format(Locale.ROOT, " %12s", r + " ev/s"));
    }
    boolean bare = runnerOrder.contains("bare");
    sb.append(String.format(Locale.ROOT, " %10s %11s", "Weir/Flink", "Weir/Direct"));
    if (bare) {
      sb.append(String.format(Locale.ROOT, " %9s", "Weir/bare"));
    }
    sb.append(String.format(Locale.ROOT, "  %s%n", "results (ok runs)"));
    for (Row row : rows) {
      sb.append(String.format(Locale.ROOT, "%-4d %-31s %-9s", row.query, row.queryName, row.mode));
      if (sweeps) {
        sb.append(String.format(Locale.ROOT, " %-22s", row.sweep));
      }
      for (String r : runnerOrder) {
        String cell;
        if (!row.status.containsKey(r)) {
          cell = "-";
        } else if (row.eventsPerSec.get(r) != null) {
          cell = human(row.eventsPerSec.get(r));
        } else {
          cell = row.status.get(r);
        }
        sb.append(String.format(Locale.ROOT, " %12s", cell));
      }
      sb.append(String.format(Locale.ROOT, " %10s %11s", ratio(row.weirOverFlink), ratio(row.weirOverDirect)));
      if (bare) {
        sb.append(String.format(Locale.ROOT, " %9s", percent(row.weirOverBare)));
      }
      sb.append(String.format(Locale.ROOT, "  %s%n", resultsCell(row)));
    }
    sb.append(String.format(Locale.ROOT, "geometric mean of ratios: Weir/Flink %s over %d queries, "
            + "Weir/Direct %s over %d queries%n", ratio(geomeanWeirOverFlink),
        ratioQueries.get("weirOverFlink"), ratio(geomeanWeirOverDirect), ratioQueries.get("weirOverDirect")));
    return sb.toString();
  }

  /** "580 (all)" when every ok runner counted the same, else each runner's count. */
  static String resultsCell(Row row) {
    List<Long> counts = new ArrayList<>();
    StringBuilder each = new StringBuilder();
    row.numResults.forEach((runner, n) -> {
      if (n != null) {
        counts.add(n);
        each.append(each.length() == 0 ? "" : " ").append(runner).append('=').append(n);
      }
    });
    if (counts.isEmpty()) {
      return "-";
    }
    if (counts.stream().distinct().count() == 1) {
      return counts.get(0) + (counts.size() > 1 ? " (all " + counts.size() + " agree)" : "");
    }
    return each + " (differ)";
  }

  /** 1234567 -> "1.23M", 37764 -> "37.8K". */
  static String human(double v) {
    if (v >= 1e6) {
      return String.format(Locale.ROOT, "%.2fM", v / 1e6);
    }
    if (v >= 1e3) {
      return String.format(Locale.ROOT, "%.1fK", v / 1e3);
    }
    return String.format(Locale.ROOT, "%.0f", v);
  }

  /** Weir's share of the no-runner limit, e.g. "26%". */
  private static String percent(Double d) {
    return d == null ? "-" : String.format(Locale.ROOT, "%.0f%%", d * 100);
  }

  private static String ratio(Double d) {
    return d == null ? "-" : String.format(Locale.ROOT, "%.2fx", d);
  }

  static String sweepLabel(Map<String, String> sweep) {
    StringBuilder sb = new StringBuilder();
    new TreeMap<>(sweep).forEach((k, v) -> {
      if (sb.length() > 0) {
        sb.append(',');
      }
      sb.append(k).append('=').append(v);
    });
    return sb.toString();
  }
}
