// Role: reduces the runs to one row per (query, mode, sweep values): the median events/s of each
// runner with its min-max over repeats, CPU per event and peak RSS, Weir's ratio over each peer
// (every Flink variant, Direct, bare) and weir-samza/Weir with their geometric means, and the Beam
// release each runner ran on; renders the Nexmark-style console table.
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
@JsonPropertyOrder({"rows", "flinkReference", "geomeanWeirOverFlink", "geomeanWeirOverDirect",
    "geomeanWeirSamzaOverWeir", "geomeanWeirOver", "ratioQueries", "beamVersions", "beamNote"})
public final class Summary {
  /**
   * Flink variants in the order one is taken as "the" Flink of {@link Row#weirOverFlink}: the tuned
   * heap variant (the default comparison's peer) before the tuned RocksDB one before Flink as shipped.
   */
  static final List<String> FLINK_PREFERENCE = List.of("flink-tuned", "flink-tuned-rocksdb", "flink");
  /** The runners Weir's throughput is divided by, where they ran, in this order. */
  static final List<String> PEERS = List.of("flink-tuned", "flink-tuned-rocksdb", "flink", "direct", "bare");

  /** One table row. */
  @JsonPropertyOrder({"query", "queryName", "mode", "sweep", "eventsPerSec", "eventsPerSecMin",
      "eventsPerSecMax", "okRuns", "cpuMicrosPerEvent", "peakRssBytes", "measuredCompileShare", "status",
      "numResults", "checkResults", "noDelayResults", "noDelayBatchResults", "correct", "weirOverFlink", "weirOverDirect", "weirOverBare",
      "weirOver", "weirSamzaOverWeir"})
  public static final class Row {
    public int query;
    public String queryName;
    public String mode;
    public String sweep;
    /** runner -> median events/s of its ok runs (null when none was ok). */
    public Map<String, Double> eventsPerSec = new LinkedHashMap<>();
    /** runner -> the lowest events/s of its ok runs (runners with one). */
    public Map<String, Double> eventsPerSecMin = new LinkedHashMap<>();
    /** runner -> the highest events/s of its ok runs (runners with one). */
    public Map<String, Double> eventsPerSecMax = new LinkedHashMap<>();
    /** runner -> how many of its runs (repeats) finished ok. */
    public Map<String, Integer> okRuns = new LinkedHashMap<>();
    /**
     * runner -> median over its ok runs of the CPU time of the measured passes (every thread of the
     * JVM) per event they processed, microseconds; runners whose runs did not report CPU are left out.
     */
    public Map<String, Double> cpuMicrosPerEvent = new LinkedHashMap<>();
    /** runner -> median over its ok runs of the measured passes' peak resident set, bytes. */
    public Map<String, Long> peakRssBytes = new LinkedHashMap<>();
    /**
     * runner -> median over its ok runs of the JIT compilers' time over the measured passes' wall
     * time (all compiler threads; near 0 when the warm-up left the JIT settled).
     */
    public Map<String, Double> measuredCompileShare = new LinkedHashMap<>();
    /** runner -> status of its (last) run. */
    public Map<String, String> status = new LinkedHashMap<>();
    /** runner -> result count of its (last ok) run. */
    public Map<String, Long> numResults = new LinkedHashMap<>();
    /** runner -> result count of its (last ok) run's check pass, for runners that ran one. */
    public Map<String, Long> checkResults = new LinkedHashMap<>();
    /** runner -> result count of its (last ok) run's no-delay pass (Q6, Q9 streaming), for runners that ran one. */
    public Map<String, Long> noDelayResults = new LinkedHashMap<>();
    /** runner -> result count of its (last ok) run's batch reference pass, for runners that ran one. */
    public Map<String, Long> noDelayBatchResults = new LinkedHashMap<>();
    /**
     * runner -> verdict over its runs: false if any was wrong, true if any was right, else null
     * (not judged, or timing-dependent).
     */
    public Map<String, Boolean> correct = new LinkedHashMap<>();
    /** Whether some run's count was recorded as timing-dependent. */
    public boolean timingDependent;
    /** Weir's median events/s over that of {@link Summary#flinkReference}; null unless both ran ok. */
    public Double weirOverFlink;
    public Double weirOverDirect;
    public Double weirOverBare;
    /** peer ({@link #PEERS}) -> Weir's median events/s over the peer's, where both ran ok. */
    public Map<String, Double> weirOver = new LinkedHashMap<>();
    /** weir-samza's events/s over embedded Weir's: what crossing process boundaries (Kafka) costs. */
    public Double weirSamzaOverWeir;
  }

