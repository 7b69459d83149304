// Role: executes one RunSpec as a child JVM (one runner's classpath + the harness main), enforces
// the per-run timeout by killing the whole process tree, and turns the child's perf JSON, process
// facts and log into a RunRecord.
// Threading: called from the driver's main thread, one run at a time (runs never overlap, so they
// do not compete for the two cores); the child's output goes straight to a file, no pump threads.
package dev.weir.nexmark.driver;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.profiling.CpuEngine;
import dev.weir.profiling.ProfileReport;
import dev.weir.profiling.ProfileSettings;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Starts and measures one benchmark run. Files per run (in its run directory): {@code output.log}
 * (child stdout+stderr), {@code perf.json} (Nexmark's --perfFilename), {@code harness.json}
 * (process facts). Timeout in seconds.
 */
public final class ChildRun {
  /** Log lines that mention errors but are known to be harmless. */
  private static final Pattern BENIGN = Pattern.compile(
      "MetricsReader - Failed to get metric|Hadoop FS is not available|ErrorReportingRunnable"
          + "|errors\\s*[:=]\\s*\\[\\]|NoClassDefFoundError: org/apache/hadoop");
  private static final Pattern ERROR_LINE = Pattern.compile(
      "(^|\\W)(ERROR|FATAL|SEVERE)\\W|Exception|Error:|Error\\b");

  private final SuiteLayout layout;
  /** Parallelism and CPU pinning per run (--cores, --cpus and their sweeps). */
  private final RunCpus cpus;
  private final long timeoutSec;
  private final List<String> passthrough;
  private final boolean assertCorrectness;
  private final Profiling profiling;
  /** The suite's Kafka for runners that need one (weir-samza); null when no planned run does. */
  private final SuiteKafka kafka;
  /** Options of one runner only (--runner-options), applied last. */
  private final RunnerOptions runnerOptions;
  /**
   * Checkpoint interval of streaming runs, ms, given to every runner that checkpoints
   * ({@link RunnerKind#checkpointOptions}); 0 = none checkpoints; negative = each at its own default.
   */
  private final long checkpointIntervalMs;
  private final ObjectMapper json = new ObjectMapper();
  /** Frozen classpaths per runner (see ClasspathSnapshot); runners not in it read the build's file. */
  private final Map<RunnerKind, String> classpaths = new java.util.EnumMap<>(RunnerKind.class);
  private final Map<RunnerKind, Path> classpathFiles = new java.util.EnumMap<>(RunnerKind.class);
  /** The child JVM now running, if any; killed by {@link #killRunning} (the driver's shutdown hook). */
  private volatile Process running;

  /**
   * @param passthrough Beam/Nexmark options after {@code --}, applied last (they win)
   * @param profiling how to profile every run (--profile), or null
   */
  public ChildRun(SuiteLayout layout, int cores, long timeoutSec, List<String> passthrough,
                  boolean assertCorrectness, Profiling profiling) {
    this(layout, cores, timeoutSec, passthrough, assertCorrectness, profiling, null);
  }

  /**
   * @param kafka the suite's Kafka, asked for its address by the first run of a runner that
   *     {@linkplain RunnerKind#needsKafka() needs one}; null when no run does (such a run then fails
   *     naming the missing broker)
   */
  public ChildRun(SuiteLayout layout, int cores, long timeoutSec, List<String> passthrough,
                  boolean assertCorrectness, Profiling profiling, SuiteKafka kafka) {
    this(layout, RunCpus.fixed(cores), timeoutSec, passthrough, assertCorrectness, profiling, kafka);
  }

  /**
   * As the constructor above, with each run's parallelism and CPU pinning taken from {@code cpus}
   * ({@code --cores}, {@code --cpus} and their sweeps).
   */
  public ChildRun(SuiteLayout layout, RunCpus cpus, long timeoutSec, List<String> passthrough,
                  boolean assertCorrectness, Profiling profiling, SuiteKafka kafka) {
    this(layout, cpus, timeoutSec, passthrough, assertCorrectness, profiling, kafka, RunnerOptions.none(), -1);
  }

  /**
   * As the constructor above, with options for single runners and one checkpoint interval.
   *
   * @param runnerOptions options of one runner only ({@code --runner-options}), applied after every other
   * @param checkpointIntervalMs checkpoint interval of streaming runs, ms, for every runner that
   *     checkpoints (Weir, the Flink variants); 0 = none does; negative = each at its own default
   */
  public ChildRun(SuiteLayout layout, RunCpus cpus, long timeoutSec, List<String> passthrough,
                  boolean assertCorrectness, Profiling profiling, SuiteKafka kafka, RunnerOptions runnerOptions,
                  long checkpointIntervalMs) {
    this.runnerOptions = runnerOptions;
    this.checkpointIntervalMs = checkpointIntervalMs;
    this.layout = layout;
    this.cpus = cpus;
    this.timeoutSec = timeoutSec;
    this.passthrough = List.copyOf(passthrough);
    this.assertCorrectness = assertCorrectness;
    this.profiling = profiling;
    this.kafka = kafka;
  }

  /**
   * The Kafka topic prefix of a run ({@code nexmark-<run number>}, from the run directory's name
   * {@code <nnn>-...}): the run's topics (intermediate streams, state changelog) are
   * {@code <prefix>.<job>.<id>.<stream>} and {@code <prefix>-<job>-<id>-...}, its own within the
   * suite, and deleted after it.
   */
  static String topicPrefix(Path runDir) {
    String name = runDir.getFileName().toString();
    int dash = name.indexOf('-');
    String number = dash > 0 ? name.substring(0, dash) : name;
    return "nexmark-" + number.replaceAll("[^A-Za-z0-9_]", "_").toLowerCase(java.util.Locale.ROOT);
  }

  /**
   * The run's {@code --samzaConfigOverride}: the broker's address and the run's topic prefix, then
   * the user's own entries from a pass-through {@code --samzaConfigOverride} (later entries win).
   */
  static String samzaOverride(String bootstrapServers, Path runDir, String userOverride) {
    String o = "weir.kafka.bootstrap.servers=" + bootstrapServers + ",weir.kafka.topic.prefix=" + topicPrefix(runDir);
    return userOverride == null || userOverride.isBlank() ? o : o + "," + userOverride;
  }

  /**
   * Profiling of every run: async-profiler loaded into each child JVM from its start (CPU with
   * {@code engine}, spans, and JFR's allocation samples; settings in {@code profile.jfr.jfc})
   * writing {@code profile.jfr} into the run's folder, then
   * flame graphs, collapsed stacks and a summary in {@code <run>/profile/}, cut to the measured
   * interval when the harness reported it.
   *
   * @param library libasyncProfiler.so, extracted from the async-profiler jar
   * @param engine the CPU engine chosen once for the suite
   * @param preciseFrames whether samples go to the exact inlined frame, at some 3% more CPU
   *     ({@link ProfileSettings}); off by default
   */
  public record Profiling(Path library, CpuEngine engine, boolean preciseFrames) {
    ProfileSettings settings(Path runDir) {
      return ProfileSettings.defaults(engine, runDir.resolve("profile.jfr")).withPreciseFrames(preciseFrames);
    }
  }

  /**
   * Uses {@code classpath} (also stored in {@code file}) for every run of {@code runner} instead
   * of the build's classpath file.
   */
  public void useClasspath(RunnerKind runner, String classpath, Path file) {
    classpaths.put(runner, classpath);
    classpathFiles.put(runner, file);
  }

  /**
   * The runner's configuration of a run, as recorded in its results: the runner's throughput
   * options, then its checkpoint options (streaming runs), then its {@code --runner-options}.
   */
  Map<String, String> runnerConfiguration(RunSpec spec, Path runDir) {
    return runnerConfiguration(spec.runner(), spec.streaming(), cpus.parallelism(spec), runDir);
  }

  /**
   * As {@link #runnerConfiguration(RunSpec, Path)} for any run of {@code runner} at
   * {@code parallelism} (the suite's {@code runner-config.json} states it once per runner).
   */
  Map<String, String> runnerConfiguration(RunnerKind runner, boolean streaming, int parallelism, Path runDir) {
    Map<String, String> o = throughputAndCheckpointOptions(runner, streaming, parallelism, runDir);
    o.putAll(runnerOptions.of(runner));
    return o;
  }

  /** The runner's throughput options, then its checkpoint options in a streaming run. */
  private Map<String, String> throughputAndCheckpointOptions(RunnerKind runner, boolean streaming, int parallelism,
                                                             Path runDir) {
    Map<String, String> o = new LinkedHashMap<>(runner.runnerOptions(parallelism, runDir));
    if (streaming && checkpointIntervalMs >= 0) {
      o.putAll(runner.checkpointOptions(checkpointIntervalMs));
    }
    return o;
  }

  /**
   * The options a run gets, in order: Nexmark's, the runner's (with its checkpoint options), the
   * sweep's, the pass-through, the runner's own {@code --runner-options}.
   */
  public Map<String, String> options(RunSpec spec, Path runDir) {
    return options(spec, runDir, null);
  }

  /**
   * As {@link #options(RunSpec, Path)}; with {@code bootstrapServers} (runners that need Kafka),
   * also {@code --samzaConfigOverride} ({@link #samzaOverride}) merged with a pass-through one.
   */
  Map<String, String> options(RunSpec spec, Path runDir, String bootstrapServers) {
    Map<String, String> o = new LinkedHashMap<>();
    o.put("query", String.valueOf(spec.query()));
    o.put("numEvents", String.valueOf(spec.events()));
    if (spec.runner() != RunnerKind.BARE) {
      o.put("streaming", String.valueOf(spec.streaming()));
      o.put("manageResources", "false");
      o.put("monitorJobs", "true");
      o.put("sourceType", "DIRECT");
      o.put("sinkType", "DEVNULL");
      o.put("exportSummaryToBigQuery", "false");
      o.put("isRateLimited", "false");
      o.put("streamTimeout", "60");
      o.put("cancelStreamingJobAfterFinish", "true");
      // No --outputPath for Q10: with one, Nexmark 2.76's Query10 fails on every runner
      // ("Disabled after removal of GcsIOChannelFactory"); without, it logs instead of writing.
      if (assertCorrectness) {
        o.put("assertCorrectness", "true");
      }
    }
    o.putAll(throughputAndCheckpointOptions(spec.runner(), spec.streaming(), cpus.parallelism(spec), runDir));
    // The harness's (and the bare runner's) own options: warm-up passes before the measured one.
    if (spec.checkEvents() > 0) {
      o.put("checkEvents", String.valueOf(spec.checkEvents()));
    }
    o.put("warmupEvents", String.valueOf(spec.warmupEvents()));
    if (spec.warmupEvents() > 0 && spec.warmupSeconds() > 0) {
      o.put("warmupSeconds", String.valueOf(spec.warmupSeconds()));
    }
    if (spec.warmupEvents() > 0 && spec.warmupMaxSeconds() > spec.warmupSeconds()) {
      o.put("warmupMaxSeconds", String.valueOf(spec.warmupMaxSeconds()));
    }
    if (spec.measuredSeconds() > 0) {
      o.put("measuredSeconds", String.valueOf(spec.measuredSeconds()));
    }
    if (noDelayPass(spec)) {
      o.put("noDelayPass", "true");
    }
    o.putAll(RunCpus.childSweep(spec.sweep()));
    for (String arg : passthrough) {
      String a = arg.startsWith("--") ? arg.substring(2) : arg;
      int eq = a.indexOf('=');
      if (eq < 0) {
        o.put(a, null);
      } else {
        o.put(a.substring(0, eq), a.substring(eq + 1));
      }
    }
    o.putAll(runnerOptions.of(spec.runner()));
    if (bootstrapServers != null) {
      o.put("samzaConfigOverride", samzaOverride(bootstrapServers, runDir, o.get("samzaConfigOverride")));
    }
    o.put("perfFilename", runDir.resolve("perf.json").toString());
    return o;
  }

  /** The full child command line. */
  public List<String> command(RunSpec spec, Path runDir, String classpath) {
    return command(spec, runDir, classpath, null);
  }

  /**
   * The full child command line; {@code bootstrapServers} as in {@link #options(RunSpec, Path, String)}.
   * A run pinned to CPUs ({@link RunCpus}) starts with {@code taskset -c 0-(N-1)} and has
   * {@code -XX:ActiveProcessorCount=N}.
   *
   * @throws IllegalStateException when the run is pinned and {@code taskset} is not on PATH
   */
  List<String> command(RunSpec spec, Path runDir, String classpath, String bootstrapServers) {
    List<String> cmd = new ArrayList<>(cpus.launcher(spec));
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xms1g");
    cmd.add("-Xmx4g");
    cmd.addAll(cpus.jvmFlags(spec));
    cmd.addAll(spec.runner().jvmFlags());
    if (profiling != null) {
      cmd.addAll(profiling.settings(runDir).jvmOptions(profiling.library()));
    }
    cmd.add("-D" + "weir.harness.out=" + runDir.resolve("harness.json"));
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add(spec.runner().mainClass());
    for (Map.Entry<String, String> e : options(spec, runDir, bootstrapServers).entrySet()) {
      cmd.add(e.getValue() == null ? "--" + e.getKey() : "--" + e.getKey() + "=" + e.getValue());
    }
    return cmd;
  }

  /**
   * The entries of {@code runDir} whose names start with {@code prefix} (the files and folders of
   * a warm-up pass, or of a measured pass after the first), sorted by name; empty when there are
   * none or the folder cannot be listed.
   */
  static List<Path> passFiles(Path runDir, String prefix) {
    try (java.util.stream.Stream<Path> s = Files.list(runDir)) {
      return s.filter(p -> p.getFileName().toString().startsWith(prefix)).sorted().toList();
    } catch (IOException | java.io.UncheckedIOException e) {
      return List.of();
    }
  }

  /**
   * The perf files of the measured passes after the first ({@code perf-measured-k.json}), in pass
   * order (k = 2, 3, ...; by number, not by name).
   */
  static List<Path> measuredPerfFiles(Path runDir) {
    return passFiles(runDir, "perf-measured-").stream()
        .sorted(java.util.Comparator.comparingInt(ChildRun::passNumber)).toList();
  }

  private static int passNumber(Path perfFile) {
    String n = perfFile.getFileName().toString().replaceAll("[^0-9]", "");
    return n.isEmpty() ? Integer.MAX_VALUE : Integer.parseInt(n);
  }

  /**
   * Fills the throughput of {@code r} from its measured passes' perf objects (the first is
   * {@code perf.json}'s): events/s is all passes' events over all their Nexmark runtime, runtime
   * their sum; results/s is the first pass's result count over its runtime, and
   * {@code measuredPassResults} lists every pass's count when there was more than one pass. A pass
   * without a positive runtime or events leaves the throughput null (the run then fails as "no
   * throughput").
   */
  static void sumPasses(RunRecord r, List<JsonNode> passes) {
    double runtime = 0;
    double events = 0;
    List<Long> results = new ArrayList<>();
    for (JsonNode p : passes) {
      Double sec = positiveOrNull(p.path("runtimeSec"));
      Double rate = positiveOrNull(p.path("eventsPerSec"));
      if (sec == null || rate == null) {
        r.eventsPerSec = null;
        r.runtimeSec = null;
        r.resultsPerSec = null;
        return;
      }
      runtime += sec;
      // Nexmark's perf writes numEvents; where it does not, its rate times its runtime.
      events += p.path("numEvents").asDouble(-1) > 0 ? p.path("numEvents").asDouble() : rate * sec;
      long n = p.path("numResults").asLong(-1);
      results.add(Math.max(0, n));
    }
    r.runtimeSec = runtime;
    r.eventsPerSec = events / runtime;
    JsonNode first = passes.get(0);
    double firstRate = first.path("resultsPerSec").asDouble(-1);
    r.resultsPerSec = r.numResults == null ? null : firstRate >= 0 ? firstRate : 0.0;
    r.measuredPasses = passes.size();
    r.measuredPassResults = passes.size() > 1 ? results : null;
  }

  /** Deletes a run's scratch state directory, if any; a failure only leaves files behind. */
  private static void deleteScratch(Path dir) {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (java.util.stream.Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException | java.io.UncheckedIOException e) {
      // leave it: the run's result does not depend on it
    }
  }

  /**
   * Fills {@code r}'s check-pass fields from the check pass's perf file ({@code perf-check.json}):
   * its events, and its result count (0 when Nexmark reports -1 with events counted, as for the
   * measured pass); Nexmark's errors in it go to {@code r.nexmarkErrors}. Nothing is filled when
   * the file is missing (the run failed before or during the check pass).
   */
  void readCheckPass(RunRecord r, RunSpec spec, Path perfFile) {
    JsonNode perf = readPerf(perfFile);
    if (perf == null) {
      return;
    }
    r.checkEvents = spec.checkEvents();
    r.checkResults = resultCount(perf);
    for (JsonNode e : perf.path("errors")) {
      r.nexmarkErrors.add("check pass (" + perfFile.getFileName() + "): " + e.asText());
    }
  }

  /**
   * The result count of one pass's perf object: its {@code numResults}, or 0 when Nexmark reports
   * -1 while it measured a throughput (the results counter does not exist, i.e. the query emitted
   * nothing; the events counter worked, so metrics do); null when it reports neither.
   */
  static Long resultCount(JsonNode perf) {
    JsonNode nr = perf.path("numResults");
    if (nr.isNumber() && nr.asLong() >= 0) {
      return nr.asLong();
    }
    return positiveOrNull(perf.path("eventsPerSec")) != null ? 0L : null;
  }

  /**
   * Whether the run's JVM runs a no-delay pass after its measured passes (the harness's
   * {@code NoDelayPass}): the queries whose counts otherwise depend on timing
   * ({@link Correctness#countsTimingDependent}), on every runner but bare.
   */
  static boolean noDelayPass(RunSpec spec) {
    return spec.runner() != RunnerKind.BARE && Correctness.countsTimingDependent(spec.query(), spec.mode());
  }

  /** Runs the spec to completion or timeout; never throws for a failed run. */
  public RunRecord run(RunSpec spec, Path runDir) {
    RunRecord r = new RunRecord();
    r.runner = spec.runner().id();
    r.query = spec.query();
    r.queryName = QuerySet.name(spec.query());
    r.mode = spec.mode();
    r.events = spec.events();
    r.warmupEvents = spec.warmupEvents();
    r.repeat = spec.repeat();
    r.sweep.putAll(spec.sweep());
    r.runDir = runDir.toString();
    Map<String, Object> cfg = new LinkedHashMap<>();
    int parallelism = cpus.parallelism(spec);
    cfg.put("options", runnerConfiguration(spec, runDir));
    cfg.put("notes", spec.runner().notes(parallelism));
    if (cpus.cpus(spec) != null) {
      cfg.put("cpus", cpus.cpus(spec));
    }
    r.runnerConfig = cfg;
    r.correctness = "none";

    String classpath;
    try {
      Files.createDirectories(runDir);
      classpath = classpaths.containsKey(spec.runner())
          ? classpaths.get(spec.runner()) : layout.classpath(spec.runner());
    } catch (IOException | IllegalStateException e) {
      r.status = RunRecord.FAILED;
      r.firstErrorLine = e.getMessage();
      return r;
    }
    String bootstrapServers = null;
    if (spec.runner().needsKafka()) {
      try {
        if (kafka == null) {
          throw new IllegalStateException(spec.runner().id() + " needs a Kafka broker and the suite has none");
        }
        bootstrapServers = kafka.bootstrapServers();
      } catch (IllegalStateException e) {
        r.status = RunRecord.FAILED;
        r.firstErrorLine = e.getMessage();
        return r;
      }
    }
    List<String> cmd;
    try {
      cmd = command(spec, runDir, classpath, bootstrapServers);
    } catch (IllegalStateException e) {
      r.status = RunRecord.FAILED;
      r.firstErrorLine = e.getMessage();
      return r;
    }
    r.command = abbreviateClasspath(cmd, spec.runner());
    writeScript(runDir, cmd);
    if (profiling != null) {
      try {
        profiling.settings(runDir).writeAllocationSettings();
      } catch (IOException e) {
        r.status = RunRecord.FAILED;
        r.firstErrorLine = "cannot write the profiler's allocation settings: " + e.getMessage();
        return r;
      }
    }
    Path log = runDir.resolve("output.log");
    long t0 = System.nanoTime();
    Process p;
    try {
      p = new ProcessBuilder(cmd).directory(runDir.toFile()).redirectErrorStream(true)
          .redirectOutput(log.toFile()).start();
    } catch (IOException e) {
      r.status = RunRecord.FAILED;
      r.firstErrorLine = "cannot start child JVM: " + e.getMessage();
      return r;
    }
    running = p;
    boolean finished;
    try {
      finished = p.waitFor(timeoutSec, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      finished = false;
    }
    if (!finished) {
      killTree(p);
    }
    running = null;
    r.wallSec = (System.nanoTime() - t0) / 1e9;
    // The runners' state (Weir's RocksDB stores and checkpoints, Flink's RocksDB) is scratch once
    // the child is gone; a cancelled streaming job keeps it, and a sweep would fill the disk.
    for (String scratch : List.of("weir-state", "flink-state")) {
      deleteScratch(runDir.resolve(scratch));
      // The harness's check pass (CheckPass): <scratch>-check; its warm-up passes (WarmupPass):
      // <scratch>-warmup, <scratch>-warmup-2, ...; its measured passes after the first
      // (MeasuredPasses): <scratch>-measured-2, ...
      for (String pass : List.of("-check", "-warmup", "-measured")) {
        for (Path other : passFiles(runDir, scratch + pass)) {
          deleteScratch(other);
        }
      }
    }
    if (bootstrapServers != null) {
      // A cancelled (streaming) or killed Samza job keeps its topics; the next runs need none of them.
      String problem = kafka.deleteTopics(topicPrefix(runDir));
      if (problem != null) {
        System.err.println("weir nexmark: " + problem);
      }
    }
    readFacts(r, runDir.resolve("harness.json"));
    JsonNode perf = readPerf(runDir.resolve("perf.json"));
    if (perf != null) {
      r.numResults = resultCount(perf);
      for (JsonNode e : perf.path("errors")) {
        r.nexmarkErrors.add(e.asText());
      }
      // The measured passes after the first (MeasuredPasses): perf-measured-2.json, ...
      List<JsonNode> passes = new ArrayList<>();
      passes.add(perf);
      for (Path more : measuredPerfFiles(runDir)) {
        JsonNode morePerf = readPerf(more);
        if (morePerf == null) {
          r.nexmarkErrors.add("measured pass (" + more.getFileName() + "): no perf written");
          continue;
        }
        passes.add(morePerf);
        for (JsonNode e : morePerf.path("errors")) {
          r.nexmarkErrors.add("measured pass (" + more.getFileName() + "): " + e.asText());
        }
      }
      sumPasses(r, passes);
    }
    if (spec.checkEvents() > 0) {
      readCheckPass(r, spec, runDir.resolve("perf-check.json"));
    }
    if (noDelayPass(spec)) {
      JsonNode noDelayPerf = readPerf(runDir.resolve("perf-nodelay.json"));
      if (noDelayPerf != null) {
        r.noDelayResults = resultCount(noDelayPerf);
        for (JsonNode e : noDelayPerf.path("errors")) {
          r.nexmarkErrors.add("no-delay pass (perf-nodelay.json): " + e.asText());
        }
      }
      JsonNode batchPerf = readPerf(runDir.resolve("perf-nodelay-batch.json"));
      if (batchPerf != null && batchPerf.path("errors").isEmpty()) {
        r.noDelayBatchResults = resultCount(batchPerf); // a reference only: its errors do not fail the run
      }
    }
    for (Path warm : spec.warmupEvents() > 0 ? passFiles(runDir, "perf-warmup") : List.<Path>of()) {
      JsonNode warmPerf = readPerf(warm);
      if (warmPerf != null) {
        for (JsonNode e : warmPerf.path("errors")) {
          r.nexmarkErrors.add("warm-up pass (" + warm.getFileName() + "): " + e.asText());
        }
      }
    }
    if (!finished) {
      r.status = RunRecord.TIMEOUT;
      r.exitStatus = null;
      String last = lastLine(log);
      r.firstErrorLine = "timed out after " + timeoutSec + " s; process tree killed"
          + (last == null ? "" : "; last log line: " + last);
      return r;
    }
    r.exitStatus = p.exitValue();
    if (r.exitStatus != 0) {
      r.status = RunRecord.FAILED;
      r.firstErrorLine = firstNonNull(r.firstErrorLine, firstErrorLine(log),
          "exit status " + r.exitStatus);
    } else if (!r.nexmarkErrors.isEmpty()) {
      r.status = RunRecord.FAILED;
      r.firstErrorLine = "Nexmark reported: " + r.nexmarkErrors.get(0);
    } else if (r.eventsPerSec == null || r.numResults == null) {
      r.status = RunRecord.FAILED;
      r.firstErrorLine = firstNonNull(firstErrorLine(log),
          perf == null ? "no perf file written (Nexmark measured nothing)"
              : "Nexmark reported no throughput (metrics missing?)");
    } else {
      r.status = RunRecord.OK;
      r.firstErrorLine = null;
    }
    if (assertCorrectness && spec.runner() != RunnerKind.BARE && Correctness.hasModel(spec.query())) {
      Correctness.fromAssertion(r, log);
    }
    if (profiling != null) {
      profile(r, spec, runDir, perf);
    }
    return r;
  }

  /**
   * Writes the run's profile. The window approximates Nexmark's measured interval: it ends when
   * the launcher returned and starts Nexmark's runtime plus its shutdown delay earlier (never
   * before the launcher started), so JVM start-up and pipeline construction stay out; with several
   * measured passes it starts when the first began. Without
   * harness timestamps (bare runs) the whole recording is used.
   */
  private void profile(RunRecord r, RunSpec spec, Path runDir, JsonNode perf) {
    ProfileSettings settings = profiling.settings(runDir);
    if (!Files.isRegularFile(settings.jfr())) {
      r.profiling = null;
      return;
    }
    ProfileReport.Window window = ProfileReport.Window.ALL;
    JsonNode h = readJson(runDir.resolve("harness.json"));
    if (h != null && h.path("nexmarkEndEpochMs").isNumber() && perf != null && perf.path("runtimeSec").isNumber()) {
      long end = h.get("nexmarkEndEpochMs").asLong();
      long start = h.path("nexmarkStartEpochMs").asLong(0);
      double tailSec = Math.max(0, perf.path("shutdownDelaySec").asDouble(0));
      long from = end - Math.round((perf.get("runtimeSec").asDouble() + tailSec + 0.5) * 1000);
      // Several measured passes: all of them, from the first one's start (their pipelines'
      // set-up between them included).
      window = new ProfileReport.Window(r.measuredPasses != null && r.measuredPasses > 1 ? start
          : Math.max(start, from), end);
    }
    Path out = runDir.resolve("profile");
    try {
      ProfileReport.write(settings.jfr(), out, String.format(java.util.Locale.ROOT, "%s Q%d %s", spec.runner().id(),
          spec.query(), spec.mode()), settings.engine(), settings.cpuIntervalNs(), window);
      r.profiling = out.toString();
    } catch (RuntimeException e) {
      r.profiling = null;
      r.nexmarkErrors.add("profile not written: " + e.getMessage());
    }
  }

  /** Fills {@code r} from the child's process facts ({@code harness.json}); nothing when missing. */
  void readFacts(RunRecord r, Path harnessJson) {
    JsonNode h = readJson(harnessJson);
    if (h == null) {
      return;
    }
    r.beamVersion = h.hasNonNull("beamVersion") && !h.get("beamVersion").asText().isBlank()
        ? h.get("beamVersion").asText() : null;
    r.cpuSeconds = positiveOrNull(h.path("cpuSeconds"));
    r.warmupCpuSeconds = positiveOrNull(h.path("warmupCpuSeconds"));
    if (h.path("warmupEvents").isNumber()) {
      r.warmupEvents = h.path("warmupEvents").asLong();
    }
    r.warmupPasses = h.path("warmupPasses").isNumber() ? h.path("warmupPasses").asInt() : null;
    r.warmupSec = positiveOrNull(h.path("warmupSec"));
    r.checkSec = positiveOrNull(h.path("checkPassStats").path("seconds"));
    JsonNode passes = h.path("warmupPassStats");
    if (passes.isArray() && passes.size() > 0) {
      JsonNode last = passes.get(passes.size() - 1);
      double compile = last.path("compileSeconds").asDouble(-1);
      double sec = last.path("seconds").asDouble(0);
      r.warmupCompileShare = compile >= 0 && sec > 0 ? compile / sec : null;
    }
    JsonNode measured = h.path("measuredPassStats");
    if (measured.isArray() && measured.size() > 0) {
      double compile = 0;
      double sec = 0;
      boolean known = true; // every pass reported its compile time (-1: the JVM does not)
      for (JsonNode p : measured) {
        double c = p.path("compileSeconds").asDouble(-1);
        known &= c >= 0;
        compile += c;
        sec += p.path("seconds").asDouble(0);
      }
      r.measuredSec = sec > 0 ? sec : null;
      r.measuredCompileShare = known && sec > 0 ? compile / sec : null;
    }
    r.peakRssBytes = h.path("peakRssBytes").asLong(-1) > 0 ? h.path("peakRssBytes").asLong() : null;
    r.peakRssScope = h.hasNonNull("peakRssScope") ? h.get("peakRssScope").asText() : null;
    r.warmupPeakRssBytes = h.path("warmupPeakRssBytes").asLong(-1) > 0 ? h.path("warmupPeakRssBytes").asLong() : null;
    r.gcTimeMs = h.path("gcTimeMs").isNumber() ? h.path("gcTimeMs").asLong() : null;
    r.gcCount = h.path("gcCount").isNumber() ? h.path("gcCount").asLong() : null;
    if (h.has("jvm")) {
      r.childJvm = new LinkedHashMap<>();
      h.get("jvm").fields().forEachRemaining(e -> {
        if (!"inputArguments".equals(e.getKey())) {
          r.childJvm.put(e.getKey(), e.getValue().isNumber() ? e.getValue().numberValue() : e.getValue().asText());
        }
      });
    }
    if (h.hasNonNull("error")) {
      r.firstErrorLine = h.get("error").asText();
    }
  }

  /**
   * Nexmark appends to --perfFilename: comment lines, the configuration as JSON, then the perf
   * JSON (the one with "eventsPerSec"). Returns the last perf object, or null.
   */
  JsonNode readPerf(Path p) {
    if (!Files.isRegularFile(p)) {
      return null;
    }
    JsonNode found = null;
    try {
      for (String line : Files.readAllLines(p, StandardCharsets.UTF_8)) {
        String t = line.trim();
        if (t.startsWith("{") && t.contains("\"eventsPerSec\"")) {
          found = json.readTree(t);
        }
      }
      if (found == null) {
        JsonNode whole = readJson(p); // a single pretty-printed document (the bare runner's)
        if (whole != null && whole.has("eventsPerSec")) {
          found = whole;
        }
      }
    } catch (IOException e) {
      return found;
    }
    return found;
  }

  private JsonNode readJson(Path p) {
    try {
      return Files.isRegularFile(p) && Files.size(p) > 0 ? json.readTree(p.toFile()) : null;
    } catch (IOException e) {
      return null;
    }
  }

  private static Double positiveOrNull(JsonNode n) {
    return n.isNumber() && n.asDouble() > 0 && Double.isFinite(n.asDouble()) ? n.asDouble() : null;
  }

  /** The first line of the log that looks like an error and is not known to be harmless. */
  static String firstErrorLine(Path log) {
    try (BufferedReader in = Files.newBufferedReader(log, StandardCharsets.UTF_8)) {
      String line;
      while ((line = in.readLine()) != null) {
        if (ERROR_LINE.matcher(line).find() && !BENIGN.matcher(line).find()
            && !line.startsWith("\tat ")) {
          return truncate(line.trim());
        }
      }
    } catch (IOException | RuntimeException e) {
      return null;
    }
    return null;
  }

  private static String lastLine(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.ISO_8859_1);
      for (int i = lines.size() - 1; i >= 0; i--) {
        if (!lines.get(i).isBlank()) {
          return truncate(lines.get(i).trim());
        }
      }
    } catch (IOException e) {
      return null;
    }
    return null;
  }

  private static String truncate(String s) {
    return s.length() > 400 ? s.substring(0, 400) + "..." : s;
  }

  private static String firstNonNull(String... s) {
    for (String x : s) {
      if (x != null) {
        return x;
      }
    }
    return null;
  }

  /**
   * Kills the running child JVM and its descendants, if any: the driver's shutdown hook calls it, so
   * that a terminated driver (Ctrl-C, SIGTERM) leaves no benchmark JVM behind (a weir-samza child
   * would otherwise outlive the broker the suite stops). Safe from any thread.
   */
  public void killRunning() {
    Process p = running;
    if (p != null) {
      killTree(p);
    }
  }

  /** Kills the child and all its descendants, children first. */
  static void killTree(Process p) {
    p.descendants().forEach(ProcessHandle::destroyForcibly);
    p.destroyForcibly();
    try {
      p.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The command as recorded: the classpath (hundreds of jars) replaced by the shell expression that
   * reads it, {@code $(cat .../classpath.txt)}; the file holds exactly the classpath used.
   */
  private List<String> abbreviateClasspath(List<String> cmd, RunnerKind runner) {
    List<String> out = new ArrayList<>(cmd);
    int i = out.indexOf("-cp");
    if (i >= 0 && i + 1 < out.size()) {
      out.set(i + 1, "$(cat " + classpathFiles.getOrDefault(runner, layout.classpathFile(runner)) + ")");
    }
    return out;
  }

  /** Writes the exact command as a re-runnable shell script into the run directory. */
  private static void writeScript(Path runDir, List<String> cmd) {
    StringBuilder sb = new StringBuilder("#!/usr/bin/env bash\n# The exact command of this run.\ncd \"$(dirname \"$0\")\"\n");
    for (int i = 0; i < cmd.size(); i++) {
      sb.append(i == 0 ? "" : " \\\n  ").append('\'').append(cmd.get(i).replace("'", "'\\''")).append('\'');
    }
    sb.append('\n');
    try {
      Files.writeString(runDir.resolve("command.sh"), sb.toString());
    } catch (IOException e) {
      // only a convenience copy; results.json has the command too
    }
  }
}
