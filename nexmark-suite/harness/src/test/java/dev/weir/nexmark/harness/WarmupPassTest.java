// Role: unit tests of the harness's warm-up pass arguments. Threading: single-threaded JUnit tests.
package dev.weir.nexmark.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class WarmupPassTest {
  private static final String[] ARGS = {
      "--query=4", "--numEvents=1000000", "--warmupEvents=200000", "--runner=dev.weir.runner.WeirRunner",
      "--stateDirectory=/r/001-weir-q4/weir-state", "--stateBackendStoragePath=file:/r/flink-state/",
      "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,weir.kafka.topic.prefix=nexmark-001,task.commit.ms=5",
      "--perfFilename=/r/001-weir-q4/perf.json"};

  @Test
  void theMeasuredPassGetsTheArgumentsUnchangedButTheHarnessOption() {
    WarmupPass w = WarmupPass.of(ARGS);
    assertThat(w.events()).isEqualTo(200_000);
    assertThat(w.measuredArgs()).containsExactly(
        "--query=4", "--numEvents=1000000", "--runner=dev.weir.runner.WeirRunner",
        "--stateDirectory=/r/001-weir-q4/weir-state", "--stateBackendStoragePath=file:/r/flink-state/",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,weir.kafka.topic.prefix=nexmark-001,task.commit.ms=5",
        "--perfFilename=/r/001-weir-q4/perf.json");
  }

  @Test
  void theWarmupPassLeavesNothingTheMeasuredPassReads() {
    assertThat(WarmupPass.of(ARGS).warmupArgs()).containsExactly(
        "--query=4", "--numEvents=200000", "--runner=dev.weir.runner.WeirRunner",
        "--stateDirectory=/r/001-weir-q4/weir-state-warmup", "--stateBackendStoragePath=file:/r/flink-state-warmup",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,weir.kafka.topic.prefix=nexmark-001-warmup,"
            + "task.commit.ms=5",
        "--perfFilename=/r/001-weir-q4/perf-warmup.json");
  }

  @Test
  void zeroOrNoOptionMeansNoWarmupPass() {
    assertThat(WarmupPass.of(new String[] {"--query=0"}).events()).isZero();
    WarmupPass zero = WarmupPass.of(new String[] {"--query=0", "--warmupEvents=0"});
    assertThat(zero.events()).isZero();
    assertThat(zero.warmupArgs()).isEmpty();
    assertThat(zero.measuredArgs()).containsExactly("--query=0");
  }

  @Test
  void aBadCountNamesTheOptionAndTheAllowedValues() {
    assertThatThrownBy(() -> WarmupPass.of(new String[] {"--warmupEvents=-5"}))
        .hasMessageContaining("--warmupEvents=-5").hasMessageContaining(">= 0");
    assertThatThrownBy(() -> WarmupPass.of(new String[] {"--warmupEvents=lots"}))
        .hasMessageContaining("--warmupEvents=lots");
  }
}
