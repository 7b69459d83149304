package dev.weir.dashboards;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.weir.dashboards.Comparison.Cell;
import dev.weir.dashboards.Comparison.Row;
import dev.weir.dashboards.Comparison.Step;
import dev.weir.dashboards.Comparison.SweepSeries;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Writes the comparative runner report: one self-contained HTML file (Apache ECharts and the data
 * inlined; opens from disk with no network or server).
 *
 * <p>The page shows, for the newest results file: a grouped bar chart of events/s per query with
 * a bar per runner (log-scale toggle), a table per mode with events/s, Weir over each peer (every Flink variant, Direct, bare)
 * ratios (and weir-samza/Weir: what running on samza-core with streams through Kafka costs), correctness, result counts, CPU seconds, peak RSS and GC time with geometric means, and
 * sweep charts, and the Beam release each runner ran on ("Beam 2.73.0" beside the runner's name, and
 * why they differ); across all files: the step-by-step improvement table and a history chart per
 * query; and per file its configuration, machine facts and links to run folders and profiles. Tables are
 * rendered here, so they read without JavaScript; charts are drawn in the browser from embedded
 * JSON.
 *
 * <p>Stateless; safe from any thread.
 */
public final class HtmlReport {

  /** Classpath location of ECharts inside the {@code org.webjars:echarts} jar. */
  static final String ECHARTS_RESOURCE_PREFIX = "META-INF/resources/webjars/echarts/";

  private static final ObjectMapper JSON = new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

  private final String echartsVersion;

  /** @param echartsVersion the ECharts WebJar version on the classpath, e.g. {@code 5.5.0} */
  public HtmlReport(String echartsVersion) {
    this.echartsVersion = echartsVersion;
  }

  /**
   * Renders the report of {@code files} into {@code target} (parent folders are created).
   *
   * @param files one or more results files; the newest (by start time) is the main subject
   * @param target the HTML file to write
   * @throws IllegalArgumentException if {@code files} is empty
   * @throws UncheckedIOException if the file cannot be written or ECharts is not on the classpath
   */
  public void write(List<ResultsFile> files, Path target) {
    write(files, null, target);
  }

  /**
   * As {@link #write(List, Path)}, with a section on {@code latency} (the newest latency run; null:
   * none).
   */
  public void write(List<ResultsFile> files, LatencyFile latency, Path target) {
    String html = render(files, latency, target.toAbsolutePath().getParent());
    try {
      Files.createDirectories(target.toAbsolutePath().getParent());
      Files.writeString(target, html, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write report " + target, e);
    }
  }

  /** Renders the page; links to run folders are made relative to {@code reportDir}. */
  String render(List<ResultsFile> files, Path reportDir) {
    return render(files, null, reportDir);
  }

  /** As {@link #render(List, Path)}, with a latency section when {@code latency} is not null. */
  String render(List<ResultsFile> files, LatencyFile latency, Path reportDir) {
    if (files.isEmpty()) {
      throw new IllegalArgumentException("no results files to report on");
    }
    List<ResultsFile> ordered = Comparison.chronological(files);
    ResultsFile latest = ordered.get(ordered.size() - 1);
    List<Row> rows = Comparison.rows(latest);
    Set<String> modes = new LinkedHashSet<>();
    rows.forEach(r -> modes.add(r.mode()));

    Page page = new Page();
    page.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        + "<title>Weir: Nexmark runner comparison</title><style>")
        .raw(resource("report.css")).raw("</style></head><body>\n");
    header(page, latest, ordered.size());
    caveat(page, latest);

    Map<String, Object> data = new LinkedHashMap<>();
    List<Map<String, Object>> throughput = new ArrayList<>();
    for (String mode : modes) {
      throughput.add(throughputChart(rows, mode, latest.beamVersions()));
    }
    data.put("throughput", throughput);

    page.raw("<section><h2>Throughput per query</h2>"
        + "<p class=\"hint\">Events/s as Nexmark computes them (median over repeats); higher is better. "
        + "<button id=\"log-toggle\" type=\"button\">Log scale</button></p>");
    for (String mode : modes) {
      page.raw("<h3>").text(mode).raw("</h3><div class=\"chart wide\" id=\"throughput-").text(mode).raw("\"></div>");
    }
    page.raw("</section>\n");

    for (String mode : modes) {
      comparisonTable(page, rows, mode, latest, reportDir);
    }

    if (latency != null) {
      data.put("latency", latencySection(page, latency));
    }

    improvementSection(page, ordered, modes);
    data.put("history", history(ordered, modes));
    page.raw("<section><h2>History per query</h2>");
    if (ordered.size() < 2) {
      page.raw("<p class=\"hint\">One results file so far: history appears once there are two or more "
          + "(pass several results files or the whole <code>results/</code> folder to <code>bin/weir report</code>).</p>");
    }
    page.raw("<div id=\"history\" class=\"grid\"></div></section>\n");

    List<Map<String, Object>> sweeps = sweepCharts(Comparison.sweeps(latest));
    data.put("sweeps", sweeps);
    if (!sweeps.isEmpty()) {
      page.raw("<section><h2>Sweeps</h2><p class=\"hint\">Throughput against each swept option value, "
          + "one line per runner.</p><div id=\"sweeps\" class=\"grid\"></div></section>\n");
    }

    configurationSection(page, ordered, reportDir);

    page.raw("<footer>Generated by Weir's report at ").text(Instant.now().toString())
        .raw(" with Apache ECharts ").text(echartsVersion).raw(" inlined.</footer>\n");
    page.raw("<script>").raw(scriptSafe(echarts())).raw("</script>\n");
    page.raw("<script>window.WEIR_REPORT = ").raw(scriptSafe(toJson(data))).raw(";</script>\n");
    page.raw("<script>").raw(scriptSafe(resource("report.js"))).raw("</script>\n</body></html>\n");
    return page.toString();
  }

