// Role: the `weir nexmark` subcommand: parses options, plans the runs (sweep values x modes x
// queries x runners x repeats, runners innermost so that each query's runners run close together
// in time under the same machine load), runs them one by one as child JVMs, then writes
// results.json, results.csv, runner-config.json and prints the summary table. When weir-samza is
// planned, the suite's Kafka broker (SuiteKafka) lives from the first weir-samza run to the end.
// Threading: everything on the main thread; one child JVM at a time.
package dev.weir.nexmark.driver;

import dev.weir.profiling.AsyncProfilerLibrary;
import dev.weir.profiling.CpuEngine;
import dev.weir.profiling.ProfileSettings;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Runs Beam's Nexmark queries on several runners, each run in its own JVM, and writes the results
 * to {@code <out>/<timestamp>/}. Exit status 0 when the suite ran (failed runs are results, not
 * errors), 2 on bad options.
 */
@Command(name = "nexmark", mixinStandardHelpOptions = true,
    description = {
      "Runs Beam's Nexmark queries on the given runners, one JVM per run, and writes "
          + "results.json, results.csv and a summary table.",
      "Options after -- are passed to Nexmark/Beam untouched (and win over the driver's)."
    })
public final class NexmarkCommand implements Callable<Integer> {
  /**
   * Default events per run, per runner ({@link PerRunner}): Flink, Weir and bare at a size where
   * start-up and JIT warm-up weigh little (steady state), Direct, ~100x slower, at a size it
   * finishes within the per-run budget; the reasoning and the suite's time are in bin/weir. Direct
   * 10,000 (50,000 until session 15, 20,000 until session 20): Direct is the suite's slowest
   * runner and only a reference point (its counts are not compared with the others' at a
   * different size); at 20,000 it took 6.6 of the suite's 27 minutes, 1.9 of them on Q7 (~0.3K
   * events/s), and with the measured passes' least duration (--measured-seconds) its fast queries
   * are measured for as long at 10,000. Flink and Weir keep 500,000 and their 300,000-event
   * warm-up: less would have shortened the suite but not measured steady state.
   */
  public static final String DEFAULT_EVENTS = "500000,direct=10000";
  /**
   * Default events of the warm-up pass every child JVM runs before its measured pass, per runner
   * (same syntax as --events): enough for the JIT to have compiled the hot path of the fast
   * queries before the measured interval starts, for every runner alike (bare included); Direct,
   * ~100x slower, gets a pass of its own size's order (5,000, and no floor: below). See bin/weir. 300,000 rather than 100,000:
   * with 100,000, HotSpot's compiler threads still took 37-40% of Weir's measured-pass CPU on Q0 and
   * Q8 at 1,000,000 events, compiling the Nexmark generator's {@code advance} (first C2-compiled at
   * the end of the warm-up pass) and the object cache's eviction path (the cache never filled);
   * runner/BENCHMARKS.md, issue 14, session 13. The ten-second floor below does not make it
   * redundant on the stateful queries: with 100,000 events and the floor, Q4 and Q11 at 500,000
   * events lost 5% and 20% on Flink and 27% and 29% on Weir against 300,000 (session 15).
   */
  public static final String DEFAULT_WARMUP_EVENTS = "300000,direct=5000";
  /**
   * Default least wall time of each run's warm-up passes, seconds, for every runner alike: after
   * the {@code --warmup-events} pass, more passes run until the warm-up took this long. Why: the
   * JIT needs about the same compile time whatever a runner's event rate. With 300,000 events
   * Flink's warm-up already took 9-40 s per query, Weir's 4-5 s on the fast queries, and Weir's
   * compiler threads still ran 7.4 s in the 8.4 s measured pass of Q10 (-XX:+LogCompilation); a
   * 1,000,000-event warm-up took Weir's Q10 from 144.7K to 170.4K events/s and Q8 from 281.9K to
   * 357.4K, Flink's by 1% and 5%. runner/BENCHMARKS.md, issue 14, session 14. Direct gets no
   * floor (session 20): its one 5,000-event pass already lasts seconds, its measured pass 2-35 s,
   * and the floor cost the default command 2.5 minutes of Direct warm-up for a reference point.
   */
  public static final String DEFAULT_WARMUP_SECONDS = "10,direct=0";
  /**
   * Default most wall time of each run's warm-up while HotSpot's compilers settle, seconds, per
   * runner: 30 for Flink, Weir and bare alike, none for Direct. Why: after the 10-s floor both
   * Weir's and Flink's last warm-up pass still kept the compilers busy for about its whole wall time,
   * and the measured pass shared the two cores with C2 (compiler threads took 22-40% of Weir's
   * samples on Q10, Q11 and Q14), which moved the default command's ratios by about 20% from run to
   * run; settled (within 19-38 s for Weir on 13 of 15 queries) Weir ran 9-36% faster, Flink -8% to
   * +34% (runner/BENCHMARKS.md, issue 14, session 19). Direct is a reference point about 100x
   * slower, whose measured pass lasts 5-70 s: a settling wait there would cost minutes and move no
   * ratio the suite is about. See issue 14, session 20.
   */
  public static final String DEFAULT_WARMUP_MAX_SECONDS = "30,direct=0";
  /**
   * Default least wall time of each run's measured passes together, seconds, for every runner
   * alike: the measured pass runs again over the same events until the passes took this long
   * (the harness's MeasuredPasses). Why: after the warm-up, Weir ran Q2's 500,000 events in 0.4 s
   * and bare in 0.2 s, so one collection or one late compilation moved Weir/bare by tens of
   * percent; runs whose one pass lasts this long already are not repeated. Session 20.
   */
  public static final String DEFAULT_MEASURED_SECONDS = "5";
  /** Default per-run budget in seconds; see bin/weir. */
  public static final long DEFAULT_TIMEOUT_SEC = 150;

