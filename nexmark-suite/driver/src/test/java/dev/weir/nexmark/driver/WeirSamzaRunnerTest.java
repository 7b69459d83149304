// Role: unit tests of the weir-samza runner's wiring in the driver: the runner name resolves, a run
// gets SAMZA_LOCAL and the suite broker's address with its own topic prefix, the broker is started
// only when a weir-samza run asks for it (and a broker that cannot start fails those runs, not the
// suite), the summary's weir-samza/Weir ratio. No broker is started here (SamzaSuiteIT does).
// Threading: single-threaded tests.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class WeirSamzaRunnerTest {
  @TempDir Path tmp;

  @Test
  void runnerNameResolvesBothSpellingsAndErrorsListIt() {
    assertThat(RunnerKind.of("weir-samza")).isEqualTo(RunnerKind.WEIR_SAMZA);
    assertThat(RunnerKind.of(" WEIR_SAMZA ")).isEqualTo(RunnerKind.WEIR_SAMZA);
    assertThat(RunnerKind.WEIR_SAMZA.id()).isEqualTo("weir-samza");
    assertThat(RunnerKind.WEIR_SAMZA.classpathModule()).isEqualTo("classpath-weir-samza");
    assertThat(RunnerKind.WEIR_SAMZA.needsKafka()).isTrue();
    assertThat(List.of(RunnerKind.DIRECT, RunnerKind.FLINK, RunnerKind.WEIR, RunnerKind.BARE))
        .noneMatch(RunnerKind::needsKafka);
    assertThatThrownBy(() -> RunnerKind.of("samza")).hasMessageContaining("unknown runner 'samza'")
        .hasMessageContaining("weir-samza");
  }

  @Test
  void defaultRunnersDoNotIncludeWeirSamza() {
    NexmarkCommand c = new NexmarkCommand();
    new CommandLine(c).parseArgs();
    assertThat(c.plan()).noneMatch(s -> s.runner().needsKafka());
    new CommandLine(c).parseArgs("--runners", "weir,weir-samza", "--queries", "3", "--events", "10000");
    assertThat(c.plan()).extracting(s -> s.runner().id()).containsExactly("weir", "weir-samza");
  }

  @Test
  void aRunGetsSamzaLocalTheBrokerAndItsOwnTopicPrefixMergedWithTheUsersOverride() {
    ChildRun cr = new ChildRun(new SuiteLayout(tmp), 2, 10,
        List.of("--samzaConfigOverride=task.commit.ms=5000"), false, null);
    RunSpec spec = new RunSpec(RunnerKind.WEIR_SAMZA, 4, "streaming", 10_000, Map.of(), 1);
    Path runDir = tmp.resolve("runs").resolve(spec.dirName(7));
    Map<String, String> o = cr.options(spec, runDir, "127.0.0.1:9999");
    assertThat(o).containsEntry("runner", "dev.weir.runner.WeirRunner")
        .containsEntry("executionEnvironment", "SAMZA_LOCAL")
        .containsEntry("stateBackend", "ROCKSDB")
        .containsEntry("streaming", "true")
        .containsEntry("samzaConfigOverride", "weir.kafka.bootstrap.servers=127.0.0.1:9999,"
            + "weir.kafka.topic.prefix=nexmark-007,task.commit.ms=5000");
    assertThat(ChildRun.topicPrefix(tmp.resolve("1234-weir-samza-q4-streaming"))).isEqualTo("nexmark-1234");
    List<String> cmd = cr.command(spec, runDir, "cp", "127.0.0.1:9999");
    assertThat(cmd).contains("--add-opens=java.base/java.lang=ALL-UNNAMED", RunnerKind.HARNESS_MAIN,
        "--executionEnvironment=SAMZA_LOCAL");
    // Embedded Weir never gets a Samza option; every runner gets the harness's warm-up count.
    RunSpec weir = new RunSpec(RunnerKind.WEIR, 4, "streaming", 10_000, Map.of(), 1, 2_000, 10);
    assertThat(new ChildRun(new SuiteLayout(tmp), 2, 10, List.of(), false, null).options(weir, runDir))
        .doesNotContainKeys("executionEnvironment", "samzaConfigOverride")
        .containsEntry("warmupEvents", "2000").containsEntry("warmupSeconds", "10");
  }

  @Test
  void kafkaOptionIsCheckedAndAnExistingBrokerIsNeverStarted() {
    assertThat(SuiteKafka.check(null)).isEqualTo("start");
    assertThat(SuiteKafka.check(" 10.0.0.1:9092,kafka-2:9093 ")).isEqualTo("10.0.0.1:9092,kafka-2:9093");
    assertThatThrownBy(() -> SuiteKafka.check("localhost")).hasMessageContaining("--kafka=localhost")
        .hasMessageContaining("start");
    try (SuiteKafka k = new SuiteKafka("127.0.0.1:1", tmp.resolve("broker"))) {
      assertThat(k.bootstrapServers()).isEqualTo("127.0.0.1:1");
      assertThat(k.started()).isFalse();
      assertThat(k.describe()).containsEntry("startedBySuite", false);
    }
    assertThat(tmp.resolve("broker")).doesNotExist();
  }

  @Test
  void theBrokerStartsOnlyWhenAskedAndAFailedStartFailsEachWeirSamzaRunWithoutRetrying() throws Exception {
    Path notADirectory = Files.writeString(tmp.resolve("a-file"), "x");
    SuiteKafka kafka = new SuiteKafka("start", notADirectory.resolve("kafka-broker"));
    assertThat(kafka.started()).isFalse();
    assertThat(kafka.describe()).containsEntry("startedBySuite", true).doesNotContainKey("bootstrapServers");

    ChildRun cr = new ChildRun(new SuiteLayout(tmp), 2, 10, List.of(), false, null, kafka);
    cr.useClasspath(RunnerKind.WEIR_SAMZA, "unused.jar", tmp.resolve("cp.txt"));
    RunSpec spec = new RunSpec(RunnerKind.WEIR_SAMZA, 0, "streaming", 1000, Map.of(), 1);
    RunRecord first = cr.run(spec, tmp.resolve("runs").resolve(spec.dirName(1)));
    assertThat(first.status).isEqualTo(RunRecord.FAILED);
    assertThat(first.firstErrorLine).startsWith("the suite's Kafka broker (for weir-samza) did not start")
        .contains("kafka-broker");
    assertThat(kafka.started()).isTrue();
    assertThat(kafka.describe()).containsKey("startFailure");
    RunRecord second = cr.run(spec, tmp.resolve("runs").resolve(spec.dirName(2)));
    assertThat(second.firstErrorLine).isEqualTo(first.firstErrorLine);
    kafka.close();
    kafka.close(); // idempotent

    // A weir-samza run without a suite broker fails naming it.
    ChildRun without = new ChildRun(new SuiteLayout(tmp), 2, 10, List.of(), false, null);
    without.useClasspath(RunnerKind.WEIR_SAMZA, "unused.jar", tmp.resolve("cp.txt"));
    RunRecord none = without.run(spec, tmp.resolve("runs").resolve(spec.dirName(3)));
    assertThat(none.firstErrorLine).contains("needs a Kafka broker");
  }

  @Test
  void summaryHasTheWeirSamzaOverWeirRatio() {
    List<RunRecord> runs = List.of(
        TestRuns.ok("weir", 3, 100_000.0, 17L),
        TestRuns.ok("weir-samza", 3, 25_000.0, 17L),
        TestRuns.ok("weir", 0, 80_000.0, 10_000L),
        TestRuns.ok("weir-samza", 0, 40_000.0, 10_000L));
    Summary s = Summary.of(runs, List.of("weir", "weir-samza"));
    assertThat(s.rows).extracting(r -> r.weirSamzaOverWeir).containsExactly(0.5, 0.25);
    assertThat(s.geomeanWeirSamzaOverWeir).isCloseTo(Math.sqrt(0.125), org.assertj.core.api.Assertions.within(1e-9));
    assertThat(s.ratioQueries).containsEntry("weirSamzaOverWeir", 2);
    String table = s.table(List.of("weir", "weir-samza"));
    assertThat(table).contains("weir-samza ev/s", "Samza/Weir", "0.25x", "weir-samza (Weir on samza-core");
    assertThat(Summary.of(runs.subList(0, 1), List.of("weir")).table(List.of("weir"))).doesNotContain("Samza/Weir");
  }
}
