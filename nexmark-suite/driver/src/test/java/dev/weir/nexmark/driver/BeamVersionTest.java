// Role: unit tests of the Beam release each run records: read from the harness's facts, written to
// results.json (validated by the schema) and results.csv, gathered per runner in the summary, and
// stated in the console table. Threading: single-threaded JUnit tests.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BeamVersionTest {
  private static final List<String> ORDER = List.of("direct", "flink", "weir");

  @TempDir Path tmp;

  private static List<RunRecord> runs() {
    return List.of(TestRuns.ok("direct", 0, 4_000, 50_000), TestRuns.ok("flink", 0, 40_000, 50_000),
        TestRuns.ok("weir", 0, 120_000, 50_000), TestRuns.failed("weir", 3));
  }

  private static ResultsDocument doc(List<RunRecord> runs) {
    return TestRuns.document(runs, ORDER);
  }

  @Test
  void theRunReadsItsBeamReleaseFromTheHarnessFacts() throws Exception {
    ChildRun cr = new ChildRun(new SuiteLayout(tmp), 2, 10, List.of(), false, null);
    Path facts = tmp.resolve("harness.json");
    Files.writeString(facts, "{\"cpuSeconds\":1.5,\"beamVersion\":\"2.73.0\",\"error\":null}");
    RunRecord r = new RunRecord();
    cr.readFacts(r, facts);
    assertThat(r.beamVersion).isEqualTo("2.73.0");

    // A harness from before the field, or a child that died before writing its facts.
    Files.writeString(facts, "{\"cpuSeconds\":1.5,\"error\":null}");
    RunRecord older = new RunRecord();
    cr.readFacts(older, facts);
    assertThat(older.beamVersion).isNull();
    RunRecord none = new RunRecord();
    cr.readFacts(none, tmp.resolve("missing.json"));
    assertThat(none.beamVersion).isNull();
  }

  @Test
  void resultsJsonAndCsvCarryEachRunsBeamRelease_andTheSchemaChecksIt() throws Exception {
    ResultsDocument d = doc(runs());
    d.writeJson(tmp);
    d.writeCsv(tmp);
    assertThat(SchemaCheck.errors(tmp.resolve("results.json"))).isEmpty();
    JsonNode n = new ObjectMapper().readTree(tmp.resolve("results.json").toFile());
    assertThat(n.get("schemaVersion").asText()).isEqualTo(ResultsDocument.SCHEMA_VERSION);
    assertThat(n.get("runs").get(0).get("beamVersion").asText()).isEqualTo("2.70.0");
    assertThat(n.get("runs").get(2).get("beamVersion").asText()).isEqualTo("2.73.0");
    assertThat(n.get("runs").get(3).get("beamVersion").isNull()).as("the failed run said nothing").isTrue();
    assertThat(n.get("summary").get("beamVersions").toString())
        .isEqualTo("{\"direct\":\"2.70.0\",\"flink\":\"2.70.0\",\"weir\":\"2.73.0\"}");

    List<String> csv = Files.readAllLines(tmp.resolve("results.csv"));
    assertThat(csv.get(0)).endsWith(",warmupEvents,beamVersion");
    assertThat(csv.get(1)).startsWith("direct,").endsWith(",2.70.0");
    assertThat(csv.get(3)).startsWith("weir,").endsWith(",2.73.0");
    assertThat(csv.get(4)).startsWith("weir,").endsWith(",");

    ObjectMapper m = new ObjectMapper();
    ObjectNode notAString = m.valueToTree(d);
    ((ObjectNode) notAString.get("runs").get(0)).put("beamVersion", 2.73);
    assertThat(SchemaCheck.errors(notAString)).isNotEmpty();
    ObjectNode notARelease = m.valueToTree(d);
    ((ObjectNode) notARelease.get("runs").get(0)).put("beamVersion", "latest");
    assertThat(SchemaCheck.errors(notARelease)).isNotEmpty();
  }

  @Test
  void theTableNamesEachRunnersBeamRelease_andWhyWeirsIsNewer() {
    Summary s = Summary.of(runs(), ORDER);
    assertThat(s.beamVersions).containsExactly(Map.entry("direct", "2.70.0"), Map.entry("flink", "2.70.0"),
        Map.entry("weir", "2.73.0"));
    String table = s.table(ORDER);
    assertThat(table).contains("Beam SDK per runner: direct 2.70.0, flink 2.70.0, weir 2.73.0")
        .contains("Weir runs on Beam 2.73 while Direct and Flink run on Beam 2.70, the newest Beam whose Flink "
            + "runner is on Maven Central.");
    assertThat(s.beamNote).startsWith("Weir runs on Beam 2.73 while Direct and Flink run on Beam 2.70");
  }

  @Test
  void theNoteIsOnlyForAWeirNewerThanItsPeers() {
    assertThat(Summary.beamNote(Map.of("weir", "2.73.0", "direct", "2.70.0")))
        .isEqualTo("Weir runs on Beam 2.73 while Direct runs on Beam 2.70, the newest Beam whose Flink runner is on Maven Central.");
    assertThat(Summary.beamNote(Map.of("weir", "2.70.0", "direct", "2.70.0", "flink", "2.70.0"))).isNull();
    assertThat(Summary.beamNote(Map.of("weir", "2.70.0", "direct", "2.73.0"))).isNull();
    assertThat(Summary.beamNote(Map.of("weir", "2.73.0"))).isNull();
    assertThat(Summary.beamNote(Map.of("direct", "2.70.0", "flink", "2.70.0"))).isNull();
    // A Weir on 2.100 is newer than one on 2.73 (numbers, not strings).
    assertThat(Summary.beamNote(Map.of("weir", "2.100.0", "flink", "2.73.0"))).startsWith("Weir runs on Beam 2.100 ");
    assertThat(Summary.beamNote(Map.of("weir", "2.73.0", "direct", "2.70.0", "flink-tuned", "2.70.0", "flink", "2.70.0")))
        .isEqualTo("Weir runs on Beam 2.73 while Direct and Flink run on Beam 2.70, the newest Beam whose Flink "
            + "runner is on Maven Central.");
    assertThat(Summary.minor("2.73.0")).isEqualTo("2.73");
    assertThat(Summary.minor("2.73.0-SNAPSHOT")).isEqualTo("2.73");
    assertThat(Summary.minor("2.70.0, 2.73.0")).isNull();
    assertThat(Summary.minor(null)).isNull();
  }

  @Test
  void withoutVersionsTheTableSaysNothingAboutBeam() {
    RunRecord w = TestRuns.ok("weir", 0, 120_000, 50_000);
    w.beamVersion = null;
    Summary s = Summary.of(List.of(w), List.of("weir"));
    assertThat(s.beamVersions).isEmpty();
    assertThat(s.table(List.of("weir"))).doesNotContain("Beam");
  }
}
