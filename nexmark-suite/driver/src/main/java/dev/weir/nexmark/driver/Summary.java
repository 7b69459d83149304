// Role: reduces the runs to one row per (query, mode, sweep values): the median events/s of each
// runner, the Weir/Flink, Weir/Direct and weir-samza/Weir ratios and their geometric means, and the
// Beam release each runner ran on; renders the Nexmark-style console table.
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
@JsonPropertyOrder({"rows", "geomeanWeirOverFlink", "geomeanWeirOverDirect", "geomeanWeirSamzaOverWeir",
    "ratioQueries", "beamVersions", "beamNote"})
public final class Summary {
  /** One table row. */
  @JsonPropertyOrder({"query", "queryName", "mode", "sweep", "eventsPerSec", "status",
      "numResults", "checkResults", "correct", "weirOverFlink", "weirOverDirect", "weirOverBare",
      "weirSamzaOverWeir"})
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
    /** runner -> result count of its (last ok) run's check pass, for runners that ran one. */
    public Map<String, Long> checkResults = new LinkedHashMap<>();
    /**
     * runner -> verdict over its runs: false if any was wrong, true if any was right, else null
     * (not judged, or timing-dependent).
     */
    public Map<String, Boolean> correct = new LinkedHashMap<>();
    /** Whether some run's count was recorded as timing-dependent. */
    public boolean timingDependent;
    public Double weirOverFlink;
    public Double weirOverDirect;
    public Double weirOverBare;
    /** weir-samza's events/s over embedded Weir's: what crossing process boundaries (Kafka) costs. */
    public Double weirSamzaOverWeir;
  }

  public List<Row> rows = new ArrayList<>();
  public Double geomeanWeirOverFlink;
  public Double geomeanWeirOverDirect;
  /** Geometric mean of {@link Row#weirSamzaOverWeir}; null when no row has both. */
  public Double geomeanWeirSamzaOverWeir;
  /** Number of rows that have a Weir/Flink resp. Weir/Direct (and weir-samza/Weir) ratio. */
  public Map<String, Integer> ratioQueries = new LinkedHashMap<>();
  /**
   * runner -> the Beam SDK release its runs ran on (their {@link RunRecord#beamVersion}; several,
   * comma-separated, if they differed); runners none of whose runs said are left out.
   */
  public Map<String, String> beamVersions = new LinkedHashMap<>();
  /** Why the runners ran on different Beam releases ({@link #beamNote(Map)}); null when they did not. */
  public String beamNote;

  /** Builds the summary from runs, keeping the runner order given. */
  public static Summary of(List<RunRecord> runs, List<String> runnerOrder) {
    Map<String, List<RunRecord>> byRow = new TreeMap<>();
    for (RunRecord r : runs) {
      String sweep = sweepLabel(r.sweep);
      String key = String.format("%s|%02d|%s", r.mode, r.query, sweep);
      byRow.computeIfAbsent(key, k -> new ArrayList<>()).add(r);
    }
    Summary s = new Summary();
    for (String runner : runnerOrder) {
      java.util.Set<String> versions = new java.util.TreeSet<>();
      for (RunRecord r : runs) {
        if (runner.equals(r.runner) && r.beamVersion != null) {
          versions.add(r.beamVersion);
        }
      }
      if (!versions.isEmpty()) {
        s.beamVersions.put(runner, String.join(", ", versions));
      }
    }
    s.beamNote = beamNote(s.beamVersions);
    List<Double> wf = new ArrayList<>();
    List<Double> wd = new ArrayList<>();
    List<Double> sw = new ArrayList<>();
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
        Long checked = null;
        Boolean correct = null;
        for (RunRecord r : group) {
          if (r.runner.equals(runner)) {
            status = r.status;
            if (RunRecord.OK.equals(r.status)) {
              eps.add(r.eventsPerSec);
              results = r.numResults;
              checked = r.checkResults;
            }
            if (Boolean.FALSE.equals(r.correct)) {
              correct = Boolean.FALSE;
            } else if (Boolean.TRUE.equals(r.correct) && correct == null) {
              correct = Boolean.TRUE;
            }
            row.timingDependent |= Correctness.recordsTimingDependent(r.correctness);
          }
        }
        if (status != null) {
          row.eventsPerSec.put(runner, Stats.median(eps));
          row.status.put(runner, eps.isEmpty() ? status : RunRecord.OK);
          row.numResults.put(runner, results);
          row.correct.put(runner, correct);
          if (checked != null) {
            row.checkResults.put(runner, checked);
          }
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
      row.weirSamzaOverWeir = Stats.ratio(row.eventsPerSec.get("weir-samza"), row.eventsPerSec.get("weir"));
      if (row.weirSamzaOverWeir != null) {
        sw.add(row.weirSamzaOverWeir);
      }
      s.rows.add(row);
    }
    s.geomeanWeirOverFlink = Stats.geomean(wf);
    s.geomeanWeirOverDirect = Stats.geomean(wd);
    s.ratioQueries.put("weirOverFlink", wf.size());
    s.ratioQueries.put("weirOverDirect", wd.size());
    if (runnerOrder.contains("weir-samza") && runnerOrder.contains("weir")) {
      s.geomeanWeirSamzaOverWeir = Stats.geomean(sw);
      s.ratioQueries.put("weirSamzaOverWeir", sw.size());
    }
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
      sb.append(String.format(Locale.ROOT, " %" + columnWidth(r) + "s", r + " ev/s"));
    }
    boolean bare = runnerOrder.contains("bare");
    boolean samza = runnerOrder.contains("weir-samza") && runnerOrder.contains("weir");
    sb.append(String.format(Locale.ROOT, " %10s %11s", "Weir/Flink", "Weir/Direct"));
    if (bare) {
      sb.append(String.format(Locale.ROOT, " %9s", "Weir/bare"));
    }
    if (samza) {
      sb.append(String.format(Locale.ROOT, " %10s", "Samza/Weir"));
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
        sb.append(String.format(Locale.ROOT, " %" + columnWidth(r) + "s", cell));
      }
      sb.append(String.format(Locale.ROOT, " %10s %11s", ratio(row.weirOverFlink), ratio(row.weirOverDirect)));
      if (bare) {
        sb.append(String.format(Locale.ROOT, " %9s", percent(row.weirOverBare)));
      }
      if (samza) {
        sb.append(String.format(Locale.ROOT, " %10s", ratio(row.weirSamzaOverWeir)));
      }
      sb.append(String.format(Locale.ROOT, "  %s%n", resultsCell(row)));
    }
    sb.append(String.format(Locale.ROOT, "geometric mean of ratios: Weir/Flink %s over %d queries, "
            + "Weir/Direct %s over %d queries%n", ratio(geomeanWeirOverFlink),
        ratioQueries.get("weirOverFlink"), ratio(geomeanWeirOverDirect), ratioQueries.get("weirOverDirect")));
    if (samza) {
      sb.append(String.format(Locale.ROOT, "weir-samza (Weir on samza-core, streams through Kafka) / embedded Weir: "
          + "%s over %d queries%n", ratio(geomeanWeirSamzaOverWeir), ratioQueries.get("weirSamzaOverWeir")));
    }
    if (!beamVersions.isEmpty()) {
      StringBuilder each = new StringBuilder();
      beamVersions.forEach((runner, v) -> each.append(each.length() == 0 ? "" : ", ").append(runner)
          .append(' ').append(v));
      sb.append("Beam SDK per runner: ").append(each).append(System.lineSeparator());
      if (beamNote != null) {
        sb.append(beamNote).append(System.lineSeparator());
      }
    }
    return sb.toString();
  }

  /**
   * The sentence that says why the runners ran on different Beam releases, when Weir ran on a newer
   * minor than Direct and Flink (e.g. "Weir runs on Beam 2.73 while Direct and Flink run on Beam
   * 2.70, the newest Beam whose Flink runner is on Maven Central."); null otherwise (one release for all,
   * or another combination: the per-runner versions then speak for themselves).
   *
   * @param versions runner -> Beam release, as in {@link #beamVersions}
   */
  static String beamNote(Map<String, String> versions) {
    String weir = minor(versions.get("weir"));
    if (weir == null) {
      return null;
    }
    List<String> peers = new ArrayList<>();
    java.util.Set<String> peerMinors = new java.util.TreeSet<>();
    for (String peer : List.of("direct", "flink")) {
      String m = minor(versions.get(peer));
      if (m != null && !m.equals(weir)) {
        peers.add(Character.toUpperCase(peer.charAt(0)) + peer.substring(1));
        peerMinors.add(m);
      }
    }
    if (peers.isEmpty() || peerMinors.size() != 1 || compareMinor(weir, peerMinors.iterator().next()) <= 0) {
      return null;
    }
    return "Weir runs on Beam " + weir + " while " + String.join(" and ", peers)
        + (peers.size() == 1 ? " runs" : " run") + " on Beam " + peerMinors.iterator().next()
        + ", the newest Beam whose Flink runner is on Maven Central.";
  }

  /** "2.73" of "2.73.0" (the first two dot-separated parts); null for null or another shape. */
  static String minor(String version) {
    if (version == null || version.contains(",")) {
      return null;
    }
    String[] p = version.trim().split("\\.");
    return p.length >= 2 && p[0].matches("[0-9]+") && p[1].matches("[0-9]+") ? p[0] + "." + p[1] : null;
  }

  private static int compareMinor(String a, String b) {
    String[] x = a.split("\\.");
    String[] y = b.split("\\.");
    int c = Integer.compare(Integer.parseInt(x[0]), Integer.parseInt(y[0]));
    return c != 0 ? c : Integer.compare(Integer.parseInt(x[1]), Integer.parseInt(y[1]));
  }

  /** Width of a runner's events/s column: 12, or the header's length. */
  private static int columnWidth(String runner) {
    return Math.max(12, runner.length() + 5);
  }

  /**
   * The row's result counts and what was judged of them: "580 (all 3 agree)" when every ok runner
   * counted the same, else each runner's count; then the check passes' counts, if any ran
   * ("check flink=17 weir=17"); then the verdict: "[ok]" when every judged runner was right,
   * "[WRONG: weir]", "[timing-dependent]", or "[not judged]".
   */
  static String resultsCell(Row row) {
    String counts = countsCell(row);
    if ("-".equals(counts)) {
      return counts;
    }
    StringBuilder sb = new StringBuilder(counts);
    if (!row.checkResults.isEmpty()) {
      sb.append(" check");
      row.checkResults.forEach((runner, n) -> sb.append(' ').append(runner).append('=').append(n));
    }
    List<String> wrong = new ArrayList<>();
    boolean anyRight = false;
    for (Map.Entry<String, Boolean> e : row.correct.entrySet()) {
      if (Boolean.FALSE.equals(e.getValue())) {
        wrong.add(e.getKey());
      }
      anyRight |= Boolean.TRUE.equals(e.getValue());
    }
    sb.append(!wrong.isEmpty() ? " [WRONG: " + String.join(", ", wrong) + "]"
        : row.timingDependent ? " [timing-dependent]" : anyRight ? " [ok]" : " [not judged]");
    return sb.toString();
  }

  /** "580 (all 3 agree)" when every ok runner counted the same, else each runner's count. */
  static String countsCell(Row row) {
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
    return each.toString();
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
