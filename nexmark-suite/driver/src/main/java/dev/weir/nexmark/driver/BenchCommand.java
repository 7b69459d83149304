// Role: `weir bench remote-io|rocksdb-miss|cpu-bound`: the three scenarios of Samza's
// asynchronous-processing study, one child JVM per row. remote-io: one container, 10 partitions, a
// blocking HTTP call per element answered after 1-100 ms; Weir sequential, with 10, 30 and 100
// calls in flight (--containerThreadPoolSize x --taskMaxConcurrency), and Beam's Flink and Direct
// runners as they are. rocksdb-miss: per-key counting whose every state read misses the object
// cache, 8 partitions, one container, sequential vs 8 threads x 3 in flight. cpu-bound: the same
// counting with every key in cache, today's path vs one worker thread. Writes
// results/bench-<scenario>-<time>/results.json and prints a table.
// Threading: main thread only; each row's JVM runs to its end before the next starts.
package dev.weir.nexmark.driver;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code weir bench remote-io|rocksdb-miss|cpu-bound [--rows ...] [--scale F] [--repeats R] [--out DIR]}.
 * Each row is one child JVM on its runner's classpath running the scenario's harness main
 * ({@code RemoteIoBench} or {@code StateCountBench}); remote-io rows are sized to run about 20 s
 * at the rate their concurrency allows, the others by element count ({@code --scale} multiplies
 * both). Exit status 0 when every row counted all its elements, 1 otherwise, 2 on bad arguments.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Concurrency scenarios of Samza's asynchronous-processing study: remote-io, rocksdb-miss, cpu-bound.")
public final class BenchCommand implements Callable<Integer> {
  static final String REMOTE_IO_MAIN = "dev.weir.nexmark.harness.RemoteIoBench";
  static final String STATE_COUNT_MAIN = "dev.weir.nexmark.harness.StateCountBench";
  /** Source partitions (tasks) of every remote-io row, as in the study. */
  static final int PARTITIONS = 10;
  /** Partitions of the state scenarios' rows, as in the study's RocksDB case. */
  static final int STATE_PARTITIONS = 8;

  /**
   * One row: a runner with its options, the calls it may have in flight at once (remote-io; 0
   * elsewhere), its element count and the harness main class with its own arguments.
   *
   * @param elements remote-io: at {@code inFlight} calls of 50 ms, about 20 s of calls
   */
  record Row(String id, RunnerKind runner, int inFlight, long elements, String main, List<String> mainArgs,
      List<String> options) {}

  /** The rows of each scenario. */
  static final java.util.Map<String, List<Row>> SCENARIOS = java.util.Map.of(
      "remote-io", List.of(
          remoteIo("weir-sequential", 0, 1, 1),
          remoteIo("weir-10", 10, 1, 10),
          remoteIo("weir-30", 30, 3, 30),
          remoteIo("weir-100", 100, 10, 100),
          new Row("flink", RunnerKind.FLINK, PARTITIONS, 4_000, REMOTE_IO_MAIN, List.of(),
              List.of("--runner=FlinkRunner", "--parallelism=" + PARTITIONS)),
          new Row("direct", RunnerKind.DIRECT, PARTITIONS, 4_000, REMOTE_IO_MAIN, List.of(),
              List.of("--runner=DirectRunner", "--targetParallelism=" + PARTITIONS))),
      // every read misses the object cache (1,000 entries per container) and goes to RocksDB
      "rocksdb-miss", List.of(
          stateCount("weir-sequential", 0, 1, 1_000_000, 1_000_000, "--objectCacheSize=1000"),
          stateCount("weir-8x3", 8, 3, 1_000_000, 1_000_000, "--objectCacheSize=1000")),
      // every key stays in the object cache: the cost of handing elements to a worker
      "cpu-bound", List.of(
          stateCount("weir-sequential", 0, 1, 1_000, 2_000_000),
          stateCount("weir-pool-1", 1, 1, 1_000, 2_000_000)));

  private static Row remoteIo(String id, int threads, int perTask, int inFlight) {
    return new Row(id, RunnerKind.WEIR, inFlight, 400L * inFlight, REMOTE_IO_MAIN, List.of(),
        List.of("--runner=WeirRunner", "--parallelism=" + PARTITIONS, "--containers=1",
            "--containerThreadPoolSize=" + threads, "--taskMaxConcurrency=" + perTask));
  }

  private static Row stateCount(String id, int threads, int perTask, long keys, long elements, String... more) {
    List<String> options = new ArrayList<>(List.of("--runner=WeirRunner", "--parallelism=" + STATE_PARTITIONS,
        "--containers=1", "--stateBackend=ROCKSDB", "--containerThreadPoolSize=" + threads,
        "--taskMaxConcurrency=" + perTask));
    options.addAll(List.of(more));
    return new Row(id, RunnerKind.WEIR, 0, elements, STATE_COUNT_MAIN, List.of("--keys=" + keys), options);
  }

  @Parameters(index = "0", paramLabel = "SCENARIO", description = "remote-io, rocksdb-miss or cpu-bound")
  String scenario;

  @Option(names = "--rows", split = ",", paramLabel = "ROW",
      description = "rows to run (default: all); remote-io: weir-sequential, weir-10, weir-30, weir-100, flink, "
          + "direct; rocksdb-miss: weir-sequential, weir-8x3; cpu-bound: weir-sequential, weir-pool-1")
  List<String> rows;

  @Option(names = "--scale", defaultValue = "1.0",
      description = "multiplies every row's element count (default 1.0: about 20 s per row)")
  double scale;

  @Option(names = "--out", paramLabel = "DIR", description = "results root (default: <repo>/results)")
  Path out;

  @Option(names = "--timeout-per-row", defaultValue = "300", description = "seconds before a row is killed")
  long timeoutSeconds;

