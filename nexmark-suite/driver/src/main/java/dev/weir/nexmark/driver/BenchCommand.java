// Role: `weir bench remote-io`: the remote-I/O scenario of Samza's asynchronous-processing study
// (one container, 10 partitions, a blocking HTTP call per element answered after 1-100 ms), run as
// one child JVM per row: Weir sequential, Weir with 10, 30 and 100 calls in flight
// (--containerThreadPoolSize x --taskMaxConcurrency), and Beam's Flink and Direct runners as they
// are. Writes results/bench-remote-io-<time>/results.json and prints a table.
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
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code weir bench remote-io [--rows ...] [--scale F] [--out DIR]}. Each row is one child JVM on
 * its runner's classpath running {@code dev.weir.nexmark.harness.RemoteIoBench}; the row's element
 * count is sized so that it runs about 20 s at the rate its concurrency allows ({@code --scale}
 * multiplies it). Exit status 0 when every row counted all its elements, 1 otherwise.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Concurrency scenarios of Samza's asynchronous-processing study; today: remote-io.")
public final class BenchCommand implements Callable<Integer> {
  static final String MAIN = "dev.weir.nexmark.harness.RemoteIoBench";
  /** Source partitions (tasks) of every row, as in the study. */
  static final int PARTITIONS = 10;

  /**
   * One row: a runner with its options and the calls it may have in flight at once.
   *
   * @param elements at a concurrency of {@code inFlight} and 50 ms per call, about 20 s of calls
   */
  record Row(String id, RunnerKind runner, int inFlight, long elements, List<String> options) {}

  static final List<Row> ROWS = List.of(
      weir("weir-sequential", 0, 1, 1),
      weir("weir-10", 10, 1, 10),
      weir("weir-30", 30, 3, 30),
      weir("weir-100", 100, 10, 100),
      new Row("flink", RunnerKind.FLINK, PARTITIONS, 4_000, List.of("--runner=FlinkRunner",
          "--parallelism=" + PARTITIONS)),
      new Row("direct", RunnerKind.DIRECT, PARTITIONS, 4_000, List.of("--runner=DirectRunner",
          "--targetParallelism=" + PARTITIONS)));

  private static Row weir(String id, int threads, int perTask, int inFlight) {
    return new Row(id, RunnerKind.WEIR, inFlight, 400L * inFlight, List.of("--runner=WeirRunner",
        "--parallelism=" + PARTITIONS, "--containers=1", "--containerThreadPoolSize=" + threads,
        "--taskMaxConcurrency=" + perTask));
  }

  @Parameters(index = "0", paramLabel = "SCENARIO", description = "remote-io")
  String scenario;

  @Option(names = "--rows", split = ",", paramLabel = "ROW",
      description = "rows to run (default: all): weir-sequential, weir-10, weir-30, weir-100, flink, direct")
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
    if (!"remote-io".equals(scenario)) {
      System.err.println("weir bench: unknown scenario '" + scenario + "'; allowed: remote-io");
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
    for (Row row : ROWS) {
      if (rows == null || rows.contains(row.id())) {
        selected.add(row);
      }
    }
    if (rows != null && selected.size() != rows.size()) {
      System.err.println("weir bench: unknown row in --rows=" + String.join(",", rows) + "; allowed: "
          + String.join(", ", ROWS.stream().map(Row::id).toList()));
      return 2;
    }
    SuiteLayout layout = SuiteLayout.discover();
    Path root = out != null ? out : layout.home().resolve("results");
    Path dir = root.resolve("bench-remote-io-"
        + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT)));
    Files.createDirectories(dir);
    ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode doc = json.createObjectNode();
    doc.put("scenario", "remote-io");
    doc.put("partitions", PARTITIONS);
    doc.put("cores", Runtime.getRuntime().availableProcessors());
    ArrayNode results = doc.putArray("rows");
    boolean ok = true;
    System.out.printf(Locale.ROOT, "%-16s %9s %9s %12s %12s %9s %10s%n", "row", "in flight", "elements",
        "steady el/s", "ideal el/s", "of ideal", "CPU ms/el");
    java.util.Map<String, List<double[]>> measured = new java.util.LinkedHashMap<>();
    for (int round = 1; round <= repeats; round++) {
    for (Row row : selected) {
      long elements = Math.max(20, Math.round(row.elements() * scale));
      Path rowDir = Files.createDirectories(dir.resolve(repeats == 1 ? row.id() : row.id() + "-" + round));
      Path rowOut = rowDir.resolve("row.json");
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.add("-Xmx2g");
      cmd.addAll(row.runner().jvmFlags());
      cmd.add("-cp");
      cmd.add(layout.classpath(row.runner()));
      cmd.add(MAIN);
      cmd.add("--elements=" + elements);
      cmd.add("--inFlight=" + row.inFlight());
      cmd.add("--out=" + rowOut);
      cmd.addAll(row.options());
      Process process = new ProcessBuilder(cmd).directory(rowDir.toFile()).redirectErrorStream(true)
          .redirectOutput(rowDir.resolve("output.log").toFile()).start();
      boolean ended = process.waitFor(timeoutSeconds, TimeUnit.SECONDS);
      if (!ended) {
        process.destroyForcibly().waitFor();
      }
      ObjectNode result = json.createObjectNode();
      result.put("row", row.id());
      result.put("round", round);
      result.put("runner", row.runner().id());
      result.set("options", json.valueToTree(row.options()));
      if (ended && Files.isRegularFile(rowOut)) {
        JsonNode fromRow = json.readTree(rowOut.toFile());
        result.setAll((ObjectNode) fromRow);
      } else {
        result.put("error", ended ? "no result (exit " + process.exitValue() + "; see " + rowDir.resolve("output.log")
            + ")" : "killed after " + timeoutSeconds + " s");
      }
      boolean rowOk = ended && process.exitValue() == 0 && !result.has("error");
      ok &= rowOk;
      result.put("ok", rowOk);
      results.add(result);
      double steady = result.path("steadyElementsPerSec").asDouble(0);
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