  public List<Row> rows = new ArrayList<>();
  /**
   * The Flink variant "Weir/Flink" divides by: the first of {@link #FLINK_PREFERENCE} that ran;
   * null when none did. Results before schema 1.9.0 had only {@code flink}.
   */
  public String flinkReference;
  public Double geomeanWeirOverFlink;
  public Double geomeanWeirOverDirect;
  /** Geometric mean of {@link Row#weirSamzaOverWeir}; null when no row has both. */
  public Double geomeanWeirSamzaOverWeir;
  /** peer -> geometric mean of {@link Row#weirOver} over the rows that have it. */
  public Map<String, Double> geomeanWeirOver = new LinkedHashMap<>();
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
    s.flinkReference = FLINK_PREFERENCE.stream().filter(runnerOrder::contains).findFirst().orElse(null);
    Map<String, List<Double>> over = new LinkedHashMap<>();
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
        List<Double> cpu = new ArrayList<>();
        List<Double> rss = new ArrayList<>();
        List<Double> jit = new ArrayList<>();
        String status = null;
        Long results = null;
        Long checked = null;
        Long noDelay = null;
        Long noDelayBatch = null;
        Boolean correct = null;
        for (RunRecord r : group) {
          if (r.runner.equals(runner)) {
            status = r.status;
            if (RunRecord.OK.equals(r.status)) {
              eps.add(r.eventsPerSec);
              cpu.add(cpuMicrosPerEvent(r));
              rss.add(r.peakRssBytes == null ? null : r.peakRssBytes.doubleValue());
              jit.add(r.measuredCompileShare);
              results = r.numResults;
              checked = r.checkResults;
              noDelay = r.noDelayResults;
              noDelayBatch = r.noDelayBatchResults;
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
          row.okRuns.put(runner, eps.size());
          if (!eps.isEmpty()) {
            row.eventsPerSecMin.put(runner, eps.stream().min(Double::compare).get());
            row.eventsPerSecMax.put(runner, eps.stream().max(Double::compare).get());
          }
          Double cpuMedian = Stats.median(cpu);
          if (cpuMedian != null) {
            row.cpuMicrosPerEvent.put(runner, cpuMedian);
          }
          Double jitMedian = Stats.median(jit);
          if (jitMedian != null) {
            row.measuredCompileShare.put(runner, jitMedian);
          }
          Double rssMedian = Stats.median(rss);
          if (rssMedian != null) {
            row.peakRssBytes.put(runner, Math.round(rssMedian));
          }
          row.status.put(runner, eps.isEmpty() ? status : RunRecord.OK);
          row.numResults.put(runner, results);
          row.correct.put(runner, correct);
          if (checked != null) {
            row.checkResults.put(runner, checked);
          }
          if (noDelay != null) {
            row.noDelayResults.put(runner, noDelay);
          }
          if (noDelayBatch != null) {
            row.noDelayBatchResults.put(runner, noDelayBatch);
          }
        }
      }
      for (String peer : PEERS) {
        Double ratio = Stats.ratio(row.eventsPerSec.get("weir"), row.eventsPerSec.get(peer));
        if (ratio != null) {
          row.weirOver.put(peer, ratio);
          over.computeIfAbsent(peer, k -> new ArrayList<>()).add(ratio);
        }
      }
      row.weirOverFlink = s.flinkReference == null ? null
          : Stats.ratio(row.eventsPerSec.get("weir"), row.eventsPerSec.get(s.flinkReference));
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
    over.forEach((peer, ratios) -> {
      s.geomeanWeirOver.put(peer, Stats.geomean(ratios));
      s.ratioQueries.put("weirOver:" + peer, ratios.size());
    });
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

  /**
   * CPU time of a run's measured passes per event they processed, microseconds: its
   * {@link RunRecord#cpuSeconds} over {@code events x measuredPasses}; null when either is unknown.
   */
  static Double cpuMicrosPerEvent(RunRecord r) {
    if (r.cpuSeconds == null || r.events <= 0) {
      return null;
    }
    int passes = r.measuredPasses == null ? 1 : Math.max(1, r.measuredPasses);
    return r.cpuSeconds * 1e6 / ((double) r.events * passes);
  }

  /**
   * The console table, one line per row, in the spirit of Nexmark's own summary: each runner's median
   * events/s (with its min-max when a runner ran a point more than once), Weir's ratio over each peer
   * that ran, the result counts and verdicts; then each runner's CPU per event and peak RSS.
   */
  public String table(List<String> runnerOrder) {
    StringBuilder sb = new StringBuilder();
    boolean sweeps = rows.stream().anyMatch(r -> !r.sweep.isEmpty());
    boolean spread = rows.stream().anyMatch(r -> r.okRuns.values().stream().anyMatch(n -> n > 1));
    List<String> peers = new ArrayList<>();
    if (runnerOrder.contains("weir")) {
      PEERS.stream().filter(p -> runnerOrder.contains(p) && !"bare".equals(p)).forEach(peers::add);
    }
    boolean bare = runnerOrder.contains("bare") && runnerOrder.contains("weir");
    boolean samza = runnerOrder.contains("weir-samza") && runnerOrder.contains("weir");
    sb.append(String.format(Locale.ROOT, "%-4s %-31s %-9s", "Q", "query", "mode"));
    if (sweeps) {
      sb.append(String.format(Locale.ROOT, " %-22s", "sweep"));
    }
    for (String r : runnerOrder) {
      sb.append(String.format(Locale.ROOT, " %" + columnWidth(r, spread) + "s", r + " ev/s"));
    }
    for (String p : peers) {
      sb.append(String.format(Locale.ROOT, " %" + ratioWidth(p) + "s", "Weir/" + p));
    }
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
        sb.append(String.format(Locale.ROOT, " %" + columnWidth(r, spread) + "s", throughputCell(row, r)));
      }
      for (String p : peers) {
        sb.append(String.format(Locale.ROOT, " %" + ratioWidth(p) + "s", ratio(row.weirOver.get(p))));
      }
      if (bare) {
        sb.append(String.format(Locale.ROOT, " %9s", percent(row.weirOverBare)));
      }
      if (samza) {
        sb.append(String.format(Locale.ROOT, " %10s", ratio(row.weirSamzaOverWeir)));
      }
      sb.append(String.format(Locale.ROOT, "  %s%n", resultsCell(row)));
    }
    if (!peers.isEmpty()) {
      StringBuilder means = new StringBuilder();
      for (String p : peers) {
        means.append(means.length() == 0 ? "" : ", ").append("Weir/").append(p).append(' ')
            .append(ratio(geomeanWeirOver.get(p))).append(" over ")
            .append(ratioQueries.getOrDefault("weirOver:" + p, 0)).append(" queries");
      }
      sb.append("geometric mean of ratios: ").append(means).append(System.lineSeparator());
    }
    if (spread) {
      sb.append("events/s: median of each runner's ok runs [lowest-highest]; ratios are of medians")
          .append(System.lineSeparator());
    }
    if (samza) {
      sb.append(String.format(Locale.ROOT, "weir-samza (Weir on samza-core, streams through Kafka) / embedded Weir: "
          + "%s over %d queries%n", ratio(geomeanWeirSamzaOverWeir), ratioQueries.get("weirSamzaOverWeir")));
    }
    costTable(sb, runnerOrder);
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
   * The cost block under the table: per row, each runner's CPU microseconds per event, peak RSS
   * (MiB) and JIT compile share of its measured passes, medians over its ok runs; nothing when no
   * run reported CPU or RSS.
   */
  private void costTable(StringBuilder sb, List<String> runnerOrder) {
    List<String> costed = runnerOrder.stream()
        .filter(r -> rows.stream().anyMatch(row -> row.cpuMicrosPerEvent.containsKey(r) || row.peakRssBytes.containsKey(r)))
        .toList();
    if (costed.isEmpty()) {
      return;
    }
    sb.append(System.lineSeparator()).append(String.format(Locale.ROOT, "%-4s %-9s", "Q", "mode"));
    for (String r : costed) {
      sb.append(String.format(Locale.ROOT, " %" + Math.max(10, r.length() + 2) + "s", r));
    }
    sb.append("   <- CPU us/event");
    for (String r : costed) {
      sb.append(String.format(Locale.ROOT, " %" + Math.max(10, r.length() + 2) + "s", r));
    }
    sb.append("   <- peak RSS MiB");
    for (String r : costed) {
      sb.append(String.format(Locale.ROOT, " %" + Math.max(10, r.length() + 2) + "s", r));
    }
    sb.append("   <- JIT share (measured passes; medians)").append(System.lineSeparator());
    for (Row row : rows) {
      sb.append(String.format(Locale.ROOT, "%-4d %-9s", row.query, row.mode));
      for (String r : costed) {
        Double c = row.cpuMicrosPerEvent.get(r);
        sb.append(String.format(Locale.ROOT, " %" + Math.max(10, r.length() + 2) + "s",
            c == null ? "-" : String.format(Locale.ROOT, c < 10 ? "%.2f" : "%.1f", c)));
      }
      sb.append("                  ");
      for (String r : costed) {
        Long b = row.peakRssBytes.get(r);
        sb.append(String.format(Locale.ROOT, " %" + Math.max(10, r.length() + 2) + "s",
            b == null ? "-" : String.valueOf(Math.round(b / 1048576.0))));
      }
      sb.append("                  ");
      for (String r : costed) {
        Double j = row.measuredCompileShare.get(r);
        sb.append(String.format(Locale.ROOT, " %" + Math.max(10, r.length() + 2) + "s",
            j == null ? "-" : String.format(Locale.ROOT, "%.2f", j)));
      }
      sb.append(System.lineSeparator());
    }
  }