  private void header(Page page, ResultsFile latest, int fileCount) {
    JsonNode settings = latest.settings();
    page.raw("<header><h1>Weir: Nexmark runner comparison</h1><p class=\"meta\">");
    page.text("Run started " + latest.label());
    JsonNode perRunner = settings.path("eventsPerRunner");
    if (perRunner.isObject() && perRunner.size() > 0) {
      // Each runner's own size: the suite measures each at a size it runs in steady state.
      StringBuilder sizes = new StringBuilder();
      Set<Long> distinct = new TreeSet<>();
      perRunner.fields().forEachRemaining(e -> {
        distinct.add(e.getValue().asLong());
        sizes.append(sizes.length() == 0 ? "" : ", ").append(e.getKey()).append(' ')
            .append(String.format(Locale.ROOT, "%,d", e.getValue().asLong()));
      });
      page.text(" · " + (distinct.size() == 1
          ? String.format(Locale.ROOT, "%,d", distinct.iterator().next()) : sizes.toString())
          + " events per run");
    } else if (settings.has("events")) {
      page.text(" · " + String.format(Locale.ROOT, "%,d", settings.get("events").asLong()) + " events per run");
    }
    JsonNode warmup = settings.path("warmupEventsPerRunner");
    if (warmup.isObject() && warmup.size() > 0) {
      // Each run's JVM first ran the same query over this many events, not measured.
      StringBuilder w = new StringBuilder();
      warmup.fields().forEachRemaining(e -> w.append(w.length() == 0 ? "" : ", ").append(e.getKey())
          .append(' ').append(String.format(Locale.ROOT, "%,d", e.getValue().asLong())));
      String floor = perRunnerSeconds(settings, "warmupSeconds");
      String most = perRunnerSeconds(settings, "warmupMaxSeconds");
      page.text(" · warm-up pass before each measured run: " + w + " events"
          + (floor.isEmpty() ? "" : ", then more passes until the warm-up took " + floor)
          + (settles(settings) ? ", then more while the JIT compilers were busy, up to " + most : ""));
    }
    String measured = perRunnerSeconds(settings, "measuredSeconds");
    if (!measured.isEmpty()) {
      page.text(" · measured passes over the same events until they took " + measured);
    }
    if (settings.has("parallelism")) {
      page.text(" · parallelism " + settings.get("parallelism").asText());
    }
    if (settings.has("repeat")) {
      page.text(" · repeat " + settings.get("repeat").asText());
    }
    page.text(" · " + fileCount + (fileCount == 1 ? " results file" : " results files"));
    page.raw("</p>");
    Map<String, String> beam = latest.beamVersions();
    if (!beam.isEmpty()) {
      // Each runner's classpath brings its own Beam; the harness of every run recorded which.
      page.raw("<p class=\"meta beam\">Beam release per runner: ");
      boolean first = true;
      for (Map.Entry<String, String> e : beam.entrySet()) {
        page.raw(first ? "" : " · ").text(e.getKey()).raw(" <span class=\"beam-version\">")
            .text("Beam " + e.getValue()).raw("</span>");
        first = false;
      }
      page.raw(".");
      if (latest.beamNote() != null) {
        page.raw(" ").text(latest.beamNote()); // the driver's sentence (Summary.beamNote)
      }
      page.raw("</p>");
    }
    page.raw("</header>\n");
  }