  @Option(names = "--repeats", defaultValue = "1",
      description = "rounds over the rows (each round runs every row once, in order); the summary gives each "
          + "row's median and spread (default 1)")
  int repeats;

  @Override
  public Integer call() throws Exception {
    List<Row> all = SCENARIOS.get(scenario);
    if (all == null) {
      System.err.println("weir bench: unknown scenario '" + scenario + "'; allowed: remote-io, rocksdb-miss, cpu-bound");
      return 2;
    }
    if (repeats < 1) {
      System.err.println("weir bench: --repeats=" + repeats + " is out of range; allowed: 1 or more");
      return 2;
    }
    if (scale <= 0) {
      System.err.println("weir bench: --scale=" + scale + " is out of range; allowed: above 0");
      return 2;
    }
    List<Row> selected = new ArrayList<>();
    for (Row row : all) {
      if (rows == null || rows.contains(row.id())) {
        selected.add(row);
      }
    }
    if (rows != null && selected.size() != rows.size()) {
      System.err.println("weir bench: unknown row in --rows=" + String.join(",", rows) + "; allowed: "
          + String.join(", ", all.stream().map(Row::id).toList()));
      return 2;
    }
    SuiteLayout layout = SuiteLayout.discover();
    Path root = out != null ? out : layout.home().resolve("results");
    Path dir = root.resolve("bench-" + scenario + "-"
        + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT)));
    Files.createDirectories(dir);
    ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode doc = json.createObjectNode();
    doc.put("scenario", scenario);
    doc.put("cores", Runtime.getRuntime().availableProcessors());
    ArrayNode results = doc.putArray("rows");
    boolean ok = true;
    System.out.printf(Locale.ROOT, "%-16s %9s %9s %12s %12s %9s %10s%n", "row", "in flight", "elements",
        "el/s", "ideal el/s", "of ideal", "CPU ms/el");
    java.util.Map<String, List<double[]>> measured = new java.util.LinkedHashMap<>();
    for (int round = 1; round <= repeats; round++) {
    for (Row row : selected) {
      long elements = Math.max(20, Math.round(row.elements() * scale));
      Path rowDir = Files.createDirectories(dir.resolve(repeats == 1 ? row.id() : row.id() + "-" + round));
      Path rowOut = rowDir.resolve("row.json");
      List<String> cmd = RowProcess.javaCommand(layout, row.runner(), row.main());
      cmd.add("--elements=" + elements);
      if (row.inFlight() > 0) {
        cmd.add("--inFlight=" + row.inFlight());
      }
      cmd.add("--out=" + rowOut);
      cmd.add("--scenario=" + scenario);
      cmd.addAll(row.mainArgs());
      cmd.addAll(row.options());
      ObjectNode result = json.createObjectNode();
      result.put("row", row.id());
      result.put("round", round);
      result.put("runner", row.runner().id());
      result.set("options", json.valueToTree(row.options()));
      boolean rowOk = RowProcess.run(cmd, rowDir, rowOut, timeoutSeconds, result, json);
      ok &= rowOk;
      results.add(result);
      // remote-io: the service's steady rate; the state scenarios: over the whole run
      double steady = result.path("steadyElementsPerSec").asDouble(result.path("elementsPerSec").asDouble(0));
      double ideal = result.path("idealElementsPerSec").asDouble(0);
      if (rowOk) {
        measured.computeIfAbsent(row.id(), k -> new ArrayList<>())
            .add(new double[] {steady, ideal > 0 ? steady / ideal : 0, result.path("cpuMsPerElement").asDouble(0)});
      }
      System.out.printf(Locale.ROOT, "%-16s %9d %9d %12.1f %12.1f %8.0f%% %10.3f%s%n", row.id(), row.inFlight(),
          elements, steady, ideal, ideal > 0 ? 100 * steady / ideal : 0, result.path("cpuMsPerElement").asDouble(0),
          rowOk ? "" : "  FAILED: " + result.path("error").asText());
      json.writeValue(dir.resolve("results.json").toFile(), doc); // after each row: a partial run keeps its rows
    }
    }
    if (repeats > 1) {
      ArrayNode summary = doc.putArray("summary");
      System.out.printf(Locale.ROOT, "%nmedian of %d rounds (min-max):%n%-16s %22s %18s %10s%n", repeats, "row",
          "steady el/s", "of ideal", "CPU ms/el");
      for (java.util.Map.Entry<String, List<double[]>> e : measured.entrySet()) {
        double[] steady = e.getValue().stream().mapToDouble(v -> v[0]).sorted().toArray();
        double[] share = e.getValue().stream().mapToDouble(v -> v[1]).sorted().toArray();
        double[] cpu = e.getValue().stream().mapToDouble(v -> v[2]).sorted().toArray();
        ObjectNode row = summary.addObject();
        row.put("row", e.getKey());
        row.put("runs", steady.length);
        row.put("medianSteadyElementsPerSec", median(steady));
        row.put("minSteadyElementsPerSec", steady[0]);
        row.put("maxSteadyElementsPerSec", steady[steady.length - 1]);
        row.put("medianShareOfIdeal", median(share));
        row.put("medianCpuMsPerElement", median(cpu));
        System.out.printf(Locale.ROOT, "%-16s %9.1f (%5.1f-%5.1f) %5.0f%% (%3.0f-%3.0f) %10.3f%n", e.getKey(),
            median(steady), steady[0], steady[steady.length - 1], 100 * median(share), 100 * share[0],
            100 * share[share.length - 1], median(cpu));
      }
      json.writeValue(dir.resolve("results.json").toFile(), doc);
    }
    System.out.println("results: " + dir.resolve("results.json"));
    return ok ? 0 : 1;
  }

  private static double median(double[] sorted) {
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
}
