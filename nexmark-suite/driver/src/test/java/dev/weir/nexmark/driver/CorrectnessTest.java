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
}
