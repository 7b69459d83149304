package dev.weir.dashboards;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * One {@code results.json} written by {@code bin/weir latency} ({@code "kind": "latency"}): per
 * query and runner, how late results were at a fixed event rate (medians over rounds, ms).
 *
 * @param path where it was read from
 * @param startedAt when the run started (ISO-8601), or null in files written before it was recorded
 * @param method how the figures are made, as the command states it
 * @param seconds seconds of events per row
 * @param skipSeconds seconds at the start of each row whose results were not recorded
 * @param checkpointIntervalMs every checkpointing runner's interval, ms (0: none)
 * @param rows the summary, query by query in the order run
 */
public record LatencyFile(Path path, String startedAt, String method, int seconds, int skipSeconds,
                          long checkpointIntervalMs, List<Row> rows) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * One query on one runner.
   *
   * @param eventsPerSec the fixed rate fed, events/s
   * @param okRounds rounds that recorded results, of {@code rounds}
   * @param p50Ms median over rounds of the run's median lateness, ms (likewise p99, max)
   * @param p99MinMs the least and greatest p99 over rounds, ms
   * @param cpuMsPerEvent median CPU ms per event of the child JVM
   * @param recorded median number of results recorded per round (a windowed query has few)
   */
  public record Row(int query, String runner, int eventsPerSec, int okRounds, int rounds, double p50Ms,
                    double p99Ms, double p99MinMs, double p99MaxMs, double maxMs, double cpuMsPerEvent,
                    double recorded) {}

  /** Whether {@code root} is a latency results document. */
  static boolean isLatency(JsonNode root) {
    return root != null && "latency".equals(root.path("kind").asText());
  }

  /**
   * Reads a latency results document.
   *
   * @throws IllegalArgumentException naming the file if it is not one
   */
  static LatencyFile of(Path path, JsonNode root) {
    if (!isLatency(root)) {
      throw new IllegalArgumentException(path + " is not a latency results file (no \"kind\": \"latency\")");
    }
    List<Row> rows = new ArrayList<>();
    for (JsonNode s : root.path("summary")) {
      rows.add(new Row(s.path("query").asInt(), s.path("runner").asText(), s.path("eventsPerSec").asInt(),
          s.path("okRounds").asInt(), s.path("rounds").asInt(), s.path("p50Ms").asDouble(), s.path("p99Ms").asDouble(),
          s.path("p99MsMin").asDouble(), s.path("p99MsMax").asDouble(), s.path("maxMs").asDouble(),
          s.path("cpuMsPerEvent").asDouble(), s.path("recorded").asDouble()));
    }
    return new LatencyFile(path, root.hasNonNull("startedAt") ? root.get("startedAt").asText() : null,
        root.path("method").asText(""), root.path("seconds").asInt(), root.path("skipSeconds").asInt(),
        root.path("checkpointIntervalMs").asLong(), List.copyOf(rows));
  }

  /**
   * Every latency results file among {@code paths}, a directory standing for every
   * {@code results.json} below it; files of other kinds are left out.
   */
  public static List<LatencyFile> readAll(List<Path> paths) {
    List<LatencyFile> out = new ArrayList<>();
    for (Path p : paths) {
      List<Path> files;
      if (Files.isDirectory(p)) {
        try (Stream<Path> found = Files.walk(p)) {
          files = found.filter(f -> f.getFileName().toString().equals("results.json")).sorted().toList();
        } catch (IOException e) {
          throw new UncheckedIOException("cannot list " + p, e);
        }
      } else {
        files = List.of(p);
      }
      for (Path f : files) {
        JsonNode root = readTree(f);
        if (isLatency(root)) {
          out.add(of(f, root));
        }
      }
    }
    return out;
  }

  /** The newest of {@code files} by start time (then path), or null if there is none. */
  public static LatencyFile newest(List<LatencyFile> files) {
    return files.stream().max(Comparator.comparing((LatencyFile f) -> f.startedAt() == null ? "" : f.startedAt())
        .thenComparing(f -> f.path().toString())).orElse(null);
  }

  static JsonNode readTree(Path f) {
    try {
      return JSON.readTree(f.toFile());
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalArgumentException(f + " is not valid JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read results file " + f, e);
    }
  }
}
