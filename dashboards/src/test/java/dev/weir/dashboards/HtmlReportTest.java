package dev.weir.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HtmlReportTest {

  @TempDir Path dir;

  private String render(List<ResultsFile> files) throws Exception {
    Path out = dir.resolve("report.html");
    new HtmlReport(ReportCommand.echartsVersion()).write(files, out);
    return Files.readString(out);
  }

  @Test
  void report_isSelfContained_withEveryQueryAndRatio() throws Exception {
    ResultsFile f = ResultsFile.read(SampleResults.fullComparison("2026-11-21T10:00:00Z", 3.0).write(dir.resolve("r1")));
    String html = render(List.of(f));
    for (int q = 0; q <= 14; q++) {
      assertThat(html).contains(">Q" + q + " <span class=\"qname\">");
    }
    assertThat(html).contains("3.00×").contains("30.00×").contains("geometric mean");
    assertThat(html).contains("echarts").contains("window.WEIR_REPORT");
    assertThat(html).doesNotContainPattern("(src|href)=\"https?://");
    assertThat(html).contains("Read with care");
    assertThat(html).contains("timeout");
  }

  @Test
  void report_showsWeirSamzaBesideWeir_withItsRatio() throws Exception {
    SampleResults s = new SampleResults("2026-11-24T10:00:00Z");
    s.run("flink", 3, "streaming", "ok", 30_000.0, 17L, null);
    s.run("weir-samza", 3, "streaming", "ok", 25_000.0, 17L, null);
    s.run("weir", 3, "streaming", "ok", 100_000.0, 17L, null);
    ResultsFile f = ResultsFile.read(s.write(dir.resolve("r1")));
    assertThat(Comparison.rows(f).get(0).cells().keySet()).containsExactly("weir", "weir-samza", "flink");
    String html = render(List.of(f));
    assertThat(html).contains("<th>Weir-samza/Weir</th>").contains("0.25×").contains("3.33×");
  }

  @Test
  void report_dividesWeirByEveryFlinkVariantAndShowsTheSpreadOfRepeatsAndCpuPerEvent() throws Exception {
    SampleResults s = new SampleResults("2026-11-29T10:00:00Z");
    for (double eps : new double[] {90_000, 100_000, 120_000}) {
      s.run("flink-tuned", 5, "streaming", "ok", eps, 12L, null);
      s.run("weir", 5, "streaming", "ok", eps * 2, 12L, null);
    }
    s.run("flink", 5, "streaming", "ok", 40_000.0, 12L, null);
    ResultsFile f = ResultsFile.read(s.write(dir.resolve("r1")));
    Comparison.Cell weir = Comparison.rows(f).get(0).cells().get("weir");
    assertThat(weir.okRuns()).isEqualTo(3);
    assertThat(weir.eventsPerSecMin()).isEqualTo(180_000.0);
    assertThat(weir.eventsPerSecMax()).isEqualTo(240_000.0);
    // 15.5 CPU s over 500,000 events x 2 measured passes
    assertThat(weir.cpuMicrosPerEvent()).isCloseTo(15.5, org.assertj.core.api.Assertions.within(1e-9));
    assertThat(Comparison.rows(f).get(0).cells().keySet()).containsExactly("weir", "flink-tuned", "flink");
    String html = render(List.of(f));
    assertThat(html).contains("<th>Weir/Flink-tuned</th>").contains("<th>Weir/Flink</th>")
        .contains("2.00×").contains("5.00×").contains("CPU µs/event").contains("class=\"spread\"");
  }

  @Test
  void report_escapesTextFromResults() throws Exception {
    ResultsFile f = ResultsFile.read(SampleResults.fullComparison("2026-11-21T10:00:00Z", 3.0).write(dir.resolve("r1")));
    String html = render(List.of(f));
    assertThat(html).contains("&lt;boom&gt; &amp; bust").doesNotContain("<boom>");
    assertThat(html).contains("Test CPU &lt;b&gt;");
  }

  @Test
  void report_linksRunFoldersRelativeToTheReport() throws Exception {
    ResultsFile f = ResultsFile.read(SampleResults.fullComparison("2026-11-21T10:00:00Z", 3.0).write(dir.resolve("r1")));
    String html = render(List.of(f));
    assertThat(html).contains("href=\"r1/runs/weir-q0-streaming\"");
  }

  @Test
  void report_withHistoryAndSweeps_hasTheirSections() throws Exception {
    ResultsFile a = ResultsFile.read(SampleResults.fullComparison("2026-11-20T10:00:00Z", 2.0).write(dir.resolve("r1")));
    SampleResults withSweep = SampleResults.fullComparison("2026-11-21T10:00:00Z", 3.0);
    for (String v : List.of("10", "100", "1000")) {
      withSweep.run("weir", 0, "streaming", "ok", 1000.0 * v.length(), 1L, null, Map.of("maxBundleSize", v));
    }
    ResultsFile b = ResultsFile.read(withSweep.write(dir.resolve("r2")));
    String html = render(List.of(a, b));
    assertThat(html).contains("Improvement across runs").contains("+50.0%");
    assertThat(html).contains("<h2>Sweeps</h2>").contains("maxBundleSize");
    assertThat(html).doesNotContain("One results file so far");
  }

  @Test
  void formatRate_isCompact() {
    assertThat(HtmlReport.formatRate(1234)).isEqualTo("1,234");
    assertThat(HtmlReport.formatRate(56_700)).isEqualTo("56.7K");
    assertThat(HtmlReport.formatRate(1_230_000)).isEqualTo("1.23M");
  }

  @Test
  void report_saysWhatEachRunnerWasGiven_andMarksTimingDependentCounts() throws Exception {
    SampleResults sample = new SampleResults("2026-11-24T10:00:00Z");
    sample.settings().put("events", 500_000);
    sample.settings().putObject("eventsPerRunner").put("direct", 50_000).put("flink", 500_000).put("weir", 500_000);
    sample.settings().putObject("warmupEventsPerRunner").put("direct", 10_000).put("flink", 100_000).put("weir", 100_000);
    sample.settings().put("warmupSeconds", 10);
    sample.run("weir", 6, "streaming", "ok", 14_000.0, 4_301L, null)
        .correctness("timing-dependent: streaming result counts differ across runners (flink=4295, weir=4301)");
    sample.run("flink", 6, "streaming", "ok", 12_000.0, 4_295L, null)
        .correctness("timing-dependent: streaming result counts differ across runners (flink=4295, weir=4301)");
    sample.run("weir", 5, "streaming", "ok", 60_000.0, 40L, null).correctness("none: no other runner's result count");
    String html = render(List.of(ResultsFile.read(sample.write(dir.resolve("r1")))));
    assertThat(html).contains("direct 50,000, flink 500,000, weir 500,000 events per run");
    assertThat(html).contains("warm-up pass before each measured run: direct 10,000, flink 100,000, weir 100,000 events, "
        + "then more passes until the warm-up took 10 s");
    assertThat(html).contains(">timing</td>").doesNotContain("class=\"bad\">NO");
    assertThat(html).contains(">n/a</td>");
  }

  @Test
  void report_saysOnHoverWhichCountsAVerdictCompared() throws Exception {
    SampleResults sample = new SampleResults("2026-11-26T18:00:00Z");
    sample.run("direct", 3, "streaming", "ok", 2_700.0, 17L, Boolean.TRUE)
        .correctness("streaming result counts equal across runners at 10000 events (direct=17, weir (check pass)=17)");
    sample.run("weir", 3, "streaming", "ok", 1_260_000.0, 2_994L, Boolean.FALSE)
        .correctness("streaming result counts equal across runners (flink=2994, weir=2994); check pass: streaming "
            + "result counts differ across runners at 10000 events (direct=17, weir (check pass)=16)");
    sample.run("weir", 6, "streaming", "ok", 32_000.0, 20_977L, null)
        .correctness("check pass: timing-dependent: streaming result counts differ across runners at 10000 events");
    String html = render(List.of(ResultsFile.read(sample.write(dir.resolve("r1")))));
    assertThat(html).contains("<td class=\"good\" title=\"streaming result counts equal across runners at 10000 "
        + "events (direct=17, weir (check pass)=17)\">yes</td>");
    assertThat(html).contains("check pass: streaming result counts differ across runners at 10000 events "
        + "(direct=17, weir (check pass)=16)\">NO</td>");
    assertThat(html).contains(">timing</td>");
  }

  @Test
  void report_namesEachRunnersSettlingAndMeasuredSeconds() throws Exception {
    SampleResults sample = new SampleResults("2026-11-26T10:00:00Z");
    sample.settings().putObject("warmupEventsPerRunner").put("direct", 10_000).put("weir", 300_000);
    sample.settings().put("warmupSeconds", 10);
    sample.settings().putObject("warmupSecondsPerRunner").put("direct", 10).put("weir", 10);
    sample.settings().put("warmupMaxSeconds", 30);
    sample.settings().putObject("warmupMaxSecondsPerRunner").put("direct", 0).put("weir", 30);
    sample.settings().putObject("measuredSecondsPerRunner").put("direct", 5).put("weir", 5);
    sample.run("weir", 0, "streaming", "ok", 500_000.0, 500_000L, null);
    String html = render(List.of(ResultsFile.read(sample.write(dir.resolve("r1")))));
    assertThat(html).contains("warm-up pass before each measured run: direct 10,000, weir 300,000 events, "
        + "then more passes until the warm-up took 10 s, then more while the JIT compilers were busy, up to "
        + "30 s (direct: none)");
    assertThat(html).contains("measured passes over the same events until they took 5 s");
  }

  @Test
  void report_namesTheBeamReleaseOfEachRunner_andWhyWeirsIsNewer() throws Exception {
    SampleResults sample = SampleResults.fullComparison("2026-11-28T17:00:00Z", 3.0)
        .beamVersion("weir", "2.73.0").beamVersion("flink", "2.70.0").beamVersion("direct", "2.70.0")
        .beamNote("Weir runs on Beam 2.73 while Direct and Flink run on Beam 2.70, the newest Beam whose Flink "
            + "runner is on Maven Central.");
    ResultsFile f = ResultsFile.read(sample.write(dir.resolve("r1")));
    assertThat(f.beamVersions()).containsExactly(Map.entry("weir", "2.73.0"), Map.entry("flink", "2.70.0"),
        Map.entry("direct", "2.70.0"));
    String html = render(List.of(f));
    assertThat(html).contains("Beam release per runner: weir <span class=\"beam-version\">Beam 2.73.0</span> · "
        + "flink <span class=\"beam-version\">Beam 2.70.0</span> · direct <span class=\"beam-version\">Beam 2.70.0</span>.");
    assertThat(html).contains("Weir runs on Beam 2.73 while Direct and Flink run on Beam 2.70, the newest Beam "
        + "whose Flink runner is on Maven Central.");
    // Beside each runner's name in the comparison table, in the chart's legend, and per run.
    assertThat(html).contains("<th>weir<br><span class=\"beam-version\">Beam 2.73.0</span></th>")
        .contains("<th>flink<br><span class=\"beam-version\">Beam 2.70.0</span></th>");
    assertThat(html).contains("\"labels\":{\"weir\":\"weir (Beam 2.73.0)\",\"flink\":\"flink (Beam 2.70.0)\"");
    assertThat(html).contains("<tr><td>weir</td><td>2.73.0</td><td>Q0</td>");
  }

  @Test
  void report_ofAFileWithoutBeamReleases_saysNothingOfThem() throws Exception {
    ResultsFile f = ResultsFile.read(SampleResults.fullComparison("2026-11-21T10:00:00Z", 3.0).write(dir.resolve("r1")));
    assertThat(f.beamVersions()).isEmpty();
    String html = render(List.of(f));
    assertThat(html).doesNotContain("Beam release per runner").doesNotContain("Weir runs on Beam")
        .doesNotContain("<span class=\"beam-version\">");
    assertThat(html).contains("<th>weir</th>").contains("<tr><td>weir</td><td>–</td><td>Q0</td>");
  }

  /** A latency results document as {@code bin/weir latency} writes it, in {@code folder}/results.json. */
  private Path latencyFile(Path folder) throws Exception {
    Files.createDirectories(folder);
    return Files.writeString(folder.resolve("results.json"), """
        {"kind": "latency", "startedAt": "2026-11-29T08:00:00Z", "seconds": 60, "skipSeconds": 20,
         "checkpointIntervalMs": 10000, "method": "A probe after the query <records> lateness.",
         "rows": [],
         "summary": [
          {"query": 5, "runner": "weir", "eventsPerSec": 60000, "okRounds": 3, "rounds": 3, "p50Ms": 812, "p99Ms": 1480,
           "p99MsMin": 1400, "p99MsMax": 1610, "maxMs": 2100, "cpuMsPerEvent": 0.01, "recorded": 4310},
          {"query": 5, "runner": "flink-tuned", "eventsPerSec": 60000, "okRounds": 2, "rounds": 3, "p50Ms": 900,
           "p99Ms": 2300, "p99MsMin": 2200, "p99MsMax": 2400, "maxMs": 5100, "cpuMsPerEvent": 0.02}]}""");
  }

  @Test
  void report_withALatencyRun_showsItsMethodTableAndChart_andLeavesItOutOfTheThroughputFiles() throws Exception {
    Path results = dir.resolve("results");
    SampleResults.fullComparison("2026-11-21T10:00:00Z", 3.0).write(results.resolve("nexmark-1"));
    latencyFile(results.resolve("latency-1"));
    Files.createDirectories(results.resolve("bench-rocksdb-miss-1"));
    Files.writeString(results.resolve("bench-rocksdb-miss-1/results.json"), "{\"scenario\": \"rocksdb-miss\", \"rows\": []}");

    List<ResultsFile> files = ResultsFile.readAll(List.of(results));
    List<LatencyFile> latency = LatencyFile.readAll(List.of(results));
    assertThat(files).as("the Nexmark comparison only").hasSize(1);
    assertThat(latency).hasSize(1);

    Path out = dir.resolve("report.html");
    new HtmlReport(ReportCommand.echartsVersion()).write(files, LatencyFile.newest(latency), out);
    String html = Files.readString(out);
    assertThat(html).contains("<h2>Latency at a fixed event rate</h2>")
        .contains("A probe after the query &lt;records&gt; lateness.")
        .contains("checkpoints every 10000 ms")
        .contains("<div class=\"chart wide\" id=\"latency-p99\"></div>")
        .contains("<th>weir p50 / p99 / max</th>")
        .contains("812 / 1480 / 2100<br><span class=\"spread\">4310 results</span><br><span class=\"spread\">p99 1400–1610</span>")
        .contains("2 of 3 rounds ok")
        .contains("\"latency\":{\"id\":\"latency-p99\",\"queries\":[\"Q5\"]");
  }
}
