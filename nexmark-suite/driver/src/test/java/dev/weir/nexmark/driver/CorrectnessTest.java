// Role: unit tests of the cross-runner result-count verdicts. Threading: single-threaded JUnit tests.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class CorrectnessTest {
  @Test
  void equalCountsAreCorrect() {
    RunRecord flink = TestRuns.ok("flink", 5, 30_000, 40);
    RunRecord weir = TestRuns.ok("weir", 5, 60_000, 40);
    Correctness.compareCounts(List.of(flink, weir));
    assertThat(weir.correct).isTrue();
    assertThat(flink.correct).isTrue();
  }

  @Test
  void differingCountsOfAnOrdinaryQueryAreWrong() {
    RunRecord flink = TestRuns.ok("flink", 5, 30_000, 40);
    RunRecord weir = TestRuns.ok("weir", 5, 60_000, 41);
    Correctness.compareCounts(List.of(flink, weir));
    assertThat(weir.correct).isFalse();
    assertThat(weir.correctness).contains("differ");
  }

  @Test
  void aLaterMeasuredPassThatCountsOtherwiseIsWrongEvenWhenTheFirstAgreedAcrossRunners() {
    RunRecord flink = TestRuns.ok("flink-tuned", 5, 30_000, 40);
    flink.measuredPassResults = List.of(40L, 40L, 40L);
    RunRecord weir = TestRuns.ok("weir", 5, 60_000, 40);
    weir.measuredPassResults = List.of(40L, 40L, 39L);
    Correctness.compareCounts(List.of(flink, weir));
    assertThat(flink.correct).isTrue();
    assertThat(flink.correctness).contains("all 3 measured passes counted 40");
    assertThat(weir.correct).isFalse();
    assertThat(weir.correctness).contains("equal across runners").contains("counted [40, 40, 39]");
    RunRecord q9 = TestRuns.ok("weir", 9, 60_000, 40);
    q9.measuredPassResults = List.of(40L, 41L);
    assertThat(Correctness.passesAgree(q9).correct()).isNull();
  }

  @Test
  void theNoDelayPassDecidesQ6AndQ9WhereTheMeasuredCountsDependOnTiming() {
    RunRecord flink = noDelayRun("flink-tuned", 6, 4_295, 4_400);
    RunRecord weir = noDelayRun("weir", 6, 4_301, 4_400);
    Correctness.compareCounts(List.of(flink, weir));
    assertThat(weir.correct).isTrue();
    assertThat(weir.correctness).startsWith("timing-dependent").contains("no-delay pass (--probDelayedEvent=0): "
        + "streaming result counts equal across runners");
    assertThat(Summary.resultsCell(Summary.of(List.of(flink, weir), List.of("flink-tuned", "weir")).rows.get(0)))
        .contains("no-delay flink-tuned=4400 weir=4400").endsWith("[ok; measured counts timing-dependent]");

    RunRecord f9 = noDelayRun("flink-tuned", 9, 900, 950);
    RunRecord w9 = noDelayRun("weir", 9, 900, 951);
    Correctness.compareCounts(List.of(f9, w9));
    assertThat(w9.correct).isFalse();
    assertThat(w9.correctness).contains("no-delay pass").contains("differ");
  }

  @Test
  void whenTheBatchPassesAgree_theirCountJudgesEveryNoDelayPass_evenTheMajorityOrAllOfThem() {
    RunRecord flink = noDelayRun("flink-tuned", 9, 15_907, 15_775, 16_563L);
    RunRecord weir = noDelayRun("weir", 9, 16_552, 16_563, 16_563L);
    Correctness.compareCounts(List.of(flink, weir));
    assertThat(weir.correct).isTrue();
    assertThat(weir.correctness).contains("count 16563 equals the batch count 16563");
    assertThat(flink.correct).isFalse();
    assertThat(flink.correctness).contains("count 15775 differs from the batch count 16563")
        .contains("788 results lost to events dropped as late");
    assertThat(Summary.resultsCell(Summary.of(List.of(flink, weir), List.of("flink-tuned", "weir")).rows.get(0)))
        .contains("no-delay flink-tuned=15775 weir=16563 batch flink-tuned=16563 weir=16563");

    // Equal no-delay counts are still wrong when the agreed batch count is another.
    RunRecord f2 = noDelayRun("flink-tuned", 9, 900, 950, 960L);
    RunRecord w2 = noDelayRun("weir", 9, 900, 950, 960L);
    Correctness.compareCounts(List.of(f2, w2));
    assertThat(w2.correct).isFalse();
    assertThat(f2.correct).isFalse();
  }

  @Test
  void batchPassesThatDisagree_orFromOneRunnerOnly_areNoReference() {
    // Q6: Flink's batch GroupByKey fires the per-element trigger once per key.
    RunRecord flink = noDelayRun("flink-tuned", 6, 20_116, 20_153, 4_428L);
    RunRecord weir = noDelayRun("weir", 6, 20_977, 20_991, 20_991L);
    Correctness.compareCounts(List.of(flink, weir));
    assertThat(weir.correctness).doesNotContain("batch count").contains("differ");
    assertThat(weir.correct).isFalse(); // no majority between two runners: both marked, as before

    RunRecord f9 = noDelayRun("flink-tuned", 9, 900, 950);
    RunRecord w9 = noDelayRun("weir", 9, 900, 950, 960L);
    Correctness.compareCounts(List.of(f9, w9));
    assertThat(w9.correct).isTrue(); // one runner's batch count alone does not decide
    assertThat(w9.correctness).contains("equal across runners");
  }

  /** An ok run of {@code query} that counted {@code measured} in its measured pass and {@code noDelay} in its no-delay pass. */
  private static RunRecord noDelayRun(String runner, int query, long measured, long noDelay) {
    return noDelayRun(runner, query, measured, noDelay, null);
  }

  /** As above, with {@code batch} as its batch reference pass's count (null: none). */
  private static RunRecord noDelayRun(String runner, int query, long measured, long noDelay, Long batch) {
    RunRecord r = TestRuns.ok(runner, query, 12_000, measured);
    r.noDelayResults = noDelay;
    r.noDelayBatchResults = batch;
    return r;
  }

  @Test
  void onlyTimingDependentQueriesRunANoDelayPass() {
    assertThat(ChildRun.noDelayPass(new RunSpec(RunnerKind.WEIR, 6, "streaming", 1_000, java.util.Map.of(), 1))).isTrue();
    assertThat(ChildRun.noDelayPass(new RunSpec(RunnerKind.DIRECT, 9, "streaming", 1_000, java.util.Map.of(), 1))).isTrue();
    assertThat(ChildRun.noDelayPass(new RunSpec(RunnerKind.WEIR, 6, "batch", 1_000, java.util.Map.of(), 1))).isFalse();
    assertThat(ChildRun.noDelayPass(new RunSpec(RunnerKind.WEIR, 5, "streaming", 1_000, java.util.Map.of(), 1))).isFalse();
  }

  @Test
  void differingCountsOfQ6AndQ9AreTimingDependentNotWrong() {
    for (int q : new int[] {6, 9}) {
      RunRecord flink = TestRuns.ok("flink", q, 12_000, 4_295);
      RunRecord weir = TestRuns.ok("weir", q, 14_000, 4_301);
      Correctness.compareCounts(List.of(flink, weir));
      assertThat(weir.correct).as("Q%d", q).isNull();
      assertThat(flink.correct).as("Q%d", q).isNull();
      assertThat(weir.correctness).startsWith("timing-dependent").contains("weir=4301");
    }
  }

  @Test
  void runsOfDifferentSizesAreNotCompared() {
    RunRecord direct = TestRuns.ok("direct", 5, 3_000, 4);
    RunRecord weir = TestRuns.ok("weir", 5, 60_000, 40);
    weir.events = 500_000;
    Correctness.compareCounts(List.of(direct, weir));
    assertThat(weir.correct).isNull();
    assertThat(weir.correctness).contains("no other runner");
  }

  /** A run over 500,000 events with a check pass over Direct's 10,000 that gave {@code checked}. */
  private static RunRecord checked(String runner, int query, long results, long checked) {
    RunRecord r = TestRuns.ok(runner, query, 60_000, results);
    r.events = 500_000;
    r.checkEvents = 10_000L;
    r.checkResults = checked;
    return r;
  }

  private static RunRecord direct(int query, long results) {
    RunRecord r = TestRuns.ok("direct", query, 2_000, results);
    r.events = 10_000;
    return r;
  }

  @Test
  void checkPassesAreJudgedWithDirectsRunOverTheirEvents() {
    RunRecord direct = direct(5, 7);
    RunRecord flink = checked("flink", 5, 40, 7);
    RunRecord weir = checked("weir", 5, 40, 7);
    Correctness.compareCounts(List.of(direct, flink, weir));
    assertThat(direct.correct).isTrue();
    assertThat(direct.correctness).contains("at 10000 events").contains("direct=7")
        .contains("weir (check pass)=7").contains("flink (check pass)=7");
    assertThat(weir.correct).isTrue();
    assertThat(weir.correctness).startsWith("streaming result counts equal across runners (flink=40, weir=40)")
        .contains("; check pass: streaming result counts equal across runners at 10000 events");
  }

  @Test
  void aCheckPassThatDiffersFromDirectMakesTheRunWrongEvenWhenItsMeasuredCountAgrees() {
    RunRecord direct = direct(3, 27);
    RunRecord flink = checked("flink", 3, 1_203, 27);
    RunRecord weir = checked("weir", 3, 1_203, 26);
    Correctness.compareCounts(List.of(direct, flink, weir));
    assertThat(weir.correct).isFalse();
    assertThat(weir.correctness).contains("check pass: streaming result counts differ").contains("majority 27");
    assertThat(flink.correct).isTrue();
    assertThat(direct.correct).isTrue();
  }

  @Test
  void directAloneWithCheckPassesIsJudgedEvenWithoutPeersAtTheMeasuredSize() {
    RunRecord direct = direct(1, 9_200);
    RunRecord weir = checked("weir", 1, 460_000, 9_200);
    Correctness.compareCounts(List.of(direct, weir));
    assertThat(weir.correct).isTrue();
    assertThat(weir.correctness).startsWith("check pass: ");
    assertThat(direct.correct).isTrue();
  }

  @Test
  void aTimingDependentCheckPassGivesNoVerdictButIsNamed() {
    RunRecord direct = direct(6, 400);
    RunRecord weir = checked("weir", 6, 8_585, 401);
    Correctness.compareCounts(List.of(direct, weir));
    assertThat(weir.correct).isNull();
    assertThat(weir.correctness).startsWith("check pass: timing-dependent");
    assertThat(direct.correct).isNull();
  }

  @Test
  void queriesWhoseCountsDependOnTheRunnerAreNotCheckedEither() {
    RunRecord direct = direct(10, 1);
    RunRecord weir = checked("weir", 10, 2, 2);
    Correctness.compareCounts(List.of(direct, weir));
    assertThat(weir.correct).isNull();
    assertThat(weir.correctness).contains("depend on the runner's bundling");
    assertThat(Correctness.notJudged(12)).contains("processing-time triggers");
  }
}
