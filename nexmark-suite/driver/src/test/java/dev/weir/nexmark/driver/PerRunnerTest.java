// Role: unit tests of --events parsing (per-runner event counts) and of the plan it gives.
// Threading: single-threaded JUnit tests.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class PerRunnerTest {
  private static final List<RunnerKind> ALL =
      List.of(RunnerKind.DIRECT, RunnerKind.FLINK, RunnerKind.WEIR, RunnerKind.BARE);

  @Test
  void aBareCountAppliesToEveryRunner() {
    PerRunner c = PerRunner.parse("1000000");
    assertThat(c.asMap(ALL)).containsOnlyKeys("direct", "flink", "weir", "bare")
        .allSatisfy((r, n) -> assertThat(n).isEqualTo(1_000_000L));
    assertThat(c.uniform(ALL)).isTrue();
    assertThat(c.describe(ALL)).isEqualTo("1,000,000 events");
  }

  @Test
  void perRunnerCountsOverrideTheDefault() {
    PerRunner c = PerRunner.parse("500000, direct=50_000");
    assertThat(c.forRunner(RunnerKind.DIRECT)).isEqualTo(50_000);
    assertThat(c.forRunner(RunnerKind.WEIR)).isEqualTo(500_000);
    assertThat(c.uniform(ALL)).isFalse();
    assertThat(c.describe(List.of(RunnerKind.DIRECT, RunnerKind.WEIR)))
        .isEqualTo("direct 50,000, weir 500,000 events");
  }

  @Test
  void aRunnerWithoutACountIsNamed() {
    PerRunner c = PerRunner.parse("direct=50000,weir=1000000");
    assertThatThrownBy(() -> c.forRunner(RunnerKind.FLINK)).hasMessageContaining("flink")
        .hasMessageContaining("flink=N");
  }

  @Test
  void badItemsAreNamed() {
    assertThatThrownBy(() -> PerRunner.parse("")).hasMessageContaining("--events");
    assertThatThrownBy(() -> PerRunner.parse("0")).hasMessageContaining("'0'");
    assertThatThrownBy(() -> PerRunner.parse("weir=lots")).hasMessageContaining("'lots'");
    assertThatThrownBy(() -> PerRunner.parse("spark=10")).hasMessageContaining("unknown runner 'spark'");
    assertThatThrownBy(() -> PerRunner.parse("weir=1,weir=2")).hasMessageContaining("weir twice");
    assertThatThrownBy(() -> PerRunner.parse("1,2")).hasMessageContaining("two default counts");
  }

  @Test
  void theDefaultCommandGivesEachRunnerItsOwnSizeAndRunsBareBesideQ0ToQ2() {
    NexmarkCommand cmd = new NexmarkCommand();
    new picocli.CommandLine(cmd).parseArgs();
    List<RunSpec> plan = cmd.plan();
    assertThat(plan).filteredOn(s -> s.runner() == RunnerKind.BARE)
        .extracting(RunSpec::query).containsExactly(0, 1, 2);
    assertThat(plan).filteredOn(s -> s.runner() == RunnerKind.DIRECT)
        .allSatisfy(s -> assertThat(s.events()).isEqualTo(10_000));
    assertThat(plan).filteredOn(s -> s.runner() != RunnerKind.DIRECT)
        .allSatisfy(s -> assertThat(s.events()).isEqualTo(500_000));
  }

  @Test
  void warmupCountsAllowZeroAndNameTheirOwnOption() {
    PerRunner w = PerRunner.parseWarmup("100000,direct=0");
    assertThat(w.forRunner(RunnerKind.DIRECT)).isZero();
    assertThat(w.forRunner(RunnerKind.BARE)).isEqualTo(100_000);
    assertThatThrownBy(() -> PerRunner.parseWarmup("-1")).hasMessageContaining("--warmup-events")
        .hasMessageContaining(">= 0");
    assertThatThrownBy(() -> PerRunner.parse("0")).hasMessageContaining("--events")
        .hasMessageContaining("positive");
  }

  @Test
  void everyPlannedRunCarriesItsRunnersWarmupCount() {
    NexmarkCommand c = new NexmarkCommand();
    new picocli.CommandLine(c).parseArgs("--runners", "direct,weir,bare", "--queries", "0",
        "--events", "1000", "--warmup-events", "500,direct=0");
    assertThat(c.plan()).extracting(s -> s.runner().id() + ":" + s.warmupEvents())
        .containsExactly("direct:0", "weir:500", "bare:500");
    NexmarkCommand dflt = new NexmarkCommand();
    new picocli.CommandLine(dflt).parseArgs("--runners", "weir", "--queries", "0");
    assertThat(dflt.plan()).extracting(RunSpec::warmupEvents).containsExactly(300_000L);
    assertThat(dflt.plan()).extracting(RunSpec::warmupSeconds).containsExactly(10L);
    NexmarkCommand one = new NexmarkCommand();
    new picocli.CommandLine(one).parseArgs("--runners", "weir", "--queries", "0", "--warmup-seconds", "0");
    assertThat(one.plan()).extracting(RunSpec::warmupSeconds).containsExactly(0L);
    NexmarkCommand bad = new NexmarkCommand();
    new picocli.CommandLine(bad).parseArgs("--runners", "weir", "--queries", "0", "--warmup-seconds", "-1");
    assertThatThrownBy(bad::plan)
        .hasMessageContaining("--warmup-seconds: '-1'").hasMessageContaining("seconds >= 0");
  }

  @Test
  void theDefaultCommandSettlesEveryRunnerButDirectAndMeasuresForFiveSeconds() {
    NexmarkCommand cmd = new NexmarkCommand();
    new picocli.CommandLine(cmd).parseArgs();
    assertThat(cmd.plan()).filteredOn(s -> s.runner() == RunnerKind.DIRECT).allSatisfy(s -> {
      assertThat(s.warmupEvents()).isEqualTo(5_000);
      assertThat(s.warmupSeconds()).isZero();
      assertThat(s.warmupMaxSeconds()).isZero();
    });
    assertThat(cmd.plan()).filteredOn(s -> s.runner() != RunnerKind.DIRECT).allSatisfy(s -> {
      assertThat(s.warmupEvents()).isEqualTo(300_000);
      assertThat(s.warmupSeconds()).isEqualTo(10);
      assertThat(s.warmupMaxSeconds()).isEqualTo(30);
    });
    assertThat(cmd.plan()).allSatisfy(s -> assertThat(s.measuredSeconds()).isEqualTo(5));
  }

  @Test
  void durationsTakeOneValueOrOnePerRunnerAndNameTheirOption() {
    NexmarkCommand c = new NexmarkCommand();
    new picocli.CommandLine(c).parseArgs("--runners", "direct,weir", "--queries", "0",
        "--warmup-max-seconds", "40,direct=0", "--measured-seconds", "0,weir=8");
    assertThat(c.plan()).extracting(s -> s.runner().id() + ":" + s.warmupMaxSeconds() + ":" + s.measuredSeconds())
        .containsExactly("direct:0:0", "weir:40:8");
    PerRunner sec = PerRunner.parseSeconds("5,flink=12", "--measured-seconds");
    assertThat(sec.describe(List.of(RunnerKind.FLINK, RunnerKind.WEIR))).isEqualTo("flink 12, weir 5 s");
    assertThat(sec.max(List.of(RunnerKind.FLINK, RunnerKind.WEIR))).isEqualTo(12);
    PerRunner most = PerRunner.parseSeconds("30,direct=0", "--warmup-max-seconds");
    assertThat(most.describeNonZero(List.of(RunnerKind.DIRECT, RunnerKind.FLINK, RunnerKind.WEIR)))
        .isEqualTo("30 s (direct: none)");
    assertThat(most.describeNonZero(List.of(RunnerKind.DIRECT))).isEmpty();
    assertThat(sec.describeNonZero(List.of(RunnerKind.FLINK, RunnerKind.WEIR))).isEqualTo("flink 12, weir 5 s");
    NexmarkCommand bad = new NexmarkCommand();
    new picocli.CommandLine(bad).parseArgs("--runners", "weir", "--queries", "0", "--measured-seconds", "weir=soon");
    assertThatThrownBy(bad::plan).hasMessageContaining("--measured-seconds: 'soon'")
        .hasMessageContaining("whole number of seconds >= 0");
  }
}