  /**
   * A duration setting as "10 s", or per runner as "flink 10, weir 12 s" when the runners differ
   * ({@code <name>PerRunner}, since results schema 1.5.0; before, the single {@code <name>}),
   * runners at 0 named after it as "(direct: none)"; "" when it is 0 for every runner or absent.
   */
  static String perRunnerSeconds(JsonNode settings, String name) {
    JsonNode per = settings.path(name + "PerRunner");
    if (per.isObject() && per.size() > 0) {
      Map<String, Long> given = new LinkedHashMap<>();
      List<String> none = new ArrayList<>();
      per.fields().forEachRemaining(e -> {
        if (e.getValue().asLong() > 0) {
          given.put(e.getKey(), e.getValue().asLong());
        } else {
          none.add(e.getKey());
        }
      });
      if (given.isEmpty()) {
        return "";
      }
      StringBuilder sb = new StringBuilder();
      if (new TreeSet<>(given.values()).size() == 1) {
        sb.append(given.values().iterator().next());
      } else {
        given.forEach((r, n) -> sb.append(sb.length() == 0 ? "" : ", ").append(r).append(' ').append(n));
      }
      sb.append(" s");
      return none.isEmpty() ? sb.toString() : sb + " (" + String.join(", ", none) + ": none)";
    }
    long one = settings.path(name).asLong(0);
    return one > 0 ? one + " s" : "";
  }

