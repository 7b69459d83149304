// Role: unit tests of the no-delay pass's option and arguments.
// Threading: single-threaded JUnit tests.
package dev.weir.nexmark.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class NoDelayPassTest {
  private static final String[] ARGS = {"--query=6", "--noDelayPass=true", "--numEvents=500000",
      "--probDelayedEvent=0.2", "--stateDirectory=/r/006-weir-q6/weir-state", "--perfFilename=/r/006-weir-q6/perf.json"};

  @Test
  void theOptionIsTakenOutAndThePassRunsTheSameEventsWithoutDelayedEventsInLocationsOfItsOwn() {
    NoDelayPass p = NoDelayPass.of(ARGS);
    assertThat(p.enabled()).isTrue();
    assertThat(p.args()).doesNotContain("--noDelayPass=true").hasSize(ARGS.length - 1);
    assertThat(p.passArgs(p.args())).containsExactly("--query=6", "--numEvents=500000",
        "--stateDirectory=/r/006-weir-q6/weir-state-nodelay", "--perfFilename=/r/006-weir-q6/perf-nodelay.json",
        "--probDelayedEvent=0");
  }

  @Test
  void theBatchReferencePassRunsTheSameEventsInBatchModeWithoutStreamingOnlyOptions() {
    String[] streaming = {"--query=9", "--numEvents=500000", "--streaming=true", "--checkpointingInterval=10000",
        "--checkpointingIntervalMs=10000", "--shutdownSourcesAfterIdleMs=0", "--probDelayedEvent=0.1",
        "--stateDirectory=/r/009-weir-q9/weir-state", "--perfFilename=/r/009-weir-q9/perf.json"};
    assertThat(NoDelayPass.of(streaming).batchPassArgs(streaming)).containsExactly("--query=9", "--numEvents=500000",
        "--stateDirectory=/r/009-weir-q9/weir-state-nodelay-batch", "--perfFilename=/r/009-weir-q9/perf-nodelay-batch.json",
        "--streaming=false", "--probDelayedEvent=0");
  }

  @Test
  void withoutTheOptionNothingRunsAndABadValueIsNamed() throws Exception {
    List<String> ran = new ArrayList<>();
    assertThat(NoDelayPass.of(new String[] {"--query=6"}).run(10, () -> ran.add("pass"))).isNull();
    assertThat(ran).isEmpty();
    assertThat(NoDelayPass.of(ARGS).run(500_000, () -> ran.add("pass")).events()).isEqualTo(500_000);
    assertThat(ran).containsExactly("pass");
    assertThatThrownBy(() -> NoDelayPass.of(new String[] {"--noDelayPass=yes"}))
        .hasMessageContaining("--noDelayPass=yes").hasMessageContaining("true, false");
  }
}
