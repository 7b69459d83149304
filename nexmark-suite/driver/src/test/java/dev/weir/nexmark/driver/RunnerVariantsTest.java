// Role: unit tests of the Flink variants (flink-tuned, flink-tuned-rocksdb), options given to one
// runner only (--runner-options), equal checkpoints, and the summary's spread, cost and peers.
// Threading: single-threaded JUnit tests.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class RunnerVariantsTest {
  @TempDir Path tmp;

  @Test
  void tunedFlinkVariantsReuseObjectsCopyFasterAndDifferOnlyInTheStateBackend() {
    Map<String, String> heap = RunnerKind.of("flink-tuned").runnerOptions(2, tmp);
    Map<String, String> rocks = RunnerKind.of("flink-tuned-rocksdb").runnerOptions(2, tmp);
    Map<String, String> shipped = RunnerKind.FLINK.runnerOptions(2, tmp);
    assertThat(heap).containsEntry("objectReuse", "true").containsEntry("fasterCopy", "true")
        .containsEntry("stateBackend", "filesystem").containsEntry("parallelism", "2");
    assertThat(rocks).containsEntry("objectReuse", "true").containsEntry("stateBackend", "rocksdb");
    assertThat(shipped).doesNotContainKeys("objectReuse", "fasterCopy").containsEntry("stateBackend", "rocksdb");
    assertThat(List.of(RunnerKind.FLINK, RunnerKind.FLINK_TUNED, RunnerKind.FLINK_TUNED_ROCKSDB))
        .allSatisfy(k -> {
          assertThat(k.isFlink()).isTrue();
          assertThat(k.classpathModule()).isEqualTo("classpath-flink");
          assertThat(k.jvmFlags()).isEqualTo(RunnerKind.FLINK_JAVA17_OPENS);
        });
    assertThat(RunnerKind.FLINK_TUNED_ROCKSDB.id()).isEqualTo("flink-tuned-rocksdb");
  }

  @Test
  void everyRunnerThatCheckpointsGetsTheSameIntervalAndFlinkRunsStillEnd() {
    assertThat(RunnerKind.WEIR.checkpointOptions(10_000)).containsExactly(Map.entry("checkpointingIntervalMs", "10000"));
    assertThat(RunnerKind.FLINK_TUNED.checkpointOptions(10_000))
        .containsEntry("checkpointingInterval", "10000").containsEntry("shutdownSourcesAfterIdleMs", "0")
        .containsEntry("fasterCopy", "false"); // heap snapshots need a real copy
    assertThat(RunnerKind.FLINK_TUNED_ROCKSDB.checkpointOptions(10_000)).doesNotContainKey("fasterCopy");
    assertThat(RunnerKind.FLINK.checkpointOptions(0)).isEmpty();
    assertThat(RunnerKind.WEIR.checkpointOptions(0)).containsEntry("checkpointingIntervalMs", "0");
    assertThat(RunnerKind.DIRECT.checkpointOptions(10_000)).isEmpty();
    assertThat(RunnerKind.BARE.checkpointOptions(10_000)).isEmpty();
    assertThat(RunnerKind.WEIR_SAMZA.checkpointOptions(10_000)).isEmpty();
  }

  @Test
  void runnerOptionsSplitOnlyBeforeADoubleDashAndRejectWhatIsNotAnOption() {
    RunnerOptions o = RunnerOptions.parse(List.of("flink-tuned=--objectReuse=false,--maxBundleSize=10",
        "weir-samza=--samzaConfigOverride=a=1,b=2 --x", "flink-tuned=--maxBundleSize=20"));
    assertThat(o.of(RunnerKind.FLINK_TUNED)).containsExactly(Map.entry("objectReuse", "false"),
        Map.entry("maxBundleSize", "20"));
    assertThat(o.of(RunnerKind.WEIR_SAMZA)).containsEntry("samzaConfigOverride", "a=1,b=2").containsKey("x");
    assertThat(o.of(RunnerKind.WEIR)).isEmpty();
    assertThat(o.describe()).containsOnlyKeys("flink-tuned", "weir-samza");
    assertThatThrownBy(() -> RunnerOptions.parse(List.of("spark=--x=1")))
        .hasMessageContaining("--runner-options").hasMessageContaining("unknown runner 'spark'");
    assertThatThrownBy(() -> RunnerOptions.parse(List.of("--objectReuse=true")))
        .hasMessageContaining("RUNNER=--name=value");
    assertThatThrownBy(() -> RunnerOptions.parse(List.of("weir=maxBundleSize=10")))
        .hasMessageContaining("'maxBundleSize=10' is not an option");
  }

  @Test
  void aRunnersOwnOptionsWinOverThePassThroughAndCheckpointsApplyToStreamingOnly() {
    ChildRun cr = new ChildRun(new SuiteLayout(tmp), RunCpus.fixed(2), 10, List.of("--maxBundleSize=5",
        "--objectReuse=false"), false, null, null,
        RunnerOptions.parse(List.of("flink-tuned=--maxBundleSize=50")), 7_000);
    RunSpec flink = new RunSpec(RunnerKind.FLINK_TUNED, 5, "streaming", 1_000, Map.of(), 1);
    Map<String, String> o = cr.options(flink, tmp);
    assertThat(o).containsEntry("maxBundleSize", "50").containsEntry("objectReuse", "false")
        .containsEntry("checkpointingInterval", "7000").containsEntry("shutdownSourcesAfterIdleMs", "0");
    assertThat(cr.runnerConfiguration(flink, tmp)).containsEntry("maxBundleSize", "50")
        .containsEntry("checkpointingInterval", "7000");
    RunSpec weir = new RunSpec(RunnerKind.WEIR, 5, "streaming", 1_000, Map.of(), 1);
    assertThat(cr.options(weir, tmp)).containsEntry("maxBundleSize", "5").containsEntry("checkpointingIntervalMs", "7000");
    RunSpec batch = new RunSpec(RunnerKind.FLINK_TUNED, 5, "batch", 1_000, Map.of(), 1);
    assertThat(cr.options(batch, tmp)).doesNotContainKeys("checkpointingInterval", "shutdownSourcesAfterIdleMs");
  }

  @Test
  void theDefaultComparisonIsAgainstTunedFlinkWithEqualCheckpoints() {
    NexmarkCommand c = new NexmarkCommand();
    new CommandLine(c).parseArgs("--queries", "0");
    assertThat(c.plan()).extracting(s -> s.runner().id()).containsExactly("direct", "flink-tuned", "weir", "bare");
    assertThat(c.checkpointDescription(List.of(RunnerKind.DIRECT, RunnerKind.FLINK_TUNED, RunnerKind.WEIR)))
        .isEqualTo("checkpoints (streaming runs): every 10000 ms on flink-tuned, weir (the others take none here)");
    NexmarkCommand bad = new NexmarkCommand();
    new CommandLine(bad).parseArgs("--checkpoint-interval-ms", "-1");
    assertThatThrownBy(bad::plan).hasMessageContaining("--checkpoint-interval-ms=-1");
    NexmarkCommand badRunner = new NexmarkCommand();
    new CommandLine(badRunner).parseArgs("--runner-options", "flonk=--x=1");
    assertThatThrownBy(badRunner::plan).hasMessageContaining("flonk");
  }

  @Test
  void repeatsInterleaveRunnersAndTheSummaryGivesMedianSpreadAndCostPerEvent() {
    NexmarkCommand c = new NexmarkCommand();
    new CommandLine(c).parseArgs("--runners", "flink-tuned,weir", "--queries", "3", "--repeat", "3", "--no-check-pass");
    assertThat(c.plan()).extracting(s -> s.runner().id() + "#" + s.repeat())
        .containsExactly("flink-tuned#1", "weir#1", "flink-tuned#2", "weir#2", "flink-tuned#3", "weir#3");

    List<RunRecord> runs = List.of(
        run("flink-tuned", 100_000, 1), run("weir", 300_000, 1),
        run("flink-tuned", 120_000, 2), run("weir", 240_000, 2),
        run("flink-tuned", 90_000, 3), run("weir", 330_000, 3),
        run("flink", 50_000, 1));
    Summary s = Summary.of(runs, List.of("flink-tuned", "flink", "weir"));
    Summary.Row row = s.rows.get(0);
    assertThat(s.flinkReference).isEqualTo("flink-tuned");
    assertThat(row.eventsPerSec).containsEntry("weir", 300_000.0).containsEntry("flink-tuned", 100_000.0);
    assertThat(row.eventsPerSecMin).containsEntry("weir", 240_000.0);
    assertThat(row.eventsPerSecMax).containsEntry("weir", 330_000.0);
    assertThat(row.okRuns).containsEntry("weir", 3).containsEntry("flink", 1);
    assertThat(row.weirOverFlink).isCloseTo(3.0, within(1e-12));
    assertThat(row.weirOver).containsEntry("flink", 6.0);
    assertThat(s.geomeanWeirOver.get("flink-tuned")).isCloseTo(3.0, within(1e-12));
    // 1,000 events x 2 passes; CPU seconds = events/s / 1e5 in run(): 3.0 s over 2,000 events
    assertThat(row.cpuMicrosPerEvent.get("weir")).isCloseTo(1_500.0, within(1e-9));
    assertThat(row.peakRssBytes).containsEntry("weir", 300L << 20);
    assertThat(row.measuredCompileShare).containsEntry("weir", 0.3);
    String table = s.table(List.of("flink-tuned", "flink", "weir"));
    assertThat(table).contains("300.0K [240.0K-330.0K]").contains("Weir/flink-tuned").contains("3.00x")
        .contains("Weir/flink-tuned 3.00x over 1 queries").contains("<- CPU us/event").contains("1500.0")
        .contains("ratios are of medians").contains("<- JIT share").contains("0.30");
  }

  private static RunRecord run(String runner, double eventsPerSec, int repeat) {
    RunRecord r = TestRuns.ok(runner, 3, eventsPerSec, 7);
    r.repeat = repeat;
    r.events = 1_000;
    r.measuredPasses = 2;
    r.cpuSeconds = eventsPerSec / 1e5;
    r.peakRssBytes = ((long) (eventsPerSec / 1_000)) << 20;
    r.measuredCompileShare = eventsPerSec / 1e6;
    return r;
  }
}
