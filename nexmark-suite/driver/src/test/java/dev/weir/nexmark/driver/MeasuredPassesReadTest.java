// Role: unit tests of how the driver reads a run's measured passes (perf-measured-k.json beside
// perf.json, and the harness's measuredPassStats) and passes --measured-seconds to the child.
// Threading: single-threaded JUnit tests.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MeasuredPassesReadTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;

  private static JsonNode perf(long events, double runtimeSec, long results) throws Exception {
    return JSON.readTree(String.format(java.util.Locale.ROOT,
        "{\"numEvents\":%d,\"runtimeSec\":%f,\"eventsPerSec\":%f,\"numResults\":%d,\"resultsPerSec\":%f}",
        events, runtimeSec, events / runtimeSec, results, results / runtimeSec));
  }

  @Test
  void throughputIsAllPassesEventsOverAllTheirRuntime() throws Exception {
    RunRecord r = new RunRecord();
    r.numResults = 854L;
    ChildRun.sumPasses(r, List.of(perf(500_000, 0.5, 854), perf(500_000, 0.25, 854), perf(500_000, 0.25, 854)));
    assertThat(r.eventsPerSec).isEqualTo(1_500_000.0, org.assertj.core.data.Offset.offset(1e-6));
    assertThat(r.runtimeSec).isEqualTo(1.0, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(r.measuredPasses).isEqualTo(3);
    assertThat(r.measuredPassResults).containsExactly(854L, 854L, 854L);
    // The result rate is the first pass's, over the count numResults holds.
    assertThat(r.resultsPerSec).isEqualTo(1708.0, org.assertj.core.data.Offset.offset(1e-6));
  }

  @Test
  void onePassIsReadAsItWasWritten() throws Exception {
    RunRecord r = new RunRecord();
    r.numResults = 10L;
    ChildRun.sumPasses(r, List.of(perf(1_000, 2.0, 10)));
    assertThat(r.eventsPerSec).isEqualTo(500.0, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(r.measuredPasses).isEqualTo(1);
    assertThat(r.measuredPassResults).isNull();
  }

  @Test
  void aPassWithoutThroughputLeavesNone() throws Exception {
    RunRecord r = new RunRecord();
    r.numResults = 10L;
    ChildRun.sumPasses(r, List.of(perf(1_000, 2.0, 10), JSON.readTree("{\"runtimeSec\":-1,\"eventsPerSec\":-1}")));
    assertThat(r.eventsPerSec).isNull();
    assertThat(r.runtimeSec).isNull();
  }

  @Test
  void laterPassesAreReadInPassOrder() throws Exception {
    for (String name : List.of("perf.json", "perf-warmup.json", "perf-measured-10.json", "perf-measured-2.json",
        "perf-measured-3.json")) {
      Files.writeString(tmp.resolve(name), "{}");
    }
    assertThat(ChildRun.measuredPerfFiles(tmp)).extracting(p -> p.getFileName().toString())
        .containsExactly("perf-measured-2.json", "perf-measured-3.json", "perf-measured-10.json");
  }

  @Test
  void theChildIsToldItsMeasuredSecondsOnlyWhenAboveZero() {
    RunSpec timed = new RunSpec(RunnerKind.WEIR, 0, "streaming", 10_000, Map.of(), 1, 2_000, 10, 30, 5);
    RunSpec once = new RunSpec(RunnerKind.WEIR, 0, "streaming", 10_000, Map.of(), 1, 2_000, 10, 30, 0);
    ChildRun cr = new ChildRun(new SuiteLayout(tmp), 2, 10, List.of(), false, null);
    assertThat(cr.options(timed, tmp.resolve("run"))).containsEntry("measuredSeconds", "5")
        .containsEntry("warmupMaxSeconds", "30");
    assertThat(cr.options(once, tmp.resolve("run"))).doesNotContainKey("measuredSeconds");
  }
}
