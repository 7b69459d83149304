package dev.weir.dashboards;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/** Builds results.json files shaped like the Nexmark driver's (schema 1.x) for tests. */
final class SampleResults {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ObjectNode root = JSON.createObjectNode();
  private final ArrayNode runs;

  SampleResults(String startedAt) {
    root.put("schemaVersion", "1.0.0");
    root.put("startedAt", startedAt);
    ObjectNode settings = root.putObject("settings");
    settings.put("events", 100000).put("parallelism", 2).put("repeat", 1).put("timeoutPerRunSec", 300);
    settings.putArray("runners").add("weir").add("flink").add("direct");
    root.putObject("machine").put("availableProcessors", 2).put("cpuModel", "Test CPU <b>").put("totalMemoryBytes", 24L << 30)
        .put("loadAverageStart", 0.5).put("loadAverageEnd", 1.5);
    root.putObject("jvm").put("version", "17.0.15");
    root.putObject("runnerConfigs").putObject("flink").putObject("options").put("stateBackend", "rocksdb");
    runs = root.putArray("runs");
  }

  SampleResults run(String runner, int query, String mode, String status, Double eventsPerSec, Long numResults,
      Boolean correct) {
    return run(runner, query, mode, status, eventsPerSec, numResults, correct, Map.of());
  }

  SampleResults run(String runner, int query, String mode, String status, Double eventsPerSec, Long numResults,
      Boolean correct, Map<String, String> sweep) {
    ObjectNode r = runs.addObject();
    r.put("runner", runner).put("query", query).put("queryName", "QUERY_" + query).put("mode", mode).put("status", status);
    if (eventsPerSec == null) {
      r.putNull("eventsPerSec");
    } else {
      r.put("eventsPerSec", eventsPerSec);
    }
    if (numResults == null) {
      r.putNull("numResults");
    } else {
      r.put("numResults", numResults);
    }
    if (correct == null) {
      r.putNull("correct");
    } else {
      r.put("correct", correct);
    }
    r.put("events", 500_000).put("measuredPasses", 2).put("runtimeSec", 10.0).put("cpuSeconds", 15.5).put("peakRssBytes", 512L << 20).put("gcTimeMs", 120);
    r.put("firstErrorLine", "ok".equals(status) ? null : "java.lang.IllegalStateException: <boom> & bust");
    r.put("runDir", "runs/" + runner + "-q" + query + "-" + mode);
    ObjectNode s = r.putObject("sweep");
    sweep.forEach(s::put);
    return this;
  }

  /** 15 queries x {weir, flink, direct}, streaming; weir = scale x flink, direct = flink / 10. */
  static SampleResults fullComparison(String startedAt, double scale) {
    SampleResults s = new SampleResults(startedAt);
    for (int q = 0; q <= 14; q++) {
      double flink = 20_000 + 5_000 * q;
      s.run("weir", q, "streaming", "ok", flink * scale, 1000L + q, q % 3 == 0 ? Boolean.TRUE : null);
      s.run("flink", q, "streaming", "ok", flink, 1000L + q, q % 3 == 0 ? Boolean.TRUE : null);
      if (q == 7) {
        s.run("direct", q, "streaming", "timeout", null, null, null);
      } else {
        s.run("direct", q, "streaming", "ok", flink / 10, 1000L + q, null);
      }
    }
    return s;
  }

  /** Sets the {@code correctness} text of the last run added. */
  SampleResults correctness(String text) {
    ((ObjectNode) runs.get(runs.size() - 1)).put("correctness", text);
    return this;
  }

  /** Sets {@code summary.beamNote} (results schema 1.8.0), as the driver writes it. */
  SampleResults beamNote(String note) {
    root.withObject("/summary").put("beamNote", note);
    return this;
  }

  /**
   * Sets the {@code beamVersion} (results schema 1.8.0) of every run of {@code runner} added so far,
   * and the runner's entry in {@code summary.beamVersions}, as the driver writes them.
   */
  SampleResults beamVersion(String runner, String version) {
    root.withObject("/summary").withObject("/beamVersions").put(runner, version);
    runs.forEach(r -> {
      if (runner.equals(r.path("runner").asText())) {
        ((ObjectNode) r).put("beamVersion", version);
      }
    });
    return this;
  }

  /** The settings object, for tests that vary it. */
  ObjectNode settings() {
    return (ObjectNode) root.get("settings");
  }

  Path write(Path dir) throws IOException {
    Files.createDirectories(dir);
    Path file = dir.resolve("results.json");
    JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), root);
    return file;
  }
}