  /**
   * Default runners: Direct as the reference for result counts, Beam's Flink runner with the
   * settings a Flink user picks for speed (flink-tuned: object reuse, heap state; faster copy when it does not checkpoint), Weir,
   * and the runner-less limit. Until issue 42 (session 28) the peer was plain flink, Flink as
   * shipped, against which Weir's lead was 5x where against flink-tuned it was 1.8x.
   */
  public static final String DEFAULT_RUNNERS = "direct,flink-tuned,weir,bare";
  /**
   * Default checkpoint interval of streaming runs, ms, for Weir and every Flink variant alike:
   * Weir's own default (WeirPipelineOptions.checkpointingIntervalMs), so that Weir's default
   * (durable) configuration is compared with a Flink that does the same work.
   */
  public static final long DEFAULT_CHECKPOINT_INTERVAL_MS = 10_000;

  @Option(names = "--runners", split = ",", defaultValue = DEFAULT_RUNNERS,
      description = "Runners: direct, flink (Beam's Flink runner as shipped: RocksDB, no object reuse), "
          + "flink-tuned (object reuse, heap state; faster copy without checkpoints), flink-tuned-rocksdb (object "
          + "reuse, faster copy, RocksDB), "
          + "weir, weir-samza, bare (bare: Q0-Q2 only; weir-samza: Weir on samza-core with a Kafka broker "
          + "the suite starts, see --kafka). Default: ${DEFAULT-VALUE}.")
  List<String> runners;

  @Option(names = "--runner-options", paramLabel = "RUNNER=--name=value,...",
      description = "Beam options for one runner only, applied after every other (e.g. "
          + "flink=--objectReuse=true,--fasterCopy=true or weir=--maxBundleSize=100). Repeatable.")
  List<String> runnerOptionValues = new ArrayList<>();

  @Option(names = "--checkpoint-interval-ms", defaultValue = "" + DEFAULT_CHECKPOINT_INTERVAL_MS,
      description = "Checkpoint interval of streaming runs, ms, for every runner that checkpoints alike "
          + "(Weir's --checkpointingIntervalMs; every Flink variant's --checkpointingInterval, with "
          + "--shutdownSourcesAfterIdleMs=0 so that its runs end); 0 = no runner checkpoints. Direct, "
          + "bare and weir-samza (Samza's task.commit.ms) are not affected. Default: ${DEFAULT-VALUE}.")
  long checkpointIntervalMs;

  @Option(names = "--kafka", defaultValue = SuiteKafka.START, paramLabel = "start|HOST:PORT",
      description = "The Kafka broker of weir-samza runs: 'start' (the suite starts one, Kafka 3.9 KRaft on "
          + "loopback, data under the results folder, stopped at the end) or the address of an existing "
          + "one. Only used when weir-samza runs. Default: ${DEFAULT-VALUE}.")
  String kafka;

