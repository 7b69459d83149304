package dev.weir.dashboards;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * One {@code results.json} written by the Nexmark driver, read tolerantly: unknown fields are
 * ignored and missing optional ones become null, so that reports can be rebuilt from files of any
 * 1.x schema version. Immutable.
 *
 * @param path where the file was read from
 * @param schemaVersion the file's {@code schemaVersion}
 * @param startedAt when the suite started (ISO-8601), used to order files in history
 * @param settings the driver options of that invocation
 * @param machine the machine facts
 * @param jvm the JVM facts
 * @param runnerConfigs per runner: its throughput configuration
 * @param beamVersions per runner, in {@link Comparison#RUNNER_ORDER}: the Beam SDK release its runs
 *     ran on, as the driver summed them up ({@code summary.beamVersions}: several, comma-separated,
 *     if they differed); empty for files before results schema 1.8.0
 * @param beamNote the driver's sentence on why the runners ran on different Beam releases
 *     ({@code summary.beamNote}, results schema 1.8.0), or null
 * @param runs every run, in file order
 */
public record ResultsFile(
    Path path,
    String schemaVersion,
    String startedAt,
    JsonNode settings,
    JsonNode machine,
    JsonNode jvm,
    JsonNode runnerConfigs,
    Map<String, String> beamVersions,
    String beamNote,
    List<RunResult> runs) {

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Reads a results file.
   *
   * @throws IllegalArgumentException naming the file if it is not JSON, lacks a {@code runs}
   *     array, or has a schema major version other than 1
   * @throws UncheckedIOException naming the file if it cannot be read
   */
  public static ResultsFile read(Path path) {
    JsonNode root;
    try {
      root = JSON.readTree(path.toFile());
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalArgumentException(path + " is not valid JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read results file " + path, e);
    }
    if (root == null || !root.path("runs").isArray()) {
      throw new IllegalArgumentException(path + " is not a Weir results file: no top-level 'runs' array");
    }
    String version = text(root, "schemaVersion");
    if (version != null && !version.startsWith("1.")) {
      throw new IllegalArgumentException(path + " has results schema " + version + "; this report reads 1.x");
    }
    List<RunResult> runs = new ArrayList<>();
    for (JsonNode run : root.get("runs")) {
      runs.add(new RunResult(
          text(run, "runner"),
          run.path("query").asInt(-1),
          text(run, "queryName"),
          text(run, "mode"),
          text(run, "status"),
          number(run, "eventsPerSec"),
          integer(run, "numResults"),
          run.path("correct").isBoolean() ? run.get("correct").booleanValue() : null,
          text(run, "correctness"),
          number(run, "runtimeSec"),
          number(run, "cpuSeconds"),
          cpuMicrosPerEvent(run),
          number(run, "measuredCompileShare"),
          integer(run, "peakRssBytes"),
          integer(run, "gcTimeMs"),
          strings(run.get("sweep")),
          text(run, "firstErrorLine"),
          text(run, "runDir"),
          text(run, "profiling"),
          text(run, "beamVersion")));
    }
    return new ResultsFile(path, version, text(root, "startedAt"), orEmpty(root.get("settings")),
        orEmpty(root.get("machine")), orEmpty(root.get("jvm")), orEmpty(root.get("runnerConfigs")),
        beamVersions(root.path("summary").path("beamVersions")), text(root.path("summary"), "beamNote"),
        List.copyOf(runs));
  }

  /**
   * Reads every results file named, where a directory stands for every {@code results.json} below
   * it (for example the driver's {@code results/} folder); in a directory, files of the other
   * commands ({@code bin/weir bench}, {@code bin/weir latency}) are left out, and a latency file
   * named is left to {@link LatencyFile#readAll}. Order: as found.
   */
  public static List<ResultsFile> readAll(List<Path> paths) {
    List<ResultsFile> out = new ArrayList<>();
    for (Path p : paths) {
      if (Files.isDirectory(p)) {
        try (Stream<Path> found = Files.walk(p)) {
          for (Path f : found.filter(f -> f.getFileName().toString().equals("results.json")).sorted().toList()) {
            if (isNexmark(LatencyFile.readTree(f))) { // bin/weir bench and latency write results.json too
              out.add(read(f));
            }
          }
        } catch (IOException e) {
          throw new UncheckedIOException("cannot list " + p, e);
        }
      } else if (!LatencyFile.isLatency(LatencyFile.readTree(p))) { // a latency file named: LatencyFile reads it
        out.add(read(p));
      }
    }
    return out;
  }

  /** Whether {@code root} is a Nexmark comparison's results (a top-level {@code runs} array, not a latency run). */
  private static boolean isNexmark(JsonNode root) {
    return root != null && root.path("runs").isArray() && !LatencyFile.isLatency(root);
  }

  /** A short label for charts and tables: the start time, else the folder name. */
  public String label() {
    if (startedAt != null) {
      return startedAt.replace('T', ' ').replaceAll("\\.\\d+Z?$", "").replace("Z", "");
    }
    Path parent = path.getParent();
    return parent == null ? path.toString() : parent.getFileName().toString();
  }

  /**
   * A run's CPU time per event, µs: {@code cpuSeconds} over {@code events} times
   * {@code measuredPasses} (1 when absent, as in files before schema 1.5.0); null without both.
   */
  static Double cpuMicrosPerEvent(JsonNode run) {
    Double cpu = number(run, "cpuSeconds");
    long events = run.path("events").asLong(0);
    if (cpu == null || events <= 0) {
      return null;
    }
    int passes = Math.max(1, run.path("measuredPasses").asInt(1));
    return cpu * 1e6 / ((double) events * passes);
  }

  /** {@code summary.beamVersions} as runner -> release, in {@link Comparison#RUNNER_ORDER}. */
  private static Map<String, String> beamVersions(JsonNode given) {
    Map<String, String> out = new LinkedHashMap<>();
    if (given.isObject()) {
      List<String> runners = new ArrayList<>();
      given.fieldNames().forEachRemaining(runners::add);
      for (String runner : Comparison.orderedRunners(runners)) {
        out.put(runner, given.get(runner).asText());
      }
    }
    return Collections.unmodifiableMap(out);
  }

  private static JsonNode orEmpty(JsonNode node) {
    return node == null || node.isNull() ? new ObjectNode(JsonNodeFactory.instance) : node;
  }

  private static String text(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  private static Double number(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || !v.isNumber() ? null : v.doubleValue();
  }

  private static Long integer(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || !v.isNumber() ? null : v.longValue();
  }

  private static Map<String, String> strings(JsonNode node) {
    Map<String, String> out = new LinkedHashMap<>();
    if (node != null && node.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        out.put(e.getKey(), e.getValue().asText());
      }
    }
    return out;
  }
}
