// Role: unit tests of ratios, geometric means and the summary built from runs.
// Threading: single-threaded JUnit tests.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class StatsTest {
  @Test
  void ratioNeedsTwoPositiveNumbers() {
    assertThat(Stats.ratio(200.0, 100.0)).isEqualTo(2.0);
    assertThat(Stats.ratio(null, 100.0)).isNull();
    assertThat(Stats.ratio(1.0, 0.0)).isNull();
    assertThat(Stats.ratio(1.0, Double.NaN)).isNull();
  }

  @Test
  void geomeanIgnoresMissingValues() {
    assertThat(Stats.geomean(List.of(2.0, 8.0))).isCloseTo(4.0, within(1e-12));
    assertThat(Stats.geomean(Arrays.asList(0.5, null, 2.0))).isCloseTo(1.0, within(1e-12));
    assertThat(Stats.geomean(List.of())).isNull();
  }

  @Test
  void medianOfOddAndEvenCounts() {
    assertThat(Stats.median(List.of(3.0, 1.0, 2.0))).isEqualTo(2.0);
    assertThat(Stats.median(List.of(4.0, 1.0))).isEqualTo(2.5);
    assertThat(Stats.median(List.of())).isNull();
  }

  @Test
  void summaryRatiosPerQueryAndGeomean() {
    List<RunRecord> runs = List.of(
        TestRuns.ok("flink", 0, 100_000.0, 10), TestRuns.ok("direct", 0, 4_000.0, 10),
        TestRuns.ok("weir", 0, 200_000.0, 10),
        TestRuns.ok("flink", 3, 50_000.0, 5), TestRuns.ok("direct", 3, 5_000.0, 5),
        TestRuns.ok("weir", 3, 25_000.0, 5),
        TestRuns.ok("flink", 7, 40_000.0, 1), TestRuns.failed("weir", 7), TestRuns.timeout("direct", 7));
    Summary s = Summary.of(runs, List.of("direct", "flink", "weir"));
    assertThat(s.rows).hasSize(3);
    assertThat(s.rows.get(0).weirOverFlink).isCloseTo(2.0, within(1e-12));
    assertThat(s.rows.get(0).weirOverDirect).isCloseTo(50.0, within(1e-12));
    assertThat(s.rows.get(1).weirOverFlink).isCloseTo(0.5, within(1e-12));
    assertThat(s.rows.get(2).weirOverFlink).isNull();
    assertThat(s.geomeanWeirOverFlink).isCloseTo(1.0, within(1e-12));
    assertThat(s.geomeanWeirOverDirect).isCloseTo(Math.sqrt(50.0 * 5.0), within(1e-9));
    String table = s.table(List.of("direct", "flink", "weir"));
    assertThat(table).contains("PASSTHROUGH").contains("2.00x").contains("timeout").contains("failed");
  }

  @Test
  void summaryTableShowsWeirsShareOfTheBareLimitWhenBareRan() {
    List<RunRecord> runs = List.of(TestRuns.ok("bare", 0, 1_000_000.0, 10),
        TestRuns.ok("weir", 0, 260_000.0, 10), TestRuns.ok("weir", 3, 300_000.0, 5));
    Summary s = Summary.of(runs, List.of("weir", "bare"));
    assertThat(s.rows.get(0).weirOverBare).isCloseTo(0.26, within(1e-12));
    String table = s.table(List.of("weir", "bare"));
    assertThat(table).contains("Weir/bare").contains(" 26%");
    assertThat(Summary.of(runs, List.of("weir")).table(List.of("weir"))).doesNotContain("Weir/bare");
  }

  @Test
  void summaryUsesMedianOverRepeats() {
    RunRecord a = TestRuns.ok("weir", 0, 10.0, 1);
    RunRecord b = TestRuns.ok("weir", 0, 30.0, 1);
    RunRecord c = TestRuns.ok("weir", 0, 20.0, 1);
    RunRecord f = TestRuns.ok("flink", 0, 10.0, 1);
    Summary s = Summary.of(List.of(a, b, c, f), List.of("flink", "weir"));
    assertThat(s.rows.get(0).eventsPerSec.get("weir")).isEqualTo(20.0);
    assertThat(s.rows.get(0).weirOverFlink).isEqualTo(2.0);
  }

  @Test
  void summaryTableSaysWhatTheCheckPassesCountedAndTheVerdict() {
    RunRecord direct = TestRuns.ok("direct", 3, 2_700.0, 17);
    direct.events = 10_000;
    RunRecord flink = TestRuns.ok("flink", 3, 150_000.0, 2_994);
    RunRecord weir = TestRuns.ok("weir", 3, 1_200_000.0, 2_994);
    for (RunRecord r : List.of(flink, weir)) {
      r.events = 500_000;
      r.checkEvents = 10_000L;
      r.checkResults = 17L;
    }
    Correctness.compareCounts(List.of(direct, flink, weir));
    Summary s = Summary.of(List.of(direct, flink, weir), List.of("direct", "flink", "weir"));
    assertThat(Summary.resultsCell(s.rows.get(0)))
        .isEqualTo("direct=17 flink=2994 weir=2994 check flink=17 weir=17 [ok]");
    weir.checkResults = 16L;
    for (RunRecord r : List.of(direct, flink, weir)) {
      r.correct = null;
      r.correctness = "none";
    }
    Correctness.compareCounts(List.of(direct, flink, weir));
    assertThat(Summary.resultsCell(Summary.of(List.of(direct, flink, weir), List.of("direct", "flink", "weir"))
        .rows.get(0))).endsWith("check flink=17 weir=16 [WRONG: weir]");
    RunRecord alone = TestRuns.ok("weir", 5, 200_000.0, 40);
    Correctness.compareCounts(List.of(alone));
    assertThat(Summary.resultsCell(Summary.of(List.of(alone), List.of("weir")).rows.get(0)))
        .isEqualTo("40 [not judged]");
  }
}