  @Option(names = "--queries", defaultValue = "0-14",
      description = "Query numbers, ranges and lists, e.g. 0-14 or 0,3,5-7 (Beam numbering: "
          + "13 BOUNDED_SIDE_INPUT_JOIN, 14 SESSION_SIDE_INPUT_JOIN). Default: ${DEFAULT-VALUE}.")
  String queries;

  @Option(names = "--modes", split = ",", defaultValue = "streaming",
      description = "streaming and/or batch. Default: ${DEFAULT-VALUE}.")
  List<String> modes;

  @Option(names = "--events", defaultValue = DEFAULT_EVENTS,
      description = "Nexmark numEvents per run: a count for every runner (1000000), or per runner "
          + "(direct=50000,flink=1000000,weir=1000000), or a default plus exceptions "
          + "(500000,direct=50000). Default: ${DEFAULT-VALUE}.")
  String events;

  @Option(names = "--warmup-events", defaultValue = DEFAULT_WARMUP_EVENTS,
      description = "Events of a warm-up pass each run's JVM makes over the same query before the "
          + "measured pass (JIT compilation and class loading then stay out of the measured "
          + "interval), for every runner alike; same syntax as --events, 0 = no warm-up "
          + "(e.g. 0, or 1000000,direct=0). CPU and GC figures cover the measured pass. "
          + "Default: ${DEFAULT-VALUE}.")
  String warmupEvents;

  @Option(names = "--warmup-seconds", defaultValue = DEFAULT_WARMUP_SECONDS,
      description = "Least wall time of each run's warm-up, seconds: after the --warmup-events pass, "
          + "the same JVM runs more warm-up passes (sized from the last pass's rate, at most 4 passes "
          + "in all) until they took this long together; 0 = the one pass only. One number for every "
          + "runner or per runner, as --events (e.g. 10,direct=0). Default: ${DEFAULT-VALUE}.")
  String warmupSeconds;

  @Option(names = "--warmup-max-seconds", defaultValue = DEFAULT_WARMUP_MAX_SECONDS,
      description = "Most wall time of each run's warm-up, seconds: past --warmup-seconds, the same JVM "
          + "runs more passes of about 4 s while HotSpot's compilers were busy for more than a fifth of "
          + "the last pass (at most 10 passes in all), until they took this long together; 0 (or at "
          + "most --warmup-seconds) = no such passes. One number or per runner, as --events. Each run "
          + "records its last warm-up pass's compile share. Default: ${DEFAULT-VALUE}.")
  String warmupMaxSeconds;

  @Option(names = "--measured-seconds", defaultValue = DEFAULT_MEASURED_SECONDS,
      description = "Least wall time of each run's measured passes, seconds: the same JVM runs the "
          + "measured pass again over the same events until the passes took this long together (at "
          + "most 20); throughput is all their events over all their runtime, the result count the "
          + "first pass's. 0 = one pass. One number or per runner, as --events. "
          + "Default: ${DEFAULT-VALUE}.")
  String measuredSeconds;

  @Option(names = "--repeat", defaultValue = "1",
      description = "Runs per point, the runners of each query interleaved (A B A B); the summary gives each runner's median events/s with its lowest-highest, and ratios of medians. Default: ${DEFAULT-VALUE}.")
  int repeat;

  @Option(names = "--timeout-per-run", defaultValue = "" + DEFAULT_TIMEOUT_SEC,
      description = "Seconds before a run's process tree is killed (status timeout). Default: ${DEFAULT-VALUE}.")
  long timeoutPerRun;

  @Option(names = "--out", description = "Results root; a <timestamp> folder is made inside. "
      + "Default: <repo>/results.")
  Path out;

  @Option(names = "--profile", description = "Profile every run with async-profiler: CPU and allocation flame graphs, "
      + "a summary and (for Weir) a per-PTransform breakdown in each run's profile/ folder, linked from results.json.")
  boolean profile;

  @Option(names = "--profile-precise-frames",
      description = "With --profile: attribute samples to the exact inlined frame (HotSpot's DebugNonSafepoints), "
          + "at some 3%% more CPU in every profiled run. Default: off.")
  boolean profilePreciseFrames;

  @Option(names = "--sweep", paramLabel = "NAME=v1,v2,...",
      description = "Vary one runner or Nexmark option across values, each its own run "
          + "(e.g. maxBundleSize=100,1000 or avgBidByteSize=100,1000). Repeatable: cartesian product.")
  List<String> sweeps = new ArrayList<>();