  /** A runner's events/s cell: its median, "[min-max]" after it when it ran ok more than once, or its status. */
  static String throughputCell(Row row, String runner) {
    if (!row.status.containsKey(runner)) {
      return "-";
    }
    Double median = row.eventsPerSec.get(runner);
    if (median == null) {
      return row.status.get(runner);
    }
    Integer n = row.okRuns.get(runner);
    if (n == null || n < 2) {
      return human(median);
    }
    return human(median) + " [" + human(row.eventsPerSecMin.get(runner)) + "-"
        + human(row.eventsPerSecMax.get(runner)) + "]";
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
    for (String peer : List.of("direct", "flink-tuned", "flink-tuned-rocksdb", "flink")) {
      String m = minor(versions.get(peer));
      String name = peer.startsWith("flink") ? "Flink" : "Direct";
      if (m != null && !m.equals(weir) && !peers.contains(name)) {
        peers.add(name);
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

  /** Width of a runner's events/s column: 12 (26 with min-max), or the header's length. */
  private static int columnWidth(String runner, boolean spread) {
    return Math.max(spread ? 26 : 12, runner.length() + 5);
  }

  /** Width of a Weir/peer ratio column: the header's length, at least 10. */
  private static int ratioWidth(String peer) {
    return Math.max(10, peer.length() + 5);
  }

  /**
   * The row's result counts and what was judged of them: "580 (all 3 agree)" when every ok runner
   * counted the same, else each runner's count; then the check passes' counts, if any ran
   * ("check flink=17 weir=17") and the no-delay passes' ("no-delay flink-tuned=90 weir=90"); then the
   * verdict: "[ok]" when every judged runner was right,
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
    if (!row.noDelayResults.isEmpty()) {
      sb.append(" no-delay");
      row.noDelayResults.forEach((runner, n) -> sb.append(' ').append(runner).append('=').append(n));
    }
    if (!row.noDelayBatchResults.isEmpty()) {
      sb.append(" batch");
      row.noDelayBatchResults.forEach((runner, n) -> sb.append(' ').append(runner).append('=').append(n));
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
        : row.timingDependent && anyRight ? " [ok; measured counts timing-dependent]"
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
