// Role: `weir latency`: how late each Nexmark query's results are when runners are fed the same
// fixed event rate (issue 42): one child JVM (harness LatencyRun) per runner x query x round, the
// runners interleaved, each configured as in the throughput comparison (the same checkpoint
// interval). Writes results/latency-<time>/results.json and prints p50/p99/max per query and runner.
// Threading: main thread only; each row's JVM runs to its end before the next starts.
package dev.weir.nexmark.driver;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code weir latency [--runners R,...] [--queries Q,...] [--events-per-sec N | --rate-from FILE
 * [--rate-share F]] [--seconds S] [--skip-seconds W] [--repeats K] [--runner-options ...]
 * [--checkpoint-interval-ms MS] [--out DIR]}.
 *
 * <p>Each row runs one query on one runner in its own JVM ({@code dev.weir.nexmark.harness.LatencyRun})
 * for S seconds at a fixed rate: Nexmark's events, stamped at their emission; a probe after the
 * query records, per result, wall-clock now minus the result's event timestamp (a window's end for
 * windowed queries), results emitted in the first W seconds left out. The rate is N events/s for every query, or per query the share F of the slowest of the
 * chosen runners' median events/s in an earlier {@code weir nexmark} results file (the issue's
 * "half of the slowest runner's throughput"). Rounds interleave the runners (query by query,
 * runner after runner). Exit status 0 when every row recorded results, 1 otherwise, 2 on bad
 * arguments.
 */
@Command(name = "latency", mixinStandardHelpOptions = true,
    description = "How late each query's results are at a fixed event rate, per runner (p50/p99/max, ms).")
public final class LatencyCommand implements Callable<Integer> {
  static final String LATENCY_MAIN = "dev.weir.nexmark.harness.LatencyRun";

  @Option(names = "--runners", split = ",", defaultValue = "flink-tuned,weir",
      description = "runners to compare (default: ${DEFAULT-VALUE}); any of the nexmark command's but bare")
  List<String> runners;

  @Option(names = "--queries", split = ",", defaultValue = "0,3,5,7,11",
      description = "Nexmark queries, 0-9 and 11 (default: ${DEFAULT-VALUE})")
  List<Integer> queries;

  @Option(names = "--events-per-sec", defaultValue = "10000",
      description = "fixed event rate of every query, events/s (default: ${DEFAULT-VALUE}); ignored with --rate-from")
  int eventsPerSec;

  @Option(names = "--rate-from", paramLabel = "RESULTS_JSON",
      description = "a `weir nexmark` results.json: each query's rate is --rate-share of the slowest chosen "
          + "runner's median streaming events/s there")
  Path rateFrom;

  @Option(names = "--rate-share", defaultValue = "0.5",
      description = "share of the slowest runner's throughput fed with --rate-from, above 0 and at most 1 "
          + "(default: ${DEFAULT-VALUE})")
  double rateShare;

  @Option(names = "--seconds", defaultValue = "60", description = "seconds of events per row (default: ${DEFAULT-VALUE})")
  int seconds;

  @Option(names = "--skip-seconds", defaultValue = "20",
      description = "results emitted in a row's first seconds are not recorded (start-up, JIT; default: ${DEFAULT-VALUE})")
  int skipSeconds;

  @Option(names = "--repeats", defaultValue = "1", description = "rounds over the rows (default: ${DEFAULT-VALUE})")
  int repeats;

  @Option(names = "--runner-options", paramLabel = "RUNNER=--name=value,...",
      description = "Beam options for one runner only, applied last (as in `weir nexmark`). Repeatable.")
  List<String> runnerOptionValues = new ArrayList<>();

  @Option(names = "--checkpoint-interval-ms", defaultValue = "" + NexmarkCommand.DEFAULT_CHECKPOINT_INTERVAL_MS,
      description = "checkpoint interval of every runner that checkpoints, ms; 0 = none (default: ${DEFAULT-VALUE})")
  long checkpointIntervalMs;

  @Option(names = "--cores", description = "parallelism of Flink and Weir (default: this machine's cores)")
  Integer cores;

  @Option(names = "--out", paramLabel = "DIR", description = "results root (default: <repo>/results)")
  Path out;

  /** One planned row. */
  record Row(RunnerKind runner, int query, int eventsPerSec, int round) {}

