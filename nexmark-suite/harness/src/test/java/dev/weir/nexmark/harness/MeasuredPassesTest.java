// Role: unit tests of the harness's measured passes. Threading: single-threaded JUnit tests.
package dev.weir.nexmark.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MeasuredPassesTest {
  private static final String[] ARGS = {
      "--query=4", "--numEvents=500000", "--measuredSeconds=3", "--runner=dev.weir.runner.WeirRunner",
      "--stateDirectory=/r/001-weir-q4/weir-state", "--stateBackendStoragePath=file:/r/flink-state/",
      "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,weir.kafka.topic.prefix=nexmark-001,task.commit.ms=5",
      "--perfFilename=/r/001-weir-q4/perf.json"};

  @Test
  void theFirstPassGetsTheArgumentsUnchangedButTheHarnessOption() {
    MeasuredPasses m = MeasuredPasses.of(ARGS);
    assertThat(m.minSeconds()).isEqualTo(3);
    assertThat(m.passArgs(1)).doesNotContain("--measuredSeconds=3").hasSize(ARGS.length - 1)
        .contains("--numEvents=500000", "--perfFilename=/r/001-weir-q4/perf.json");
    assertThat(MeasuredPasses.numEvents(m.args())).isEqualTo(500_000);
  }

  @Test
  void laterPassesRunTheSameEventsInLocationsOfTheirOwn() {
    String[] second = MeasuredPasses.of(ARGS).passArgs(2);
    assertThat(second).contains("--numEvents=500000", "--stateDirectory=/r/001-weir-q4/weir-state-measured-2",
        "--stateBackendStoragePath=file:/r/flink-state-measured-2", "--perfFilename=/r/001-weir-q4/perf-measured-2.json");
    assertThat(second[5]).contains("weir.kafka.topic.prefix=nexmark-001-measured-2,");
    assertThat(MeasuredPasses.perfFilename("/r/perf.json", 1)).isEqualTo("/r/perf.json");
    assertThat(MeasuredPasses.perfFilename("/r/perf.json", 3)).isEqualTo("/r/perf-measured-3.json");
  }

  @Test
  void withoutSecondsOnePassRuns() throws Exception {
    List<Integer> passes = new ArrayList<>();
    List<PassStats> done = MeasuredPasses.of(new String[] {"--query=0"}).run(1000, passes::add);
    assertThat(passes).containsExactly(1);
    assertThat(done).hasSize(1);
    assertThat(done.get(0).events()).isEqualTo(1000);
  }

  @Test
  void passesRepeatUntilTheyTookTheLeastDurationTogether() throws Exception {
    List<Integer> passes = new ArrayList<>();
    List<PassStats> done = MeasuredPasses.of(new String[] {"--measuredSeconds=1"}).run(1000, pass -> {
      passes.add(pass);
      Thread.sleep(300);
    });
    assertThat(passes).containsExactly(1, 2, 3, 4);
    assertThat(done.stream().mapToDouble(PassStats::seconds).sum()).isGreaterThanOrEqualTo(1.0);
    assertThat(done).allSatisfy(p -> assertThat(p.events()).isEqualTo(1000));
  }

  @Test
  void aPassThatFailsEndsThePasses() {
    List<Integer> passes = new ArrayList<>();
    assertThatThrownBy(() -> MeasuredPasses.of(new String[] {"--measuredSeconds=60"}).run(1000, pass -> {
      passes.add(pass);
      if (pass == 2) {
        throw new IllegalStateException("pass 2 failed");
      }
    })).hasMessage("pass 2 failed");
    assertThat(passes).containsExactly(1, 2);
  }

  @Test
  void instantPassesStopAtTheMostPasses() throws Exception {
    List<PassStats> done = MeasuredPasses.of(new String[] {"--measuredSeconds=3600"}).run(10, pass -> { });
    assertThat(done).hasSize(MeasuredPasses.MAX_PASSES);
  }

  @Test
  void aBadDurationNamesTheOptionAndTheAllowedValues() {
    assertThatThrownBy(() -> MeasuredPasses.of(new String[] {"--measuredSeconds=-2"}))
        .hasMessageContaining("--measuredSeconds=-2").hasMessageContaining("seconds >= 0");
    assertThatThrownBy(() -> MeasuredPasses.of(new String[] {"--measuredSeconds=long"}))
        .hasMessageContaining("--measuredSeconds=long");
  }
}