  @Option(names = "--assert-correctness",
      description = "Add Nexmark's --assertCorrectness (model check, Q0-Q9, Q13, Q14). Changes the "
          + "pipeline (results made bounded + PAssert), so throughput is not comparable; a pass "
          + "records correct=true, a failure null (the check also fails on Direct and Flink here).")
  boolean assertCorrectness;

  @Option(names = "--check-pass", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "When Direct runs a query over fewer events than another runner (the default: "
          + "10,000 against 500,000), that runner's JVM first runs the query once over Direct's "
          + "events, before its warm-up and counted in it, and that count is judged against "
          + "Direct's (checkEvents, checkResults, correctness in results.json). bare never runs "
          + "one, nor do Q10 and Q12, whose counts depend on the runner. Default: on; "
          + "--no-check-pass skips it.")
  boolean checkPass = true;

  @Option(names = "--cores", description = "Parallelism given to Flink and Weir, threads of bare "
      + "(>= 1); the JVM still sees every CPU. Default: --cpus if given, else available processors. "
      + "Sweepable: --sweep cores=1,2.")
  Integer cores;

  @Option(names = "--cpus", description = "Pin each run's JVM to CPUs 0..N-1 (taskset) and size it "
      + "for N (-XX:ActiveProcessorCount=N: containers, GC and JIT threads follow), N in 1..this "
      + "machine's processors; the parallelism defaults to N. For scaling measurements: "
      + "--sweep cpus=1,2. Default: no pinning.")
  Integer cpus;

  @Parameters(paramLabel = "-- NEXMARK_OPTIONS", arity = "0..*",
      description = "Beam/Nexmark options (--name=value) passed through untouched.")
  List<String> passthrough = new ArrayList<>();

  /** The plan for the current options; exposed for tests. */
  List<RunSpec> plan() {
    List<Integer> qs = QuerySet.parse(queries);
    List<RunnerKind> rs = new ArrayList<>();
    for (String r : runners) {
      RunnerKind k = RunnerKind.of(r);
      if (!rs.contains(k)) {
        rs.add(k);
      }
    }
    List<String> ms = new ArrayList<>();
    for (String m : modes) {
      String mm = m.trim().toLowerCase(Locale.ROOT);
      if (!mm.equals("streaming") && !mm.equals("batch")) {
        throw new IllegalArgumentException("unknown mode '" + m + "' (streaming, batch)");
      }
      if (!ms.contains(mm)) {
        ms.add(mm);
      }
    }
    PerRunner counts = PerRunner.parse(events);
    counts.asMap(rs); // every runner must have a count
    PerRunner warm = PerRunner.parseWarmup(warmupEvents);
    warm.asMap(rs);
    PerRunner warmSec = warmupFloor();
    warmSec.asMap(rs);
    PerRunner warmMaxSec = warmupMost();
    warmMaxSec.asMap(rs);
    PerRunner measuredSec = measuredLeast();
    measuredSec.asMap(rs);
    if (repeat < 1) {
      throw new IllegalArgumentException("--repeat must be at least 1");
    }
    RunCpus runCpus = runCpus();
    List<Sweep> parsed = new ArrayList<>();
    for (String s : sweeps) {
      Sweep sweep = Sweep.parse(s);
      runCpus.checkSweep(sweep);
      parsed.add(sweep);
    }
    for (String p : passthrough) {
      if (!p.startsWith("--")) {
        throw new IllegalArgumentException("pass-through options must look like --name=value: '" + p + "'");
      }
    }
    runnerOptions();
    if (checkpointIntervalMs < 0) {
      throw new IllegalArgumentException("--checkpoint-interval-ms=" + checkpointIntervalMs
          + " is out of range; allowed: 0 (no checkpoints) or more");
    }
    List<RunSpec> plan = new ArrayList<>();
    for (Map<String, String> combo : Sweep.combinations(parsed)) {
      for (String mode : ms) {
        for (int q : qs) {
          for (int rep = 1; rep <= repeat; rep++) {
            for (RunnerKind r : rs) {
              if (r.supports(q)) {
                plan.add(new RunSpec(r, q, mode, counts.forRunner(r), combo, rep, warm.forRunner(r),
                    warmSec.forRunner(r), warmMaxSec.forRunner(r), measuredSec.forRunner(r)));
              }
            }
          }
        }
      }
    }
    return checkPass ? withCheckPasses(plan) : plan;
  }

