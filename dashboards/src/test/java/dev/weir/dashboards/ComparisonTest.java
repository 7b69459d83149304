package dev.weir.dashboards;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weir.dashboards.Comparison.Row;
import dev.weir.dashboards.Comparison.Step;
import dev.weir.dashboards.Comparison.SweepSeries;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ComparisonTest {

  @TempDir Path dir;

  private ResultsFile file(SampleResults s, String name) throws Exception {
    return ResultsFile.read(s.write(dir.resolve(name)));
  }

  @Test
  void geometricMean_ofRatios_cancelsWinsAndLosses() {
    assertThat(Comparison.geometricMean(List.of(2.0, 0.5))).isCloseTo(1.0, within(1e-12));
    assertThat(Comparison.geometricMean(List.of(1.0, 10.0, 100.0))).isCloseTo(10.0, within(1e-9));
    assertThat(Comparison.geometricMean(Arrays.asList(4.0, null, 9.0))).isCloseTo(6.0, within(1e-9));
    assertThat(Comparison.geometricMean(List.of())).isNull();
    assertThatThrownBy(() -> Comparison.geometricMean(List.of(1.0, 0.0)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void ratio_existsOnlyWhereBothRunsAreOk() throws Exception {
    ResultsFile f = file(SampleResults.fullComparison("2026-11-21T10:00:00Z", 3.0), "a");
    List<Row> rows = Comparison.rows(f);
    assertThat(rows).hasSize(15);
    Row q0 = rows.get(0);
    assertThat(q0.query()).isZero();
    assertThat(q0.cells().keySet()).containsExactly("weir", "flink", "direct");
    assertThat(q0.ratio("weir", "flink")).isCloseTo(3.0, within(1e-9));
    assertThat(q0.ratio("weir", "direct")).isCloseTo(30.0, within(1e-9));
    Row q7 = rows.get(7);
    assertThat(q7.cells().get("direct").status()).isEqualTo("timeout");
    assertThat(q7.cells().get("direct").firstErrorLine()).contains("boom");
    assertThat(q7.ratio("weir", "direct")).isNull();
    assertThat(q7.ratio("weir", "bare")).isNull();
  }

  @Test
  void geometricMeanRatio_skipsQueriesWithoutBothRuns() throws Exception {
    ResultsFile f = file(SampleResults.fullComparison("2026-11-21T10:00:00Z", 3.0), "a");
    List<Row> rows = Comparison.rows(f);
    assertThat(Comparison.geometricMeanRatio(rows, "streaming", "weir", "flink")).isCloseTo(3.0, within(1e-9));
    assertThat(Comparison.geometricMeanRatio(rows, "streaming", "weir", "direct")).isCloseTo(30.0, within(1e-9));
    assertThat(Comparison.geometricMeanRatio(rows, "batch", "weir", "flink")).isNull();
  }

  @Test
  void repeats_areSummarisedByMedian_andAnyWrongResultIsWrong() throws Exception {
    SampleResults s = new SampleResults("2026-11-21T10:00:00Z")
        .run("weir", 3, "batch", "ok", 100.0, 580L, true)
        .run("weir", 3, "batch", "ok", 300.0, 580L, false)
        .run("weir", 3, "batch", "failed", null, null, null)
        .run("weir", 3, "batch", "ok", 200.0, 580L, true);
    Comparison.Cell cell = Comparison.rows(file(s, "a")).get(0).cells().get("weir");
    assertThat(cell.eventsPerSec()).isEqualTo(200.0);
    assertThat(cell.status()).isEqualTo("ok");
    assertThat(cell.correct()).isFalse();
    assertThat(cell.repeats()).isEqualTo(4);
    assertThat(cell.numResults()).isEqualTo(580L);
  }

  @Test
  void rows_putStreamingFirst_thenBatch_eachByQuery() throws Exception {
    SampleResults s = new SampleResults("2026-11-21T10:00:00Z")
        .run("weir", 5, "batch", "ok", 1.0, 1L, null)
        .run("weir", 1, "streaming", "ok", 1.0, 1L, null)
        .run("weir", 0, "batch", "ok", 1.0, 1L, null)
        .run("weir", 0, "streaming", "ok", 1.0, 1L, null);
    assertThat(Comparison.rows(file(s, "a")).stream().map(r -> r.mode() + r.query()).toList())
        .containsExactly("streaming0", "streaming1", "batch0", "batch5");
  }

  @Test
  void improvements_stepFromEachFileToTheNext_inStartOrder() throws Exception {
    ResultsFile first = file(SampleResults.fullComparison("2026-11-20T10:00:00Z", 2.0), "first");
    ResultsFile second = file(SampleResults.fullComparison("2026-11-21T10:00:00Z", 3.0), "second");
    ResultsFile third = file(SampleResults.fullComparison("2026-11-22T10:00:00Z", 1.5), "third");
    List<Step> steps = Comparison.improvements(List.of(third, first, second), "weir", "streaming");
    assertThat(steps).hasSize(2);
    assertThat(steps.get(0).from()).startsWith("2026-11-20");
    assertThat(steps.get(0).averageRate()).isCloseTo(0.5, within(1e-9)); // 2x -> 3x flink
    assertThat(steps.get(0).perQuery()).hasSize(15).containsEntry(4, 1.5);
    assertThat(steps.get(1).averageRate()).isCloseTo(-0.5, within(1e-9)); // 3x -> 1.5x
  }

  @Test
  void improvements_compareOnlyRunsWithTheSameEventsAndParallelism() throws Exception {
    SampleResults small = SampleResults.fullComparison("2026-11-21T09:00:00Z", 1.0);
    ResultsFile a = file(SampleResults.fullComparison("2026-11-20T10:00:00Z", 2.0), "a");
    ResultsFile b = file(withEvents(small, 20_000), "b");
    ResultsFile c = file(SampleResults.fullComparison("2026-11-22T10:00:00Z", 3.0), "c");
    List<Step> steps = Comparison.improvements(List.of(a, b, c), "weir", "streaming");
    assertThat(steps).hasSize(1);
    assertThat(steps.get(0).from()).startsWith("2026-11-20");
    assertThat(steps.get(0).to()).startsWith("2026-11-22");
    assertThat(steps.get(0).averageRate()).isCloseTo(0.5, within(1e-9));
  }

  private static SampleResults withEvents(SampleResults s, long events) {
    s.settings().put("events", events);
    return s;
  }

  @Test
  void improvements_averageOnlyOverQueriesOkInBothFiles() throws Exception {
    ResultsFile a = file(new SampleResults("2026-11-20T10:00:00Z")
        .run("weir", 0, "streaming", "ok", 100.0, 1L, null)
        .run("weir", 1, "streaming", "failed", null, null, null), "a");
    ResultsFile b = file(new SampleResults("2026-11-21T10:00:00Z")
        .run("weir", 0, "streaming", "ok", 400.0, 1L, null)
        .run("weir", 1, "streaming", "ok", 50.0, 1L, null), "b");
    Step step = Comparison.improvements(List.of(a, b), "weir", "streaming").get(0);
    assertThat(step.perQuery()).containsOnlyKeys(0);
    assertThat(step.averageRate()).isCloseTo(3.0, within(1e-9));
  }

  @Test
  void sweeps_orderValuesNumerically_perRunnerAndQuery() throws Exception {
    SampleResults s = new SampleResults("2026-11-21T10:00:00Z");
    for (String v : List.of("1000", "10", "100")) {
      s.run("weir", 0, "streaming", "ok", Double.parseDouble(v) * 10, 1L, null, Map.of("maxBundleSize", v));
      s.run("flink", 0, "streaming", "ok", 500.0, 1L, null, Map.of("maxBundleSize", v));
    }
    List<SweepSeries> series = Comparison.sweeps(file(s, "a"));
    assertThat(series).hasSize(2);
    SweepSeries weir = series.stream().filter(x -> x.runner().equals("weir")).findFirst().orElseThrow();
    assertThat(weir.option()).isEqualTo("maxBundleSize");
    assertThat(weir.values()).containsExactly("10", "100", "1000");
    assertThat(weir.eventsPerSec()).containsExactly(100.0, 1000.0, 10000.0);
  }

  @Test
  void read_rejectsFilesThatAreNotResults_namingThem() throws Exception {
    Path bad = dir.resolve("bad.json");
    java.nio.file.Files.writeString(bad, "{\"hello\": 1}");
    assertThatThrownBy(() -> ResultsFile.read(bad)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(bad.toString()).hasMessageContaining("runs");
    java.nio.file.Files.writeString(bad, "{\"schemaVersion\": \"2.0.0\", \"runs\": []}");
    assertThatThrownBy(() -> ResultsFile.read(bad)).hasMessageContaining("2.0.0");
    java.nio.file.Files.writeString(bad, "not json");
    assertThatThrownBy(() -> ResultsFile.read(bad)).hasMessageContaining("not valid JSON");
  }

  @Test
  void readAll_findsResultsFilesBelowAFolder() throws Exception {
    SampleResults.fullComparison("2026-11-20T10:00:00Z", 2.0).write(dir.resolve("results/one"));
    SampleResults.fullComparison("2026-11-21T10:00:00Z", 2.0).write(dir.resolve("results/two"));
    assertThat(ResultsFile.readAll(List.of(dir.resolve("results")))).hasSize(2);
  }
}
