// Role: results.json written by ResultsDocument validates against results.schema.json, and the
// schema rejects documents that break its rules; correctness verdicts in batch mode; perf-file
// and log parsing. Threading: single-threaded JUnit tests.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResultsSchemaTest {
  @TempDir Path tmp;

  private ResultsDocument doc(List<RunRecord> runs) {
    return TestRuns.document(runs, List.of("direct", "flink", "weir"));
  }

  @Test
  void writtenDocumentValidatesAndCsvHasOneLinePerRun() throws Exception {
    ResultsDocument d = doc(List.of(TestRuns.ok("direct", 0, 4000, 50_000),
        TestRuns.ok("flink", 0, 40_000, 50_000), TestRuns.failed("weir", 0),
        TestRuns.timeout("direct", 7)));
    d.writeJson(tmp);
    d.writeCsv(tmp);
    assertThat(SchemaCheck.errors(tmp.resolve("results.json"))).isEmpty();
    assertThat(Files.readAllLines(tmp.resolve("results.csv"))).hasSize(5);
    JsonNode n = new ObjectMapper().readTree(tmp.resolve("results.json").toFile());
    assertThat(n.get("schemaVersion").asText()).isEqualTo(ResultsDocument.SCHEMA_VERSION);
    assertThat(n.get("runs").get(2).get("correct").isNull()).isTrue();
  }

  @Test
  void schemaRejectsBrokenRuns() throws Exception {
    ResultsDocument d = doc(List.of(TestRuns.ok("flink", 0, 40_000, 10)));
    ObjectMapper m = new ObjectMapper();
    ObjectNode n = m.valueToTree(d);
    ((ObjectNode) n.get("runs").get(0)).put("status", "crashed");
    assertThat(SchemaCheck.errors(n)).isNotEmpty();

    ObjectNode okWithoutRate = m.valueToTree(d);
    ((ObjectNode) okWithoutRate.get("runs").get(0)).putNull("eventsPerSec");
    assertThat(SchemaCheck.errors(okWithoutRate)).isNotEmpty();

    ObjectNode failedWithoutError = m.valueToTree(doc(List.of(TestRuns.failed("weir", 3))));
    ((ObjectNode) failedWithoutError.get("runs").get(0)).putNull("firstErrorLine");
    assertThat(SchemaCheck.errors(failedWithoutError)).isNotEmpty();

    ObjectNode noVersion = m.valueToTree(d);
    noVersion.remove("schemaVersion");
    assertThat(SchemaCheck.errors(noVersion)).isNotEmpty();
  }

  @Test
  void resultCountsAcrossRunners_decideCorrectness_perMode() {
    RunRecord d = TestRuns.ok("direct", 6, 1000, 4295);
    RunRecord f = TestRuns.ok("flink", 6, 1000, 802);
    RunRecord w = TestRuns.ok("weir", 6, 1000, 4295);
    RunRecord d0 = TestRuns.ok("direct", 0, 1000, 50);
    RunRecord f0 = TestRuns.ok("flink", 0, 1000, 50);
    RunRecord s = TestRuns.ok("flink", 1, 1000, 50); // streaming, alone in its mode: not judged
    RunRecord sd = TestRuns.ok("direct", 5, 1000, 6);
    RunRecord sw = TestRuns.ok("weir", 5, 1000, 6);
    RunRecord sf = TestRuns.ok("flink", 5, 1000, 7);
    RunRecord d10 = TestRuns.ok("direct", 10, 1000, 1); // Q10: one result per shard file
    RunRecord w10 = TestRuns.ok("weir", 10, 1000, 2);
    for (RunRecord r : List.of(d, f, w, d0, f0, d10, w10)) {
      r.mode = "batch";
    }
    Correctness.compareCounts(List.of(d, f, w, d0, f0, s, d10, w10, sd, sw, sf));
    assertThat(d10.correct).isNull();
    assertThat(w10.correct).isNull();
    assertThat(w10.correctness).contains("Q10 writes no files").contains("per-shard panes");
    assertThat(d.correct).isTrue();
    assertThat(w.correct).isTrue();
    assertThat(f.correct).isFalse();
    assertThat(f.correctness).contains("differ").contains("flink=802");
    assertThat(d0.correct).isTrue();
    assertThat(f0.correct).isTrue();
    assertThat(s.correct).isNull();
    assertThat(s.correctness).startsWith("none");
    assertThat(sd.correct).isTrue();
    assertThat(sw.correct).isTrue();
    assertThat(sf.correct).isFalse();
    assertThat(sf.correctness).startsWith("streaming result counts differ");
  }

  @Test
  void readsNexmarksAppendedPerfFileAndFirstErrorLine() throws Exception {
    Path perf = tmp.resolve("perf.json");
    Files.writeString(perf, "\n# 2026-11-21T06:44:51.383Z\n# query:X\n{\"debug\":true,\"numEvents\":2000}\n"
        + "{\"runtimeSec\":2.0,\"numEvents\":2000,\"eventsPerSec\":1000.0,\"numResults\":-1,\"errors\":[]}\n");
    ChildRun cr = new ChildRun(new SuiteLayout(tmp), 2, 10, List.of(), false, null);
    JsonNode p = cr.readPerf(perf);
    assertThat(p.get("eventsPerSec").asDouble()).isEqualTo(1000.0);

    Path log = tmp.resolve("output.log");
    Files.writeString(log, "starting\n"
        + "[pool-1-thread-1] ERROR org.apache.beam.sdk.testutils.metrics.MetricsReader - Failed to get metric fatal, from namespace Query3\n"
        + "Exception in thread \"main\" java.lang.IllegalStateException: boom\n\tat x.y(Z.java:1)\n");
    assertThat(ChildRun.firstErrorLine(log)).isEqualTo("Exception in thread \"main\" java.lang.IllegalStateException: boom");
  }

  @Test
  void optionsMergeLaterWins() {
    ChildRun cr = new ChildRun(new SuiteLayout(tmp), 2, 10, List.of("--streamTimeout=30", "--fasterCopy"), false, null);
    RunSpec spec = new RunSpec(RunnerKind.FLINK, 3, "batch", 1000, java.util.Map.of("maxBundleSize", "10"), 1);
    var o = cr.options(spec, tmp);
    assertThat(o).containsEntry("streamTimeout", "30").containsEntry("maxBundleSize", "10")
        .containsEntry("parallelism", "2").containsEntry("streaming", "false")
        .containsEntry("stateBackend", "rocksdb").containsKey("fasterCopy");
    assertThat(o.get("perfFilename")).endsWith("perf.json");
  }
}