  /**
   * {@code plan} with a check pass ({@link RunSpec#checkEvents()}) in every run whose result count
   * can be judged against a Direct run of the same query, mode, sweep values and repeat over other
   * events: the pass runs Direct's events. Not for Direct's and bare's runs, nor for Q10 and Q12
   * ({@link Correctness#countsComparable}).
   */
  static List<RunSpec> withCheckPasses(List<RunSpec> plan) {
    Map<String, Long> directEvents = new LinkedHashMap<>();
    for (RunSpec s : plan) {
      if (s.runner() == RunnerKind.DIRECT) {
        directEvents.put(pointKey(s), s.events());
      }
    }
    List<RunSpec> out = new ArrayList<>(plan.size());
    for (RunSpec s : plan) {
      Long direct = directEvents.get(pointKey(s));
      boolean check = direct != null && direct != s.events() && s.runner() != RunnerKind.DIRECT
          && s.runner() != RunnerKind.BARE && Correctness.countsComparable(s.query());
      out.add(check ? s.withCheckEvents(direct) : s);
    }
    return out;
  }

  /** A run's point without its runner and events: query, mode, sweep values, repeat. */
  private static String pointKey(RunSpec s) {
    return s.query() + "|" + s.mode() + "|" + s.sweepLabel() + "|" + s.repeat();
  }

  /**
   * The --runner-options values, per runner.
   *
   * @throws IllegalArgumentException naming the option and the value when one is malformed
   */
  RunnerOptions runnerOptions() {
    return RunnerOptions.parse(runnerOptionValues);
  }

  /**
   * The parallelism and CPU pinning of the runs, from --cores and --cpus.
   *
   * @throws IllegalArgumentException naming the option when one is out of range
   */
  RunCpus runCpus() {
    return RunCpus.of(cores, cpus, Runtime.getRuntime().availableProcessors());
  }

