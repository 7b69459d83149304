// Role: unit tests of the harness's warm-up pass arguments. Threading: single-threaded JUnit tests.
package dev.weir.nexmark.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
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
  void laterPassesKeepTheirLocationsApart() {
    String[] third = WarmupPass.of(ARGS).warmupArgs(3, 5_000);
    assertThat(third).contains("--numEvents=5000", "--stateDirectory=/r/001-weir-q4/weir-state-warmup-3",
        "--stateBackendStoragePath=file:/r/flink-state-warmup-3", "--perfFilename=/r/001-weir-q4/perf-warmup-3.json");
    assertThat(third[5]).contains("weir.kafka.topic.prefix=nexmark-001-warmup-3,");
    assertThat(WarmupPass.of(ARGS).warmupArgs(1, 200_000)).containsExactly(WarmupPass.of(ARGS).warmupArgs());
  }

  @Test
  void withoutSecondsOnePassRuns() throws Exception {
    List<Long> passes = new ArrayList<>();
    WarmupPass.Done done = WarmupPass.of(ARGS).run((pass, events) -> passes.add(events));
    assertThat(passes).containsExactly(200_000L);
    assertThat(done.passes()).isEqualTo(1);
    assertThat(done.events()).isEqualTo(200_000L);
  }

  @Test
  void passesContinueUntilTheLeastDurationIsReached() throws Exception {
    String[] args = {"--query=0", "--warmupEvents=1000", "--warmupSeconds=1"};
    List<Long> passes = new ArrayList<>();
    WarmupPass.Done done = WarmupPass.of(args).run((pass, events) -> {
      passes.add(events);
      Thread.sleep(300);
    });
    assertThat(done.seconds()).isGreaterThanOrEqualTo(0.6);
    assertThat(passes).hasSizeBetween(2, WarmupPass.MAX_PASSES).startsWith(1000L);
    assertThat(done.events()).isEqualTo(passes.stream().mapToLong(Long::longValue).sum());
  }

  private static PassStats pass(long events, double seconds, double compileSeconds) {
    return new PassStats(events, seconds, compileSeconds);
  }

  @Test
  void theNextPassFillsTheMissingSecondsAtTheLastRateWithinBounds() {
    // 300,000 events in 3 s, 10 s wanted: 7 s more at 100,000 events/s.
    assertThat(WarmupPass.nextPassEvents(300_000, 10, 0, 1, pass(300_000, 3.0, 1.0), 3.0)).isEqualTo(700_000);
    // Long enough already, or out of passes: done.
    assertThat(WarmupPass.nextPassEvents(300_000, 10, 0, 1, pass(300_000, 12.0, 1.0), 12.0)).isZero();
    assertThat(WarmupPass.nextPassEvents(300_000, 10, 0, WarmupPass.MAX_PASSES, pass(1_000, 0.1, 0), 1.0)).isZero();
    // Bounded above by a multiple of the first pass, below by a least pass.
    assertThat(WarmupPass.nextPassEvents(1_000, 100, 0, 1, pass(1_000, 0.001, 0), 0.001))
        .isEqualTo(1_000 * WarmupPass.MAX_PASS_GROWTH);
    assertThat(WarmupPass.nextPassEvents(1_000, 10, 0, 1, pass(10, 9.99, 0), 9.99)).isEqualTo(WarmupPass.MIN_PASS_EVENTS);
  }

  @Test
  void afterTheFloorPassesGoOnWhileTheCompilersAreBusyUpToTheMostSeconds() {
    double busy = WarmupPass.SETTLED_COMPILE_SHARE + 0.2;
    double settled = WarmupPass.SETTLED_COMPILE_SHARE / 2;
    // 12 s spent (past the 10-s floor), the last 4-s pass compiled 30% of the time: a 4-s pass more.
    assertThat(WarmupPass.nextPassEvents(300_000, 10, 40, 2, pass(400_000, 4.0, 4.0 * busy), 12.0))
        .isEqualTo((long) (100_000 * WarmupPass.SETTLING_PASS_SECONDS));
    // Settled: done.
    assertThat(WarmupPass.nextPassEvents(300_000, 10, 40, 2, pass(400_000, 4.0, 4.0 * settled), 12.0)).isZero();
    // Busy, but only 2 s left of the most: a 2-s pass; none left, or out of passes: done.
    assertThat(WarmupPass.nextPassEvents(300_000, 10, 40, 5, pass(400_000, 4.0, 4.0 * busy), 38.0))
        .isEqualTo(200_000);
    assertThat(WarmupPass.nextPassEvents(300_000, 10, 40, 5, pass(400_000, 4.0, 4.0 * busy), 40.0)).isZero();
    // Less than the shortest settling pass left: done rather than a pass of mostly start-up.
    assertThat(WarmupPass.nextPassEvents(300_000, 10, 40, 5, pass(400_000, 4.0, 4.0 * busy),
        40.0 - WarmupPass.MIN_SETTLING_PASS_SECONDS + 0.5)).isZero();
    assertThat(WarmupPass.nextPassEvents(300_000, 10, 40, WarmupPass.MAX_PASSES + WarmupPass.MAX_SETTLING_PASSES,
        pass(400_000, 4.0, 4.0 * busy), 30.0)).isZero();
    // Without a most above the floor there is no settling, and an unknown compile time never asks for more.
    assertThat(WarmupPass.nextPassEvents(300_000, 10, 10, 2, pass(400_000, 4.0, 4.0 * busy), 12.0)).isZero();
    assertThat(WarmupPass.nextPassEvents(300_000, 10, 40, 2, pass(400_000, 4.0, -1), 12.0)).isZero();
  }

  @Test
  void eachPassIsRecordedWithItsCompileTime() throws Exception {
    String[] args = {"--query=0", "--warmupEvents=1000", "--warmupSeconds=0", "--warmupMaxSeconds=0"};
    WarmupPass warmup = WarmupPass.of(args);
    assertThat(warmup.maxSeconds()).isZero();
    assertThat(warmup.measuredArgs()).containsExactly("--query=0");

    WarmupPass.Done done = warmup.run((pass, events) -> { });
    assertThat(done.each()).hasSize(1);
    assertThat(done.each().get(0).events()).isEqualTo(1000L);
    // As the process facts write it (Jackson), with the names the driver reads.
    JsonNode written = new ObjectMapper().valueToTree(done.each());
    assertThat(written.get(0).get("events").asLong()).isEqualTo(1000L);
    assertThat(written.get(0).has("seconds")).isTrue();
    assertThat(written.get(0).has("compileSeconds")).isTrue();
  }

  @Test
  void aBadCountNamesTheOptionAndTheAllowedValues() {
    assertThatThrownBy(() -> WarmupPass.of(new String[] {"--warmupEvents=-5"}))
        .hasMessageContaining("--warmupEvents=-5").hasMessageContaining(">= 0");
    assertThatThrownBy(() -> WarmupPass.of(new String[] {"--warmupEvents=lots"}))
        .hasMessageContaining("--warmupEvents=lots");
    assertThatThrownBy(() -> WarmupPass.of(new String[] {"--warmupSeconds=-1"}))
        .hasMessageContaining("--warmupSeconds=-1").hasMessageContaining("seconds >= 0");
    assertThatThrownBy(() -> WarmupPass.of(new String[] {"--warmupMaxSeconds=soon"}))
        .hasMessageContaining("--warmupMaxSeconds=soon").hasMessageContaining("seconds >= 0");
  }
}