  /** Whether some runner's most warm-up seconds exceed its least (then settling passes ran). */
  static boolean settles(JsonNode settings) {
    JsonNode most = settings.path("warmupMaxSecondsPerRunner");
    JsonNode floor = settings.path("warmupSecondsPerRunner");
    if (most.isObject() && most.size() > 0) {
      java.util.Iterator<Map.Entry<String, JsonNode>> it = most.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        long least = floor.isObject() ? floor.path(e.getKey()).asLong(settings.path("warmupSeconds").asLong(0))
            : settings.path("warmupSeconds").asLong(0);
        if (e.getValue().asLong() > least) {
          return true;
        }
      }
      return false;
    }
    return settings.path("warmupMaxSeconds").asLong(0) > settings.path("warmupSeconds").asLong(0);
  }

  private void caveat(Page page, ResultsFile latest) {
    JsonNode m = latest.machine();
    page.raw("<aside class=\"caveat\"><strong>Read with care.</strong> These numbers come from one machine (");
    page.text(m.path("availableProcessors").asText("?") + " cores");
    if (m.hasNonNull("cpuModel")) {
      page.text(", " + m.get("cpuModel").asText());
    }
    if (m.hasNonNull("totalMemoryBytes")) {
      page.text(", " + mib(m.get("totalMemoryBytes").asLong()) + " MiB");
    }
    page.raw(")");
    if (m.hasNonNull("loadAverageStart")) {
      page.text(String.format(Locale.ROOT, "; 1-minute load average %.1f at the start and %s at the end",
          m.get("loadAverageStart").asDouble(),
          m.hasNonNull("loadAverageEnd") ? String.format(Locale.ROOT, "%.1f", m.get("loadAverageEnd").asDouble()) : "?"));
    }
    page.raw(". ");
    JsonNode settings = latest.settings();
    if (settings.hasNonNull("checkpointIntervalMs")) {
      long ms = settings.get("checkpointIntervalMs").asLong();
      page.text(ms > 0 ? "Streaming runs of Weir and of every Flink variant checkpointed every " + ms + " ms. "
          : "No runner took checkpoints. ");
    }
    int repeat = settings.path("repeat").asInt(1);
    page.text(repeat > 1 ? "Each point ran " + repeat + " times, runners interleaved; events/s are medians "
        + "with the lowest–highest under them, and ratios are of medians. " : "");
    page.raw("Runs are noisy: compare runners only within one run of the driver, and repeat before "
        + "believing a difference under 20%. Like Beam's own Nexmark dashboards, this page finds "
        + "regressions and bottlenecks; it is not a general ranking of runners.</aside>\n");
  }

  /**
   * The latency run's section: its method, a chart of p99 per query and runner, and a table of
   * p50, p99 (with its spread over rounds) and max; returns the chart's data.
   */
  private static Map<String, Object> latencySection(Page page, LatencyFile latency) {
    Set<Integer> queries = new java.util.TreeSet<>();
    Set<String> runners = new LinkedHashSet<>();
    Map<String, LatencyFile.Row> byKey = new LinkedHashMap<>();
    for (LatencyFile.Row r : latency.rows()) {
      queries.add(r.query());
      runners.add(r.runner());
      byKey.put(r.query() + "/" + r.runner(), r);
    }
    List<String> ordered = Comparison.orderedRunners(runners);
    page.raw("<section id=\"latency\"><h2>Latency at a fixed event rate</h2><p class=\"hint\">How late each result "
        + "came out, ms (lower is better): p99 per query, median over rounds. ").text(latency.method())
        .raw(" Rows ran ").text(latency.seconds() + " s each, the first " + latency.skipSeconds() + " s not recorded; "
            + (latency.checkpointIntervalMs() > 0 ? "checkpoints every " + latency.checkpointIntervalMs() + " ms."
                : "no checkpoints."))
        .raw(" From <code>").text(latency.path().toString()).raw("</code>.</p>")
        .raw("<div class=\"chart wide\" id=\"latency-p99\"></div>");
    page.raw("<table class=\"latency\"><thead><tr><th>Query</th><th>events/s</th>");
    for (String runner : ordered) {
      page.raw("<th>").text(runner).raw(" p50 / p99 / max</th>");
    }
    page.raw("</tr></thead><tbody>");
    for (int q : queries) {
      LatencyFile.Row first = null;
      for (String runner : ordered) {
        first = first != null ? first : byKey.get(q + "/" + runner);
      }
      page.raw("<tr><td>Q").text(String.valueOf(q)).raw("</td><td class=\"num\">")
          .text(first == null ? "–" : formatRate(first.eventsPerSec())).raw("</td>");
      for (String runner : ordered) {
        LatencyFile.Row r = byKey.get(q + "/" + runner);
        page.raw("<td class=\"num\">");
        if (r == null) {
          page.raw("–");
        } else {
          page.text(String.format(java.util.Locale.ROOT, "%.0f / %.0f / %.0f", r.p50Ms(), r.p99Ms(), r.maxMs()));
          page.raw("<br><span class=\"spread\">").text(String.format(java.util.Locale.ROOT, "%.0f results", r.recorded()))
              .raw("</span>");
          if (r.okRounds() > 1) {
            page.raw("<br><span class=\"spread\">p99 ").text(String.format(java.util.Locale.ROOT, "%.0f–%.0f",
                r.p99MinMs(), r.p99MaxMs())).raw("</span>");
          }
          if (r.okRounds() < r.rounds()) {
            page.raw("<br><span class=\"spread\">").text(r.okRounds() + " of " + r.rounds() + " rounds ok").raw("</span>");
          }
        }
        page.raw("</td>");
      }
      page.raw("</tr>");
    }
    page.raw("</tbody></table></section>\n");
    Map<String, Object> chart = new LinkedHashMap<>();
    chart.put("id", "latency-p99");
    chart.put("queries", queries.stream().map(q -> "Q" + q).toList());
    Map<String, List<Double>> series = new LinkedHashMap<>();
    for (String runner : ordered) {
      series.put(runner, queries.stream().map(q -> {
        LatencyFile.Row r = byKey.get(q + "/" + runner);
        return r == null ? null : r.p99Ms();
      }).toList());
    }
    chart.put("series", series);
    return chart;
  }

  /** One mode's bar chart; a runner's legend entry names its Beam release where the file has it. */
  private static Map<String, Object> throughputChart(List<Row> rows, String mode, Map<String, String> beam) {
    List<Row> modeRows = rows.stream().filter(r -> Objects.equals(mode, r.mode()) && r.sweep().isEmpty()).toList();
    Set<String> runners = new LinkedHashSet<>();
    modeRows.forEach(r -> runners.addAll(r.cells().keySet()));
    List<String> ordered = Comparison.orderedRunners(runners);
    Map<String, Object> chart = new LinkedHashMap<>();
    chart.put("id", "throughput-" + mode);
    chart.put("mode", mode);
    chart.put("queries", modeRows.stream().map(r -> "Q" + r.query()).toList());
    Map<String, List<Double>> series = new LinkedHashMap<>();
    for (String runner : ordered) {
      series.put(runner, modeRows.stream().map(r -> {
        Cell c = r.cells().get(runner);
        return c == null ? null : c.eventsPerSec();
      }).toList());
    }
    chart.put("series", series);
    Map<String, String> labels = new LinkedHashMap<>();
    for (String runner : ordered) {
      labels.put(runner, beam.containsKey(runner) ? runner + " (Beam " + beam.get(runner) + ")" : runner);
    }
    chart.put("labels", labels);
    return chart;
  }

  private static void comparisonTable(Page page, List<Row> all, String mode, ResultsFile latest, Path reportDir) {
    List<Row> rows = all.stream().filter(r -> Objects.equals(mode, r.mode()) && r.sweep().isEmpty()).toList();
    if (rows.isEmpty()) {
      return;
    }
    Set<String> present = new LinkedHashSet<>();
    rows.forEach(r -> present.addAll(r.cells().keySet()));
    List<String> runners = Comparison.orderedRunners(present);
    List<String[]> ratios = new ArrayList<>();
    if (present.contains("weir")) {
      for (String peer : Comparison.PEERS) {
        if (present.contains(peer)) {
          ratios.add(new String[] {"weir", peer});
        }
      }
      if (present.contains("weir-samza")) {
        ratios.add(new String[] {"weir-samza", "weir"});
      }
    }
    page.raw("<section><h2>Per-query comparison: ").text(mode).raw("</h2><div class=\"scroll\"><table class=\"cmp\">");
    page.raw("<thead><tr><th rowspan=\"2\">Query</th>");
    group(page, "events/s", runners.size());
    if (!ratios.isEmpty()) {
      group(page, "ratio", ratios.size());
    }
    group(page, "results", runners.size());
    group(page, "correct", runners.size());
    group(page, "CPU µs/event", runners.size());
    group(page, "peak RSS MiB", runners.size());
    group(page, "GC ms", runners.size());
    page.raw("</tr><tr>");
    Map<String, String> beam = latest.beamVersions();
    for (String r : runners) {
      page.raw("<th>").text(r);
      if (beam.containsKey(r)) {
        page.raw("<br><span class=\"beam-version\">").text("Beam " + beam.get(r)).raw("</span>");
      }
      page.raw("</th>");
    }
    ratios.forEach(p -> page.raw("<th>").text(cap(p[0]) + "/" + cap(p[1])).raw("</th>"));
    for (int g = 0; g < 5; g++) {
      runners.forEach(r -> page.raw("<th>").text(r).raw("</th>"));
    }
    page.raw("</tr></thead><tbody>");
    for (Row row : rows) {
      page.raw("<tr><th class=\"q\" title=\"").text(row.queryName() == null ? "" : row.queryName()).raw("\">Q")
          .text(Integer.toString(row.query()));
      if (row.queryName() != null) {
        page.raw(" <span class=\"qname\">").text(row.queryName()).raw("</span>");
      }
      page.raw("</th>");
      for (String r : runners) {
        Cell c = row.cells().get(r);
        if (c == null) {
          page.raw("<td class=\"na\">–</td>");
        } else if (c.ok()) {
          page.raw("<td class=\"num\">").text(formatRate(c.eventsPerSec()));
          if (c.okRuns() > 1) {
            page.raw("<br><span class=\"spread\" title=\"lowest–highest of ").text(Integer.toString(c.okRuns()))
                .raw(" ok runs; the figure above is their median\">").text(formatRate(c.eventsPerSecMin()) + "–"
                    + formatRate(c.eventsPerSecMax())).raw("</span>");
          }
          page.raw("</td>");
        } else {
          page.raw("<td class=\"bad\" title=\"").text(c.firstErrorLine() == null ? "" : c.firstErrorLine()).raw("\">")
              .text(c.status() == null ? "?" : c.status()).raw("</td>");
        }
      }
      for (String[] p : ratios) {
        ratioCell(page, row.ratio(p[0], p[1]));
      }
      for (String r : runners) {
        Cell c = row.cells().get(r);
        page.raw("<td class=\"num\">").text(c == null || c.numResults() == null ? "–" : String.format(Locale.ROOT, "%,d", c.numResults())).raw("</td>");
      }
      for (String r : runners) {
        Cell c = row.cells().get(r);
        Boolean ok = c == null ? null : c.correct();
        if (ok == null && c != null && c.timingDependent()) {
          page.raw("<td class=\"na\" title=\"result counts differ across runners, as they do between two runs of one "
              + "runner: late-data drops of Nexmark's delayed events depend on timing; not judged\">timing</td>");
        } else if (ok == null) {
          page.raw("<td class=\"na\" title=\"nothing could check\">n/a</td>");
        } else {
          page.raw("<td class=\"").raw(ok ? "good" : "bad").raw("\" title=\"")
              .text(c.correctness() == null ? "" : c.correctness()).raw("\">").raw(ok ? "yes" : "NO").raw("</td>");
        }
      }
      for (String r : runners) {
        Cell c = row.cells().get(r);
        page.raw("<td class=\"num\" title=\"").text(c == null || c.cpuSeconds() == null ? ""
            : String.format(Locale.ROOT, "%.1f CPU s in the measured passes", c.cpuSeconds())
                + (c.compileShare() == null ? "" : String.format(Locale.ROOT,
                    "; JIT compilers busy %.2f of their wall time", c.compileShare()))).raw("\">")
            .text(c == null || c.cpuMicrosPerEvent() == null ? "–" : String.format(Locale.ROOT,
                c.cpuMicrosPerEvent() < 10 ? "%.2f" : "%.1f", c.cpuMicrosPerEvent())).raw("</td>");
      }
      for (String r : runners) {
        Cell c = row.cells().get(r);
        page.raw("<td class=\"num\">").text(c == null || c.peakRssBytes() == null ? "–" : Long.toString(mib(c.peakRssBytes()))).raw("</td>");
      }
      for (String r : runners) {
        Cell c = row.cells().get(r);
        page.raw("<td class=\"num\">").text(c == null || c.gcTimeMs() == null ? "–" : String.format(Locale.ROOT, "%,d", c.gcTimeMs())).raw("</td>");
      }
      page.raw("</tr>\n");
    }
    page.raw("</tbody><tfoot><tr><th>geometric mean</th>");
    page.raw("<td colspan=\"").text(Integer.toString(runners.size())).raw("\"></td>");
    for (String[] p : ratios) {
      ratioCell(page, Comparison.geometricMeanRatio(rows, mode, p[0], p[1]));
    }
    page.raw("<td colspan=\"").text(Integer.toString(runners.size() * 5)).raw("\"></td></tr></tfoot></table></div>");
    page.raw("<p class=\"hint\">Ratios are of events/s; a ratio exists only where both runs were ok. "
        + "Hover a failed cell for its first error line.</p></section>\n");
  }

  private static void group(Page page, String title, int span) {
    page.raw("<th colspan=\"").text(Integer.toString(span)).raw("\" class=\"group\">").text(title).raw("</th>");
  }

  private static void ratioCell(Page page, Double ratio) {
    if (ratio == null) {
      page.raw("<td class=\"na\">–</td>");
    } else {
      page.raw("<td class=\"num ").raw(ratio >= 1 ? "good" : "bad").raw("\">")
          .text(String.format(Locale.ROOT, "%.2f×", ratio)).raw("</td>");
    }
  }

  private static void improvementSection(Page page, List<ResultsFile> ordered, Set<String> modes) {
    page.raw("<section><h2>Improvement across runs</h2>");
    if (ordered.size() < 2) {
      page.raw("<p class=\"hint\">Needs two or more results files.</p></section>\n");
      return;
    }
    for (String runner : List.of("weir")) {
      for (String mode : modes) {
        List<Step> steps = Comparison.improvements(ordered, runner, mode);
        Set<Integer> queries = new TreeSet<>();
        steps.forEach(s -> queries.addAll(s.perQuery().keySet()));
        page.raw("<h3>").text(runner + ", " + mode).raw("</h3><div class=\"scroll\"><table class=\"cmp\"><thead><tr>"
            + "<th>from</th><th>to</th><th>average per-query change</th>");
        queries.forEach(q -> page.raw("<th>Q").text(Integer.toString(q)).raw("</th>"));
        page.raw("</tr></thead><tbody>");
        for (Step s : steps) {
          page.raw("<tr><td>").text(s.from()).raw("</td><td>").text(s.to()).raw("</td>");
          if (s.averageRate() == null) {
            page.raw("<td class=\"na\">–</td>");
          } else {
            page.raw("<td class=\"num ").raw(s.averageRate() >= 0 ? "good" : "bad").raw("\">")
                .text(String.format(Locale.ROOT, "%+.1f%%", s.averageRate() * 100)).raw("</td>");
          }
          for (Integer q : queries) {
            Double r = s.perQuery().get(q);
            if (r == null) {
              page.raw("<td class=\"na\">–</td>");
            } else {
              page.raw("<td class=\"num ").raw(r >= 1 ? "good" : "bad").raw("\">")
                  .text(String.format(Locale.ROOT, "%+.0f%%", (r - 1) * 100)).raw("</td>");
            }
          }
          page.raw("</tr>");
        }
        page.raw("</tbody></table></div>");
      }
    }
    page.raw("<p class=\"hint\">Each run is compared with the previous run of the same events per run and "
        + "parallelism. The average per-query change is the geometric mean of the per-query "
        + "throughput ratios minus one, over the queries that were ok in both runs.</p></section>\n");
  }

  private static List<Map<String, Object>> history(List<ResultsFile> ordered, Set<String> modes) {
    List<String> labels = ordered.stream().map(ResultsFile::label).toList();
    List<Map<String, Object>> charts = new ArrayList<>();
    for (String mode : modes) {
      Map<String, Map<Integer, Map<String, Double>>> perRunner = new LinkedHashMap<>();
      Set<Integer> queries = new TreeSet<>();
      Set<String> runners = new LinkedHashSet<>();
      for (int i = 0; i < ordered.size(); i++) {
        for (Row row : Comparison.rows(ordered.get(i))) {
          if (!Objects.equals(mode, row.mode()) || !row.sweep().isEmpty()) {
            continue;
          }
          queries.add(row.query());
          for (Map.Entry<String, Cell> e : row.cells().entrySet()) {
            runners.add(e.getKey());
            perRunner.computeIfAbsent(e.getKey(), k -> new LinkedHashMap<>())
                .computeIfAbsent(row.query(), k -> new LinkedHashMap<>())
                .put(labels.get(i), e.getValue().eventsPerSec());
          }
        }
      }
      for (Integer q : queries) {
        Map<String, Object> chart = new LinkedHashMap<>();
        chart.put("title", "Q" + q + " " + mode);
        chart.put("labels", labels);
        Map<String, List<Double>> series = new LinkedHashMap<>();
        for (String runner : Comparison.orderedRunners(runners)) {
          Map<String, Double> points = perRunner.getOrDefault(runner, Map.of()).getOrDefault(q, Map.of());
          List<Double> values = new ArrayList<>();
          labels.forEach(l -> values.add(points.get(l)));
          series.put(runner, values);
        }
        chart.put("series", series);
        charts.add(chart);
      }
    }
    return charts;
  }

  private static List<Map<String, Object>> sweepCharts(List<SweepSeries> all) {
    Map<String, Map<String, Object>> charts = new LinkedHashMap<>();
    for (SweepSeries s : all) {
      String title = s.option() + " · Q" + s.query() + " " + s.mode();
      Map<String, Object> chart = charts.computeIfAbsent(title, t -> {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("title", t);
        c.put("option", s.option());
        c.put("values", s.values());
        c.put("series", new LinkedHashMap<String, List<Double>>());
        return c;
      });
      @SuppressWarnings("unchecked")
      Map<String, List<Double>> series = (Map<String, List<Double>>) chart.get("series");
      series.put(s.runner(), s.eventsPerSec());
    }
    return new ArrayList<>(charts.values());
  }

  private static void configurationSection(Page page, List<ResultsFile> ordered, Path reportDir) {
    page.raw("<section><h2>Runs and configuration</h2>");
    for (int i = ordered.size() - 1; i >= 0; i--) {
      ResultsFile f = ordered.get(i);
      page.raw(i == ordered.size() - 1 ? "<details open>" : "<details>");
      page.raw("<summary>").text(f.label() + " — " + f.path()).raw("</summary>");
      page.raw("<div class=\"facts\"><div><h4>Machine</h4><pre>").text(pretty(f.machine()))
          .raw("</pre></div><div><h4>JVM</h4><pre>").text(pretty(f.jvm()))
          .raw("</pre></div><div><h4>Driver settings</h4><pre>").text(pretty(f.settings()))
          .raw("</pre></div><div><h4>Runner configurations</h4><pre>").text(pretty(f.runnerConfigs()))
          .raw("</pre></div></div>");
      page.raw("<div class=\"scroll\"><table class=\"runs\"><thead><tr><th>runner</th><th>Beam</th><th>query</th><th>mode</th>"
          + "<th>sweep</th><th>status</th><th>events/s</th><th>results</th><th>run folder</th><th>profile</th>"
          + "<th>first error</th></tr></thead><tbody>");
      for (RunResult r : f.runs()) {
        page.raw("<tr><td>").text(r.runner()).raw("</td><td>").text(r.beamVersion() == null ? "–" : r.beamVersion())
            .raw("</td><td>Q").text(Integer.toString(r.query())).raw("</td><td>")
            .text(r.mode()).raw("</td><td>").text(r.sweepLabel()).raw("</td><td class=\"")
            .raw(r.ok() ? "good" : "bad").raw("\">").text(String.valueOf(r.status())).raw("</td><td class=\"num\">")
            .text(r.eventsPerSec() == null ? "–" : formatRate(r.eventsPerSec())).raw("</td><td class=\"num\">")
            .text(r.numResults() == null ? "–" : Long.toString(r.numResults())).raw("</td><td>");
        link(page, f, r.runDir(), reportDir, "folder");
        page.raw("</td><td>");
        profileLinks(page, f, r.profiling(), reportDir);
        page.raw("</td><td class=\"err\">").text(r.firstErrorLine() == null ? "" : r.firstErrorLine()).raw("</td></tr>");
      }
      page.raw("</tbody></table></div></details>");
    }
    page.raw("</section>\n");
  }

  /**
   * Links a run's profile: a profile folder (the driver's {@code --profile} output) gets links to
   * its CPU and allocation flame graphs and summary; anything else is linked as is.
   */
  private static void profileLinks(Page page, ResultsFile f, String target, Path reportDir) {
    if (target == null || target.isBlank() || target.endsWith(".html") || target.endsWith(".txt")) {
      link(page, f, target, reportDir, "profile");
      return;
    }
    link(page, f, target + "/cpu.html", reportDir, "cpu");
    page.raw(" · ");
    link(page, f, target + "/alloc.html", reportDir, "alloc");
    page.raw(" · ");
    link(page, f, target + "/summary.txt", reportDir, "summary");
  }

  private static void link(Page page, ResultsFile f, String target, Path reportDir, String text) {
    if (target == null || target.isBlank()) {
      page.text("–");
      return;
    }
    Path p = Path.of(target);
    if (!p.isAbsolute() && f.path().toAbsolutePath().getParent() != null) {
      p = f.path().toAbsolutePath().getParent().resolve(p);
    }
    String href;
    try {
      href = reportDir.relativize(p.toAbsolutePath().normalize()).toString().replace('\\', '/');
    } catch (IllegalArgumentException e) {
      href = p.toUri().toString();
    }
    page.raw("<a href=\"").text(href).raw("\">").text(text).raw("</a>");
  }

  private static String pretty(JsonNode node) {
    try {
      return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(node);
    } catch (IOException e) {
      return String.valueOf(node);
    }
  }

  private static String toJson(Object o) {
    try {
      return JSON.writeValueAsString(o);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Events/s in a compact human form: 1,234 / 56.7K / 1.23M. */
  static String formatRate(double eventsPerSec) {
    if (eventsPerSec >= 1e6) {
      return String.format(Locale.ROOT, "%.2fM", eventsPerSec / 1e6);
    }
    if (eventsPerSec >= 1e4) {
      return String.format(Locale.ROOT, "%.1fK", eventsPerSec / 1e3);
    }
    return String.format(Locale.ROOT, "%,.0f", eventsPerSec);
  }

  private static long mib(long bytes) {
    return Math.round(bytes / (1024.0 * 1024.0));
  }

  private static String cap(String s) {
    return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
  }

  /** Keeps inlined text from closing its script element early. */
  private static String scriptSafe(String js) {
    return js.replace("</script", "<\\/script").replace("<!--", "<\\!--");
  }

  private String echarts() {
    return classpathText(ECHARTS_RESOURCE_PREFIX + echartsVersion + "/echarts.min.js");
  }

  private static String resource(String name) {
    return classpathText("dev/weir/dashboards/" + name);
  }

  private static String classpathText(String name) {
    try (InputStream in = HtmlReport.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        throw new UncheckedIOException(new IOException("missing classpath resource " + name));
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read classpath resource " + name, e);
    }
  }

  /** A tiny HTML writer: {@link #text} escapes, {@link #raw} does not. */
  private static final class Page {
    private final StringBuilder out = new StringBuilder(1 << 20);

    Page raw(String s) {
      out.append(s);
      return this;
    }

    Page text(String s) {
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        switch (c) {
          case '<' -> out.append("&lt;");
          case '>' -> out.append("&gt;");
          case '&' -> out.append("&amp;");
          case '"' -> out.append("&quot;");
          case '\'' -> out.append("&#39;");
          default -> out.append(c);
        }
      }
      return this;
    }

    @Override
    public String toString() {
      return out.toString();
    }
  }
}