  @Override
  public Integer call() throws Exception {
    List<RunSpec> plan;
    try {
      plan = plan();
    } catch (IllegalArgumentException e) {
      System.err.println("weir nexmark: " + e.getMessage());
      return 2;
    }
    if (timeoutPerRun <= 0) {
      System.err.println("weir nexmark: --timeout-per-run must be positive");
      return 2;
    }
    boolean needsKafka = plan.stream().anyMatch(s -> s.runner().needsKafka());
    if (needsKafka) {
      try {
        SuiteKafka.check(kafka);
      } catch (IllegalArgumentException e) {
        System.err.println("weir nexmark: " + e.getMessage());
        return 2;
      }
    }
    RunCpus runCpus = runCpus();
    if (plan.stream().anyMatch(s -> runCpus.cpus(s) != null)) {
      try {
        RunCpus.taskset();
      } catch (IllegalStateException e) {
        System.err.println("weir nexmark: " + e.getMessage());
        return 2;
      }
    }
    SuiteLayout layout = SuiteLayout.discover();
    Instant started = Instant.now();
    Path root = out != null ? out : layout.home().resolve("results");
    String stamp = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC).format(started);
    Path dir = root.resolve(stamp);
    for (int i = 1; Files.exists(dir); i++) {
      dir = root.resolve(stamp + "-" + i);
    }
    Files.createDirectories(dir.resolve("runs"));
    SuiteKafka suiteKafka = needsKafka ? new SuiteKafka(kafka, dir.resolve("kafka-broker")) : null;
    try {
      return runSuite(plan, layout, runCpus, started, dir, suiteKafka);
    } finally {
      if (suiteKafka != null) {
        suiteKafka.close();
      }
    }
  }

  private Integer runSuite(List<RunSpec> plan, SuiteLayout layout, RunCpus runCpus, Instant started, Path dir,
                           SuiteKafka suiteKafka) throws Exception {
    int parallelism = runCpus.parallelism();
    ChildRun.Profiling profiling = null;
    if (profile) {
      Path library = AsyncProfilerLibrary.extract();
      CpuEngine.Probe probe = CpuEngine.probe(library);
      profiling = new ChildRun.Profiling(library, probe.engine(), profilePreciseFrames);
      System.out.println("weir nexmark: --profile: async-profiler " + AsyncProfilerLibrary.version()
          + ", CPU engine " + probe.engine().event()
          + (probe.rejected().isEmpty() ? "" : " (rejected: " + String.join("; ", probe.rejected()) + ")"));
    }

    ResultsDocument doc = new ResultsDocument();
    doc.startedAt = started.toString();
    doc.settings.put("runners", runners);
    doc.settings.put("queries", QuerySet.parse(queries));
    doc.settings.put("modes", modes);
    List<RunnerKind> kinds = runners.stream().map(RunnerKind::of).distinct().toList();
    PerRunner counts = PerRunner.parse(events);
    Map<String, Long> perRunner = counts.asMap(kinds);
    // "events" stays one number (the largest count) for readers of older files; the exact count
    // of every runner is in "eventsPerRunner" and in each run record.
    doc.settings.put("events", perRunner.values().stream().mapToLong(Long::longValue).max().orElse(0));
    doc.settings.put("eventsPerRunner", perRunner);
    PerRunner warm = PerRunner.parseWarmup(warmupEvents);
    doc.settings.put("warmupEventsPerRunner", warm.asMap(kinds));
    // "warmupSeconds" and "warmupMaxSeconds" stay one number (the largest) for readers of older
    // files, as "events" does; each runner's is in the *PerRunner maps.
    PerRunner warmSec = warmupFloor();
    PerRunner warmMaxSec = warmupMost();
    PerRunner measuredSec = measuredLeast();
    doc.settings.put("warmupSeconds", warmSec.max(kinds));
    doc.settings.put("warmupSecondsPerRunner", warmSec.asMap(kinds));
    doc.settings.put("warmupMaxSeconds", warmMaxSec.max(kinds));
    doc.settings.put("warmupMaxSecondsPerRunner", warmMaxSec.asMap(kinds));
    doc.settings.put("measuredSecondsPerRunner", measuredSec.asMap(kinds));
    doc.settings.put("repeat", repeat);
    doc.settings.put("timeoutPerRunSec", timeoutPerRun);
    doc.settings.put("parallelism", parallelism);
    doc.settings.put("cpus", runCpus.cpusOption());
    doc.settings.put("sweeps", sweeps);
    doc.settings.put("passthrough", passthrough);
    doc.settings.put("runnerOptions", runnerOptions().describe());
    doc.settings.put("checkpointIntervalMs", checkpointIntervalMs);
    doc.settings.put("assertCorrectness", assertCorrectness);
    doc.settings.put("checkPass", checkPass);
    doc.settings.put("profile", profile);
    if (profiling != null) {
      doc.settings.put("profileEngine", profiling.engine().event());
      doc.settings.put("profileCpuIntervalNs", ProfileSettings.DEFAULT_CPU_INTERVAL_NS);
      doc.settings.put("profilePreciseFrames", profiling.preciseFrames());
    }
    doc.settings.put("plannedRuns", plan.size());
    doc.machine = ResultsDocument.machineFacts();
    doc.machine.put("loadAverageStart", ResultsDocument.loadAverage());
    doc.jvm = ResultsDocument.jvmFacts();
    ChildRun executor = new ChildRun(layout, runCpus, timeoutPerRun, passthrough,
        assertCorrectness, profiling, suiteKafka, runnerOptions(), checkpointIntervalMs);
    for (String r : runners) {
      RunnerKind k = RunnerKind.of(r);
      Map<String, Object> c = new LinkedHashMap<>();
      // checkpoint options only when some run is in streaming mode
      c.put("options", executor.runnerConfiguration(k, streamingPlanned(), parallelism,
          dir.resolve("runs").resolve("<run>")));
      c.put("notes", k.notes(parallelism));
      c.put("jvmFlags", k.jvmFlags());
      c.put("classpathFile", layout.classpathFile(k).toString());
      doc.runnerConfigs.put(k.id(), c);
    }
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
        .writeValue(dir.resolve("runner-config.json").toFile(), doc.runnerConfigs);

    announce(dir);
    boolean noWarmup = warm.asMap(kinds).values().stream().allMatch(n -> n == 0);
    String warmup = (noWarmup ? "with no warm-up pass" : "after a warm-up of " + warmupDescription(warm, kinds))
        + (measuredDescription(kinds).isEmpty() ? "" : "; " + measuredDescription(kinds));
    System.out.printf("weir nexmark: %d runs (%s x queries %s x %s, %s per run %s, timeout %d s each) -> %s%n",
        plan.size(), String.join(",", runners), queries, String.join(",", modes),
        counts.describe(kinds), warmup, timeoutPerRun, dir);
    // Freeze the repository's own jars (harness, runner, state-cache) for the whole suite.
    ClasspathSnapshot snapshot = new ClasspathSnapshot(layout.home(), dir.resolve("classpath"));
    for (RunnerKind k : plan.stream().map(RunSpec::runner).distinct().toList()) {
      try {
        String frozen = snapshot.freeze(layout.classpath(k));
        Path file = dir.resolve("classpath").resolve(k.id() + ".classpath.txt");
        Files.writeString(file, frozen);
        executor.useClasspath(k, frozen, file);
        Object c = doc.runnerConfigs.get(k.id());
        if (c instanceof Map) {
          @SuppressWarnings("unchecked")
          Map<String, Object> m = (Map<String, Object>) c;
          m.put("frozenClasspathFile", file.toString());
        }
      } catch (IllegalStateException e) {
        // not built: every run of this runner records the message as its first error line
      }
    }
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
        .writeValue(dir.resolve("runner-config.json").toFile(), doc.runnerConfigs);
    // A terminated driver (Ctrl-C, SIGTERM) takes its running child JVM with it.
    Thread killChild = new Thread(executor::killRunning, "weir-nexmark-kill-child");
    Runtime.getRuntime().addShutdownHook(killChild);
    try (Progress progress = new Progress(plan.size(), System.console() != null)) {
      for (int i = 0; i < plan.size(); i++) {
        RunSpec spec = plan.get(i);
        String what = String.format("%s Q%d %s%s%s", spec.runner().id(), spec.query(), spec.mode(),
            spec.sweep().isEmpty() ? "" : " " + spec.sweepLabel(),
            spec.repeat() > 1 ? " #" + spec.repeat() : "");
        progress.starting(what);
        RunRecord r = executor.run(spec, dir.resolve("runs").resolve(spec.dirName(i + 1)));
        doc.runs.add(r);
        if (suiteKafka != null) {
          doc.settings.put("kafka", suiteKafka.describe());
        }
        progress.finished(what + ": " + outcome(r));
        writeAll(doc, dir); // keep partial results on disk if the driver is interrupted
      }
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(killChild);
      } catch (IllegalStateException e) {
        // shutting down: the hook runs
      }
    }
    if (suiteKafka != null) {
      suiteKafka.close(); // before the summary: the broker is not needed any more
      doc.settings.put("kafka", suiteKafka.describe());
    }
    Correctness.compareCounts(doc.runs);
    doc.finishedAt = Instant.now().toString();
    doc.machine.put("loadAverageEnd", ResultsDocument.loadAverage());
    List<String> order = new ArrayList<>();
    for (RunSpec s : plan) {
      if (!order.contains(s.runner().id())) {
        order.add(s.runner().id());
      }
    }
    doc.summary = Summary.of(doc.runs, order);
    writeAll(doc, dir);
    System.out.println();
    System.out.print(doc.summary.table(order));
    System.out.println("warm-up per run (same JVM, not measured): "
        + (noWarmup ? "none" : warmupDescription(warm, kinds)));
    if (!measuredDescription(kinds).isEmpty()) {
      System.out.println("measured per run: " + measuredDescription(kinds));
    }
    String checkpoints = checkpointDescription(kinds);
    if (!checkpoints.isEmpty()) {
      System.out.println(checkpoints);
    }
    runnerOptions().describe().forEach((runner, o) -> System.out.println("options of " + runner + " only: " + o));
    if (!counts.uniform(kinds)) {
      System.out.println("events per run: " + counts.describe(kinds) + " (ratios compare each "
          + "runner's throughput at its own size; result counts are compared between runs of "
          + "equal size" + (checkPass && kinds.contains(RunnerKind.DIRECT)
              ? ", and every check pass's (\"check\") with Direct's run over as many events" : "") + ")");
    }
    long ok = doc.runs.stream().filter(r -> RunRecord.OK.equals(r.status)).count();
    System.out.printf("%n%d of %d runs ok.%n", ok, doc.runs.size());
    for (RunRecord r : doc.runs) {
      if (!RunRecord.OK.equals(r.status)) {
        System.out.printf("  %-6s Q%-2d %-9s %-7s %s%n", r.runner, r.query, r.mode, r.status, r.firstErrorLine);
      }
    }
    System.out.println("Results: " + dir.resolve("results.json"));
    System.out.println("         " + dir.resolve("results.csv"));
    System.out.println("Runner configuration: " + dir.resolve("runner-config.json")
        + "; per-run logs and commands: " + dir.resolve("runs"));
    return 0;
  }

  /**
   * Tells a launcher where this suite's results go: when the system property
   * {@code weir.resultsDirFile} names a file, the results folder's absolute path is written to it
   * (bin/weir then writes the HTML report next to the results, also under {@code --out}).
   */
  private static void announce(Path dir) throws java.io.IOException {
    String file = System.getProperty("weir.resultsDirFile");
    if (file != null && !file.isBlank()) {
      Files.writeString(Path.of(file), dir.toAbsolutePath().toString());
    }
  }

  private static void writeAll(ResultsDocument doc, Path dir) throws java.io.IOException {
    doc.writeJson(dir);
    doc.writeCsv(dir);
  }

  private static String outcome(RunRecord r) {
    if (RunRecord.OK.equals(r.status)) {
      return String.format(Locale.ROOT, "ok, %s events/s, %d results, %.1f s wall",
          Summary.human(r.eventsPerSec), r.numResults, r.wallSec);
    }
    return r.status + ": " + r.firstErrorLine;
  }

  /**
   * The --warmup-seconds value, per runner.
   *
   * @throws IllegalArgumentException naming the option when a value is not a whole number >= 0
   */
  private PerRunner warmupFloor() {
    return PerRunner.parseSeconds(warmupSeconds, "--warmup-seconds");
  }

  /**
   * The --warmup-max-seconds value, per runner.
   *
   * @throws IllegalArgumentException naming the option when a value is not a whole number >= 0
   */
  private PerRunner warmupMost() {
    return PerRunner.parseSeconds(warmupMaxSeconds, "--warmup-max-seconds");
  }

  /**
   * The --measured-seconds value, per runner.
   *
   * @throws IllegalArgumentException naming the option when a value is not a whole number >= 0
   */
  private PerRunner measuredLeast() {
    return PerRunner.parseSeconds(measuredSeconds, "--measured-seconds");
  }

  /**
   * E.g. "direct 5,000, weir 300,000 events, then more passes until the warm-up took 10 s (direct:
   * none), then more while the JIT compilers were busy, up to 30 s (direct: none)".
   */
  private String warmupDescription(PerRunner warm, List<RunnerKind> kinds) {
    PerRunner floor = warmupFloor();
    PerRunner most = warmupMost();
    return warm.describe(kinds) + (floor.max(kinds) > 0
        ? ", then more passes until the warm-up took " + floor.describeNonZero(kinds) : "")
        + (kinds.stream().anyMatch(k -> most.forRunner(k) > floor.forRunner(k))
        ? ", then more while the JIT compilers were busy, up to " + most.describeNonZero(kinds) : "");
  }

  /**
   * E.g. "checkpoints (streaming runs): every 10000 ms on weir, flink-tuned"; "" when no streaming
   * run is planned or no planned runner checkpoints.
   */
  String checkpointDescription(List<RunnerKind> kinds) {
    if (!streamingPlanned()) {
      return "";
    }
    List<String> on = kinds.stream().filter(k -> !k.checkpointOptions(1).isEmpty()).map(RunnerKind::id).toList();
    if (on.isEmpty()) {
      return "";
    }
    return "checkpoints (streaming runs): " + (checkpointIntervalMs == 0 ? "none on " : "every "
        + checkpointIntervalMs + " ms on ") + String.join(", ", on)
        + (on.size() < kinds.size() ? " (the others take none here)" : "");
  }

  /** Whether --modes includes streaming (the runs that checkpoint). */
  private boolean streamingPlanned() {
    return modes.stream().anyMatch(m -> "streaming".equalsIgnoreCase(m.trim()));
  }

  /** E.g. "measured passes of the same events until they took 5 s" ("" when every runner runs one). */
  private String measuredDescription(List<RunnerKind> kinds) {
    PerRunner least = measuredLeast();
    return least.max(kinds) > 0
        ? "measured passes over the same events until they took " + least.describeNonZero(kinds) : "";
  }
}