  @Override
  public Integer call() throws Exception {
    List<RunnerKind> kinds = new ArrayList<>();
    Map<Integer, Integer> rates;
    RunnerOptions perRunner;
    try {
      for (String id : runners) {
        RunnerKind kind = RunnerKind.of(id);
        if (kind == RunnerKind.BARE) {
          throw new IllegalArgumentException("--runners: bare runs no Beam pipeline; allowed: "
              + RunnerKind.ids().replace("bare, ", "").replace(", bare", ""));
        }
        kinds.add(kind);
      }
      for (int q : queries) {
        if (q < 0 || q > 11 || q == 10) {
          throw new IllegalArgumentException("--queries: " + q + " is not supported; allowed: 0-9, 11 (Q10 writes "
              + "files; Q12 fires on processing time, closing no event time; Q13, Q14 need side-input setup)");
        }
      }
      check(seconds >= 10, "--seconds=" + seconds + " is out of range; allowed: 10 or more");
      check(skipSeconds >= 0 && skipSeconds < seconds, "--skip-seconds=" + skipSeconds
          + " is out of range; allowed: 0 to --seconds - 1");
      check(repeats >= 1, "--repeats=" + repeats + " is out of range; allowed: 1 or more");
      check(eventsPerSec >= 1, "--events-per-sec=" + eventsPerSec + " is out of range; allowed: 1 or more");
      check(rateShare > 0 && rateShare <= 1, "--rate-share=" + rateShare + " is out of range; allowed: above 0, at most 1");
      check(checkpointIntervalMs >= 0, "--checkpoint-interval-ms=" + checkpointIntervalMs
          + " is out of range; allowed: 0 or more");
      rates = rateFrom == null ? null : ratesFrom(new ObjectMapper().readTree(rateFrom.toFile()), kinds, queries,
          rateShare);
      perRunner = RunnerOptions.parse(runnerOptionValues);
    } catch (IllegalArgumentException e) {
      System.err.println("weir latency: " + e.getMessage());
      return 2;
    }
    List<Row> plan = new ArrayList<>();
    for (int round = 1; round <= repeats; round++) {
      for (int q : queries) {
        for (RunnerKind kind : kinds) {
          plan.add(new Row(kind, q, rates == null ? eventsPerSec : rates.get(q), round));
        }
      }
    }
    int parallelism = cores != null ? cores : Runtime.getRuntime().availableProcessors();
    SuiteLayout layout = SuiteLayout.discover();
    Path root = out != null ? out : layout.home().resolve("results");
    Path dir = root.resolve("latency-"
        + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT)));
    Files.createDirectories(dir);
    ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode doc = json.createObjectNode();
    doc.put("kind", "latency");
    doc.put("startedAt", java.time.Instant.now().toString());
    doc.put("cores", Runtime.getRuntime().availableProcessors());
    doc.put("parallelism", parallelism);
    doc.put("seconds", seconds);
    doc.put("skipSeconds", skipSeconds);
    doc.put("checkpointIntervalMs", checkpointIntervalMs);
    doc.put("rateFrom", rateFrom == null ? null : rateFrom.toString());
    doc.put("rateShare", rateFrom == null ? null : rateShare);
    doc.put("method", METHOD);
    ArrayNode results = doc.putArray("rows");
    System.out.printf(Locale.ROOT, "%-5s %-20s %10s %9s %9s %9s %10s%n", "query", "runner", "events/s", "p50 ms",
        "p99 ms", "max ms", "CPU ms/ev");
    boolean ok = true;
    for (Row row : plan) {
      Path rowDir = Files.createDirectories(dir.resolve(String.format(Locale.ROOT, "q%d-%s-%d", row.query(),
          row.runner().id(), row.round())));
      Path rowOut = rowDir.resolve("row.json");
      Map<String, String> options = new LinkedHashMap<>(row.runner().runnerOptions(parallelism, rowDir));
      options.putAll(row.runner().checkpointOptions(checkpointIntervalMs));
      options.putAll(perRunner.of(row.runner()));
      List<String> cmd = RowProcess.javaCommand(layout, row.runner(), LATENCY_MAIN);
      cmd.add("--query=" + row.query());
      cmd.add("--eventsPerSec=" + row.eventsPerSec());
      cmd.add("--seconds=" + seconds);
      cmd.add("--skipSeconds=" + skipSeconds);
      cmd.add("--out=" + rowOut);
      options.forEach((name, value) -> cmd.add(value == null ? "--" + name : "--" + name + "=" + value));
      long timeout = seconds + 420L;
      ObjectNode result = json.createObjectNode();
      result.put("runner", row.runner().id());
      result.put("query", row.query());
      result.put("round", row.round());
      result.set("options", json.valueToTree(options));
      boolean rowOk = RowProcess.run(cmd, rowDir, rowOut, timeout, result, json);
      ok &= rowOk;
      results.add(result);
      System.out.printf(Locale.ROOT, "Q%-4d %-20s %10d %9s %9s %9s %10.4f%s%n", row.query(), row.runner().id(),
          row.eventsPerSec(), ms(result, "p50Ms"), ms(result, "p99Ms"), ms(result, "maxMs"),
          result.path("cpuMsPerEvent").asDouble(0), rowOk ? "" : "  FAILED: " + result.path("error").asText());
      json.writeValue(dir.resolve("results.json").toFile(), doc); // after each row: a partial run keeps its rows
    }
    doc.set("summary", summary(json, results, repeats));
    json.writeValue(dir.resolve("results.json").toFile(), doc);
    System.out.println("results: " + dir.resolve("results.json"));
    return ok ? 0 : 1;
  }

  /** How the figures are made, stated in the results for the report. */
  static final String METHOD = "Each runner runs the query alone in its own JVM, fed Nexmark's events (its own "
      + "generators, ids and proportions, without its delayed events) at the stated events/s, each stamped with "
      + "the wall-clock time it was emitted at, the watermark following the wall clock. A probe after the query "
      + "records, per result, wall-clock now minus the event time it closes: its window's end for windowed "
      + "queries (Q5, Q7, Q11), its event's emission for per-event ones (Q0-Q2), the completing event's for "
      + "joins (Q3). Results emitted in the first seconds (start-up, JIT) and after the source ended are not "
      + "recorded; percentiles from an HdrHistogram at 3 significant digits, ms.";

  private static void check(boolean condition, String message) {
    if (!condition) {
      throw new IllegalArgumentException(message);
    }
  }

  private static String ms(JsonNode result, String field) {
    return result.has(field) ? String.valueOf(result.get(field).asLong()) : "-";
  }

  /**
   * Per query, {@code share} of the slowest of {@code kinds}' median streaming events/s in a
   * {@code weir nexmark} results document, rounded down to 100 events/s (at least 100).
   *
   * @throws IllegalArgumentException naming the query and runner the document lacks
   */
  static Map<Integer, Integer> ratesFrom(JsonNode results, List<RunnerKind> kinds, List<Integer> queries,
      double share) {
    Map<Integer, Integer> rates = new LinkedHashMap<>();
    for (int q : queries) {
      JsonNode row = null;
      for (JsonNode r : results.path("summary").path("rows")) {
        if (r.path("query").asInt(-1) == q && "streaming".equals(r.path("mode").asText())
            && r.path("sweep").asText("").isEmpty()) {
          row = r;
        }
      }
      double slowest = Double.MAX_VALUE;
      for (RunnerKind kind : kinds) {
        JsonNode rate = row == null ? null : row.path("eventsPerSec").get(kind.id());
        if (rate == null || !rate.isNumber() || rate.asDouble() <= 0) {
          throw new IllegalArgumentException("--rate-from: no streaming events/s of " + kind.id() + " on Q" + q
              + " in that results file");
        }
        slowest = Math.min(slowest, rate.asDouble());
      }
      rates.put(q, Math.max(100, (int) (slowest * share / 100) * 100));
    }
    return rates;
  }

  /** Per query and runner: rounds ok, median of p50, p99 and max, and their min-max over rounds. */
  static ArrayNode summary(ObjectMapper json, ArrayNode rows, int repeats) {
    Map<String, List<JsonNode>> byKey = new LinkedHashMap<>();
    for (JsonNode r : rows) {
      if (r.path("ok").asBoolean()) {
        byKey.computeIfAbsent(r.path("query").asInt() + "/" + r.path("runner").asText(), k -> new ArrayList<>()).add(r);
      }
    }
    ArrayNode summary = json.createArrayNode();
    for (Map.Entry<String, List<JsonNode>> e : byKey.entrySet()) {
      List<JsonNode> ok = e.getValue();
      ObjectNode s = summary.addObject();
      s.put("query", ok.get(0).path("query").asInt());
      s.put("runner", ok.get(0).path("runner").asText());
      s.put("eventsPerSec", ok.get(0).path("eventsPerSec").asInt());
      s.put("okRounds", ok.size());
      s.put("rounds", repeats);
      for (String field : List.of("p50Ms", "p99Ms", "maxMs", "cpuMsPerEvent", "recorded")) {
        List<Double> values = ok.stream().map(r -> r.path(field).asDouble()).sorted().toList();
        s.put(field, Stats.median(values));
        s.put(field + "Min", values.get(0));
        s.put(field + "Max", values.get(values.size() - 1));
      }
    }
    return summary;
  }
}
