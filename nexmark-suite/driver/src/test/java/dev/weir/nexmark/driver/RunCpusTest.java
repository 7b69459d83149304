// Role: unit tests of --cores / --cpus and their sweeps: each run's parallelism, its pinning
// (taskset and -XX:ActiveProcessorCount in the child command), and the errors for bad values.
// Threading: single-threaded tests.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunCpusTest {
  @TempDir
  Path tmp;

  private static RunSpec weir(Map<String, String> sweep) {
    return new RunSpec(RunnerKind.WEIR, 0, "streaming", 1000, sweep, 1);
  }

  @Test
  void parallelismIsCoresThenCpusThenEveryProcessor() {
    assertThat(RunCpus.of(null, null, 4).parallelism(weir(Map.of()))).isEqualTo(4);
    assertThat(RunCpus.of(3, null, 4).parallelism(weir(Map.of()))).isEqualTo(3);
    assertThat(RunCpus.of(null, 2, 4).parallelism(weir(Map.of()))).isEqualTo(2);
    assertThat(RunCpus.of(3, 2, 4).parallelism(weir(Map.of()))).isEqualTo(3);
    assertThat(RunCpus.of(null, 2, 4).parallelism()).isEqualTo(2);
  }

  @Test
  void sweptValuesWinOverTheOptions() {
    RunCpus c = RunCpus.of(null, 2, 4);
    assertThat(c.cpus(weir(Map.of("cpus", "1")))).isEqualTo(1);
    assertThat(c.parallelism(weir(Map.of("cpus", "1")))).isEqualTo(1);
    assertThat(c.parallelism(weir(Map.of("cores", "3")))).isEqualTo(3);
    assertThat(c.cpus(weir(Map.of("cores", "3")))).isEqualTo(2);
  }

  @Test
  void anUnpinnedRunHasNoLauncherAndNoProcessorCount() {
    RunCpus c = RunCpus.of(1, null, 2);
    assertThat(c.launcher(weir(Map.of()))).isEmpty();
    assertThat(c.jvmFlags(weir(Map.of()))).isEmpty();
  }

  @Test
  void aPinnedRunStartsUnderTasksetSizedForItsCpus() {
    RunCpus c = RunCpus.of(null, null, 2);
    List<String> one = c.launcher(weir(Map.of("cpus", "1")));
    assertThat(one.get(0)).endsWith("taskset");
    assertThat(one.subList(1, 3)).containsExactly("-c", "0");
    assertThat(c.launcher(weir(Map.of("cpus", "2"))).subList(1, 3)).containsExactly("-c", "0-1");
    assertThat(c.jvmFlags(weir(Map.of("cpus", "2")))).containsExactly("-XX:ActiveProcessorCount=2");
  }

  @Test
  void theChildCommandIsPinnedAndGetsNeitherDriverSweepAsAnOption() {
    ChildRun cr = new ChildRun(new SuiteLayout(tmp), RunCpus.of(null, null, 2), 10, List.of(), false, null, null);
    RunSpec spec = weir(Map.of("cpus", "1", "maxBundleSize", "10"));
    List<String> cmd = cr.command(spec, tmp, "cp");
    assertThat(cmd.get(0)).endsWith("taskset");
    assertThat(cmd.subList(1, 3)).containsExactly("-c", "0");
    assertThat(cmd.get(3)).endsWith("/bin/java");
    assertThat(cmd).contains("-XX:ActiveProcessorCount=1", "--parallelism=1", "--maxBundleSize=10");
    assertThat(cmd).noneMatch(a -> a.startsWith("--cpus") || a.startsWith("--cores"));

    RunSpec bare = new RunSpec(RunnerKind.BARE, 0, "streaming", 1000, Map.of("cores", "1"), 1);
    assertThat(cr.options(bare, tmp)).containsEntry("threads", "1").doesNotContainKey("cores");
    assertThat(cr.command(bare, tmp, "cp").get(0)).endsWith("/bin/java");
  }

  @Test
  void badValuesNameTheOptionAndTheAllowedValues() {
    assertThatThrownBy(() -> RunCpus.of(null, 3, 2)).hasMessageContaining("--cpus=3")
        .hasMessageContaining("1..2");
    assertThatThrownBy(() -> RunCpus.of(null, 0, 2)).hasMessageContaining("--cpus=0");
    assertThatThrownBy(() -> RunCpus.of(0, null, 2)).hasMessageContaining("--cores=0")
        .hasMessageContaining(">= 1");
    RunCpus c = RunCpus.of(null, null, 2);
    assertThatThrownBy(() -> c.checkSweep(Sweep.parse("cpus=1,4"))).hasMessageContaining("--cpus=4");
    assertThatThrownBy(() -> c.checkSweep(Sweep.parse("cores=one"))).hasMessageContaining("cores=one")
        .hasMessageContaining("whole number");
    c.checkSweep(Sweep.parse("maxBundleSize=abc")); // not the driver's: passes untouched
  }

  @Test
  void thePlanRejectsACpusSweepBeyondTheMachine() {
    NexmarkCommand cmd = new NexmarkCommand();
    int n = Runtime.getRuntime().availableProcessors();
    new picocli.CommandLine(cmd).parseArgs("--runners", "weir", "--queries", "0",
        "--sweep", "cpus=1," + (n + 1));
    assertThatThrownBy(cmd::plan).hasMessageContaining("--cpus=" + (n + 1));
  }
}
