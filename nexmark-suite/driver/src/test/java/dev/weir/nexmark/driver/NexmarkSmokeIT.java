// Role: the CI smoke test of the whole suite: Q0 and the stateful Q3 (CoGroupByKey, ValueState,
// event-time timer) with a small event count on Direct, Flink and Weir, each run a real child JVM
// on its own classpath; checks result counts match across runners, each run's Beam release (Weir's
// 2.73, the others' 2.70), and that results.json validates.
// Threading: the driver runs on the test thread; child JVMs run one at a time.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class NexmarkSmokeIT {
  @TempDir Path out;

  @Test
  void q0AndQ3OnEveryRunnerAgreeAndResultsValidate() throws Exception {
    // Weir is included; its runs must only agree when they finish ok (the runner is still being
    // built, so an unsupported transform is a recorded failure, not a test failure). Direct runs
    // fewer events, as in the default command, so Flink's and Weir's JVMs run a check pass over
    // Direct's 4,000 events whose counts are judged against Direct's.
    int exit = new CommandLine(new NexmarkCommand()).execute(
        "--runners", "direct,flink,weir", "--queries", "0,3", "--events", "10000,direct=4000",
        "--warmup-events", "2000", "--warmup-seconds", "1", "--warmup-max-seconds", "0",
        "--measured-seconds", "1", "--timeout-per-run", "120",
        "--out", out.toString());
    assertThat(exit).isZero();

    Path results;
    try (Stream<Path> s = Files.list(out)) {
      results = s.filter(Files::isDirectory).findFirst().orElseThrow().resolve("results.json");
    }
    assertThat(SchemaCheck.errors(results)).isEmpty();
    assertThat(results.resolveSibling("results.csv")).exists();

    JsonNode doc = new ObjectMapper().readTree(results.toFile());
    assertThat(doc.get("runs")).hasSize(6);
    Map<Integer, Long> expected = new HashMap<>();
    Map<Integer, Long> direct = new HashMap<>();
    for (JsonNode run : doc.get("runs")) {
      if (run.get("runner").asText().equals("direct") && run.get("status").asText().equals("ok")) {
        direct.put(run.get("query").asInt(), run.get("numResults").asLong());
        assertThat(run.get("checkEvents").isNull()).as("Direct runs no check pass").isTrue();
      }
    }
    assertThat(direct).containsEntry(0, 4_000L);
    for (JsonNode run : doc.get("runs")) {
      String runner = run.get("runner").asText();
      int query = run.get("query").asInt();
      if (!runner.equals("weir")) {
        assertThat(run.get("status").asText()).as(runner + " Q" + query + ": " + run.get("firstErrorLine"))
            .isEqualTo("ok");
      }
      if (run.get("status").asText().equals("ok")) {
        // Each runner's JVM ran on its own classpath's Beam: Weir on 2.73, Direct and Flink on 2.70.
        assertThat(run.get("beamVersion").asText()).as(runner + " Q" + query + " Beam SDK")
            .startsWith(runner.equals("weir") ? "2.73." : "2.70.");
      }
      if (run.get("status").asText().equals("ok") && runner.equals("direct")) {
        assertThat(run.get("correct").asBoolean()).as("Direct Q" + query + ": " + run.get("correctness")).isTrue();
      } else if (run.get("status").asText().equals("ok")) {
        // The check pass ran over Direct's events in this JVM, wrote its own perf file, and its
        // count equals Direct's.
        assertThat(run.get("checkEvents").asLong()).isEqualTo(4_000L);
        assertThat(run.get("checkSec").asDouble()).isPositive();
        assertThat(Path.of(run.get("runDir").asText()).resolve("perf-check.json")).exists();
        assertThat(run.get("checkResults").asLong()).as(runner + " Q" + query + " check pass vs Direct")
            .isEqualTo(direct.get(query));
        assertThat(run.get("correct").asBoolean()).as(runner + " Q" + query + ": " + run.get("correctness")).isTrue();
        assertThat(run.get("correctness").asText()).contains("check pass: ");
        long n = run.get("numResults").asLong();
        Long prev = expected.putIfAbsent(query, n);
        assertThat(n).as(runner + " Q" + query + " result count vs the other runners").isEqualTo(prev == null ? n : prev);
        assertThat(run.get("eventsPerSec").asDouble()).isPositive();
        assertThat(run.get("cpuSeconds").asDouble()).isPositive();
        // Every runner's JVM ran warm-up passes first, the first over 2,000 events on its own perf
        // file, more until they took a second.
        assertThat(run.get("warmupEvents").asLong()).isGreaterThanOrEqualTo(2000L);
        assertThat(run.get("warmupPasses").asInt()).isBetween(1, 4);
        assertThat(run.get("warmupSec").asDouble()).isPositive();
        assertThat(run.get("warmupCompileShare").asDouble()).as("the last pass's JIT share").isNotNegative();
        assertThat(run.get("warmupCpuSeconds").asDouble()).isPositive();
        assertThat(Path.of(run.get("runDir").asText()).resolve("perf-warmup.json")).exists();
        assertThat(run.get("peakRssBytes").asLong()).isPositive();
        // The measured pass ran again over the same events until the passes took a second; each
        // later pass wrote its own perf file, and every pass's count is the first's.
        int passes = run.get("measuredPasses").asInt();
        assertThat(passes).isBetween(1, 20);
        assertThat(run.get("measuredSec").asDouble()).isPositive();
        if (passes > 1) {
          assertThat(Path.of(run.get("runDir").asText()).resolve("perf-measured-" + passes + ".json")).exists();
          assertThat(run.get("measuredPassResults")).hasSize(passes)
              .allSatisfy(c -> assertThat(c.asLong()).isEqualTo(n));
        }
      } else {
        assertThat(run.get("firstErrorLine").asText()).isNotBlank();
      }
    }
    assertThat(expected.get(0)).isEqualTo(10_000L);
    assertThat(doc.get("summary").get("beamVersions").get("direct").asText()).startsWith("2.70.");
  }
}
