// Role: unit tests of the harness's check pass: its option, its arguments (Direct's events, its own
// locations) and its time counted toward the warm-up. Threading: single-threaded JUnit tests.
package dev.weir.nexmark.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CheckPassTest {
  private static final String[] ARGS = {
      "--query=3", "--checkEvents=10000", "--numEvents=500000", "--warmupEvents=300000",
      "--stateDirectory=/r/002-weir-q3/weir-state", "--stateBackendStoragePath=file:/r/flink-state/",
      "--samzaConfigOverride=weir.kafka.topic.prefix=nexmark-002,task.commit.ms=5",
      "--perfFilename=/r/002-weir-q3/perf.json"};

  @Test
  void theOptionIsTakenOutAndEveryOtherArgumentKept() {
    CheckPass c = CheckPass.of(ARGS);
    assertThat(c.events()).isEqualTo(10_000);
    assertThat(c.args()).doesNotContain("--checkEvents=10000").hasSize(ARGS.length - 1)
        .contains("--warmupEvents=300000", "--numEvents=500000");
  }

  @Test
  void theCheckPassRunsDirectsEventsInLocationsOfItsOwn() {
    CheckPass c = CheckPass.of(ARGS);
    String[] nexmark = WarmupPass.of(MeasuredPasses.of(c.args()).args()).measuredArgs();
    assertThat(c.passArgs(nexmark)).containsExactly(
        "--query=3", "--numEvents=10000", "--stateDirectory=/r/002-weir-q3/weir-state-check",
        "--stateBackendStoragePath=file:/r/flink-state-check",
        "--samzaConfigOverride=weir.kafka.topic.prefix=nexmark-002-check,task.commit.ms=5",
        "--perfFilename=/r/002-weir-q3/perf-check.json");
  }

  @Test
  void zeroOrNoOptionRunsNoCheckPass() throws Exception {
    List<String> ran = new ArrayList<>();
    assertThat(CheckPass.of(new String[] {"--query=0"}).run(() -> ran.add("pass"))).isNull();
    assertThat(CheckPass.of(new String[] {"--query=0", "--checkEvents=0"}).run(() -> ran.add("pass"))).isNull();
    assertThat(ran).isEmpty();
    PassStats stats = CheckPass.of(ARGS).run(() -> ran.add("pass"));
    assertThat(ran).containsExactly("pass");
    assertThat(stats.events()).isEqualTo(10_000);
  }

  @Test
  void aBadCountNamesTheOptionAndTheAllowedValues() {
    assertThatThrownBy(() -> CheckPass.of(new String[] {"--checkEvents=-5"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--checkEvents=-5").hasMessageContaining("whole number >= 0");
    assertThatThrownBy(() -> CheckPass.of(new String[] {"--checkEvents=ten"}))
        .hasMessageContaining("--checkEvents=ten");
  }

  @Test
  void theCheckPassTimeCountsTowardTheWarmupFloor() throws Exception {
    String[] args = {"--query=0", "--warmupEvents=1000", "--warmupSeconds=2"};
    List<Long> fresh = new ArrayList<>();
    WarmupPass.of(args).run(0, (pass, events) -> fresh.add(events));
    // instant passes never reach 2 s: the floor's most passes run
    assertThat(fresh).hasSize(WarmupPass.MAX_PASSES);
    List<Long> afterCheck = new ArrayList<>();
    WarmupPass.Done done = WarmupPass.of(args).run(2.5, (pass, events) -> afterCheck.add(events));
    // 2.5 s already spent on the same query: the floor is met after the first pass
    assertThat(afterCheck).containsExactly(1000L);
    assertThat(done.seconds()).isLessThan(2.0); // the warm-up's own passes only
  }
}
