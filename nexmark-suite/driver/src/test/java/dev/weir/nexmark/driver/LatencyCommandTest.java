// Role: unit test of `weir latency`'s argument checks, rates taken from a results file, and summary
// (no child JVM is started).
// Threading: single-threaded test; swaps System.err while a command runs.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class LatencyCommandTest {
  private final ObjectMapper json = new ObjectMapper();

  /** Runs {@code weir latency args...}; returns the exit status and what it wrote to stderr. */
  private static Object[] run(String... args) {
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    PrintStream err = System.err;
    System.setErr(new PrintStream(errors, true, StandardCharsets.UTF_8));
    try {
      int status = new CommandLine(new LatencyCommand()).execute(args);
      return new Object[] {status, errors.toString(StandardCharsets.UTF_8)};
    } finally {
      System.setErr(err);
    }
  }

  @Test
  void badArgumentsNameTheOptionAndWhatIsAllowed() {
    assertThat((String) run("--queries", "10")[1]).contains("--queries: 10 is not supported; allowed: 0-9, 11");
    assertThat((String) run("--queries", "12")[1]).contains("Q12 fires on processing time");
    assertThat((String) run("--runners", "bare")[1]).contains("--runners: bare runs no Beam pipeline");
    assertThat((String) run("--runners", "spark")[1]).contains("unknown runner 'spark'");
    assertThat((String) run("--seconds", "5")[1]).contains("--seconds=5 is out of range; allowed: 10 or more");
    assertThat((String) run("--skip-seconds", "60")[1]).contains("--skip-seconds=60 is out of range");
    assertThat((String) run("--rate-share", "1.5")[1]).contains("--rate-share=1.5 is out of range");
    assertThat(run("--repeats", "0")[0]).isEqualTo(2);
  }

  @Test
  void ratesAreTheShareOfTheSlowestChosenRunnerPerQuery() throws Exception {
    JsonNode results = json.readTree("""
        {"summary": {"rows": [
          {"query": 0, "mode": "streaming", "sweep": "", "eventsPerSec": {"flink-tuned": 333778.4, "weir": 558534.4, "direct": 1690.6}},
          {"query": 5, "mode": "streaming", "sweep": "", "eventsPerSec": {"flink-tuned": 120000.0, "weir": 290000.0}},
          {"query": 5, "mode": "batch", "sweep": "", "eventsPerSec": {"flink-tuned": 1.0, "weir": 1.0}}
        ]}}""");
    Map<Integer, Integer> rates = LatencyCommand.ratesFrom(results,
        List.of(RunnerKind.FLINK_TUNED, RunnerKind.WEIR), List.of(0, 5), 0.5);
    assertThat(rates).containsEntry(0, 166_800).containsEntry(5, 60_000);
    assertThatThrownBy(() -> LatencyCommand.ratesFrom(results, List.of(RunnerKind.FLINK), List.of(0), 0.5))
        .hasMessageContaining("no streaming events/s of flink on Q0");
    assertThat(LatencyCommand.ratesFrom(results, List.of(RunnerKind.DIRECT), List.of(0), 0.01))
        .as("never below 100 events/s").containsEntry(0, 100);
  }

  @Test
  void theSummaryGivesMediansAndSpreadOfTheRoundsThatWentWell() throws Exception {
    ArrayNode rows = (ArrayNode) json.readTree("""
        [{"runner": "weir", "query": 5, "eventsPerSec": 1000, "ok": true, "p50Ms": 10, "p99Ms": 40, "maxMs": 90, "cpuMsPerEvent": 0.1},
         {"runner": "weir", "query": 5, "eventsPerSec": 1000, "ok": true, "p50Ms": 12, "p99Ms": 60, "maxMs": 70, "cpuMsPerEvent": 0.2},
         {"runner": "weir", "query": 5, "eventsPerSec": 1000, "ok": true, "p50Ms": 11, "p99Ms": 50, "maxMs": 80, "cpuMsPerEvent": 0.3},
         {"runner": "weir", "query": 5, "eventsPerSec": 1000, "ok": false, "error": "killed"}]""");
    JsonNode s = LatencyCommand.summary(json, rows, 4).get(0);
    assertThat(s.path("okRounds").asInt()).isEqualTo(3);
    assertThat(s.path("rounds").asInt()).isEqualTo(4);
    assertThat(s.path("p99Ms").asDouble()).isEqualTo(50);
    assertThat(s.path("p99MsMin").asDouble()).isEqualTo(40);
    assertThat(s.path("p99MsMax").asDouble()).isEqualTo(60);
    assertThat(s.path("p50Ms").asDouble()).isEqualTo(11);
  }
}
