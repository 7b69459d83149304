package dev.weir.dashboards;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The arithmetic of a runner comparison: medians over repeats, throughput ratios between runners,
 * their geometric means, step-by-step improvement rates across results files, per-query history
 * and sweep series. Pure functions over {@link ResultsFile}s; safe from any thread.
 *
 * <p>Ratios are of events/s and exist only where both runs are {@code ok}. Means of ratios are
 * geometric, as in the SPEC and Nexmark-paper tradition, so that a 2x win and a 2x loss cancel.
 */
public final class Comparison {

  /**
   * The order runners appear in, where present: ours first (embedded Weir, then Weir on samza-core),
   * then the peers, then the limit.
   */
  public static final List<String> RUNNER_ORDER = List.of("weir", "weir-samza", "flink-tuned",
      "flink-tuned-rocksdb", "flink", "direct", "bare");

  /**
   * The runners Weir's throughput is divided by, where present, in this order: Beam's Flink runner
   * tuned for speed on heap state (the default comparison's peer), tuned on RocksDB, as shipped;
   * Beam's Direct runner; the runner-less limit.
   */
  public static final List<String> PEERS = List.of("flink-tuned", "flink-tuned-rocksdb", "flink", "direct", "bare");

  private Comparison() {}

  /**
   * One (query, mode, sweep, runner) of one results file, summarised over its repeats.
   *
   * @param runner the runner
   * @param eventsPerSec median events/s over the ok repeats, or null if none was ok
   * @param status {@code ok} if any repeat was ok, else the first repeat's status
   * @param numResults results of the first ok repeat, else of the first repeat
   * @param correct false if any repeat was wrong, true if all checked repeats were right, else null
   * @param timingDependent whether, with no verdict, some repeat's count was recorded as
   *     timing-dependent (Q6/Q9 late-data drops)
   * @param eventsPerSecMin lowest events/s over the ok repeats, or null if none was ok
   * @param eventsPerSecMax highest events/s over the ok repeats, or null if none was ok
   * @param okRuns how many repeats were ok
   * @param cpuSeconds median CPU seconds over the ok repeats
   * @param cpuMicrosPerEvent median CPU µs per event over the ok repeats
   * @param compileShare median JIT compile share of the measured passes over the ok repeats
   * @param peakRssBytes median peak RSS over the ok repeats, in bytes
   * @param gcTimeMs median GC time over the ok repeats, in ms
   * @param repeats number of runs summarised
   * @param firstErrorLine the first error of the first failed repeat, if no repeat was ok
   * @param profiling the first repeat's profile location, if any
   * @param correctness how the first repeat with a verdict was judged (the driver's words, e.g. which
   *     counts were compared), else the first repeat's; may be null
   */
  public record Cell(String runner, Double eventsPerSec, Double eventsPerSecMin, Double eventsPerSecMax, int okRuns,
      String status, Long numResults, Boolean correct,
      boolean timingDependent, Double cpuSeconds, Double cpuMicrosPerEvent, Double compileShare, Long peakRssBytes, Long gcTimeMs, int repeats, String firstErrorLine, String profiling,
      String correctness) {

    /** Whether the cell has a throughput to compare. */
    public boolean ok() {
      return eventsPerSec != null;
    }
  }

  /**
   * One query in one mode (and one set of sweep values) of one results file.
   *
   * @param query the query number
   * @param queryName Nexmark's name, may be null
   * @param mode streaming or batch
   * @param sweep the sweep label ("" when not a sweep)
   * @param cells per runner, in {@link #RUNNER_ORDER}
   */
  public record Row(int query, String queryName, String mode, String sweep, Map<String, Cell> cells) {

    /** events/s of runner {@code a} over runner {@code b}, or null unless both are ok. */
    public Double ratio(String a, String b) {
      Cell ca = cells.get(a);
      Cell cb = cells.get(b);
      return ca == null || cb == null || !ca.ok() || !cb.ok() ? null : ca.eventsPerSec() / cb.eventsPerSec();
    }
  }

  /** The rows of one file, ordered by mode (streaming first), sweep, then query. */
  public static List<Row> rows(ResultsFile file) {
    Map<String, List<RunResult>> groups = file.runs().stream()
        .collect(Collectors.groupingBy(r -> r.mode() + "\u0000" + r.sweepLabel() + "\u0000" + r.query(),
            LinkedHashMap::new, Collectors.toList()));
    List<Row> rows = new ArrayList<>();
    for (List<RunResult> group : groups.values()) {
      RunResult first = group.get(0);
      Map<String, List<RunResult>> byRunner = group.stream()
          .collect(Collectors.groupingBy(RunResult::runner, TreeMap::new, Collectors.toList()));
      Map<String, Cell> cells = new LinkedHashMap<>();
      for (String runner : orderedRunners(byRunner.keySet())) {
        cells.put(runner, cell(runner, byRunner.get(runner)));
      }
      String name = group.stream().map(RunResult::queryName).filter(Objects::nonNull).findFirst().orElse(null);
      rows.add(new Row(first.query(), name, first.mode(), first.sweepLabel(), cells));
    }
    rows.sort(Comparator.comparing((Row r) -> !"streaming".equals(r.mode()))
        .thenComparing(Row::mode, Comparator.nullsFirst(Comparator.naturalOrder()))
        .thenComparing(Row::sweep)
        .thenComparingInt(Row::query));
    return rows;
  }

  /** Runners in {@link #RUNNER_ORDER} first, any others after, alphabetically. */
  public static List<String> orderedRunners(Collection<String> runners) {
    List<String> out = new ArrayList<>();
    for (String r : RUNNER_ORDER) {
      if (runners.contains(r)) {
        out.add(r);
      }
    }
    runners.stream().filter(r -> !RUNNER_ORDER.contains(r)).sorted().forEach(out::add);
    return out;
  }

  private static Cell cell(String runner, List<RunResult> runs) {
    List<RunResult> ok = runs.stream().filter(RunResult::ok).toList();
    RunResult firstOk = ok.isEmpty() ? null : ok.get(0);
    Boolean correct = null;
    if (runs.stream().anyMatch(r -> Boolean.FALSE.equals(r.correct()))) {
      correct = false;
    } else if (runs.stream().anyMatch(r -> Boolean.TRUE.equals(r.correct()))) {
      correct = true;
    }
    return new Cell(runner,
        median(ok, RunResult::eventsPerSec),
        ok.stream().map(RunResult::eventsPerSec).min(Double::compare).orElse(null),
        ok.stream().map(RunResult::eventsPerSec).max(Double::compare).orElse(null),
        ok.size(),
        firstOk != null ? "ok" : runs.get(0).status(),
        firstOk != null ? firstOk.numResults() : runs.get(0).numResults(),
        correct,
        correct == null && runs.stream().anyMatch(RunResult::timingDependent),
        median(ok, RunResult::cpuSeconds),
        median(ok, RunResult::cpuMicrosPerEvent),
        median(ok, RunResult::measuredCompileShare),
        toLong(median(ok, r -> r.peakRssBytes() == null ? null : r.peakRssBytes().doubleValue())),
        toLong(median(ok, r -> r.gcTimeMs() == null ? null : r.gcTimeMs().doubleValue())),
        runs.size(),
        firstOk != null ? null : runs.get(0).firstErrorLine(),
        runs.get(0).profiling(),
        runs.stream().filter(r -> r.correct() != null).map(RunResult::correctness).filter(Objects::nonNull)
            .findFirst().orElse(runs.get(0).correctness()));
  }

  private static Long toLong(Double d) {
    return d == null ? null : Math.round(d);
  }

  /** The median of the non-null values, or null if there are none. */
  static Double median(List<RunResult> runs, Function<RunResult, Double> field) {
    List<Double> values = runs.stream().map(field).filter(Objects::nonNull).sorted().toList();
    if (values.isEmpty()) {
      return null;
    }
    int n = values.size();
    return n % 2 == 1 ? values.get(n / 2) : (values.get(n / 2 - 1) + values.get(n / 2)) / 2;
  }

  /**
   * The geometric mean of the positive values, or null if there are none (nulls are skipped).
   *
   * @throws IllegalArgumentException if a value is zero or negative (a ratio of throughputs never is)
   */
  public static Double geometricMean(Collection<Double> values) {
    double logSum = 0;
    int n = 0;
    for (Double v : values) {
      if (v == null) {
        continue;
      }
      if (!(v > 0)) {
        throw new IllegalArgumentException("geometric mean of a non-positive value: " + v);
      }
      logSum += Math.log(v);
      n++;
    }
    return n == 0 ? null : Math.exp(logSum / n);
  }

  /** The geometric mean over rows of {@code mode} of the ratio a/b (rows lacking one are skipped). */
  public static Double geometricMeanRatio(List<Row> rows, String mode, String a, String b) {
    return geometricMean(rows.stream().filter(r -> Objects.equals(mode, r.mode()) && r.sweep().isEmpty())
        .map(r -> r.ratio(a, b)).toList());
  }

  /**
   * One step of an optimisation history: how one runner's throughput changed from one results file
   * to the next, per query, and on average.
   *
   * @param from the earlier file's label
   * @param to the later file's label
   * @param perQuery per query: later events/s over earlier events/s (queries ok in both only)
   * @param averageRate the geometric mean of {@code perQuery} minus one (0.10 = 10% faster), or
   *     null when no query was ok in both
   */
  public record Step(String from, String to, Map<Integer, Double> perQuery, Double averageRate) {}

  /**
   * The improvement steps of {@code runner} in {@code mode} across {@code files}: files are
   * ordered by {@link #chronological}, and each is compared with the previous file that ran with
   * the same {@link #comparableSettings(ResultsFile, String)} (the runner's events per run,
   * parallelism), since throughput at
   * another event count or parallelism is not an improvement or a regression.
   */
  public static List<Step> improvements(List<ResultsFile> files, String runner, String mode) {
    List<ResultsFile> ordered = chronological(files);
    List<Step> steps = new ArrayList<>();
    Map<String, ResultsFile> previous = new LinkedHashMap<>();
    for (ResultsFile current : ordered) {
      ResultsFile prior = previous.put(comparableSettings(current, runner), current);
      if (prior == null) {
        continue;
      }
      Map<Integer, Double> before = throughputByQuery(prior, runner, mode);
      Map<Integer, Double> after = throughputByQuery(current, runner, mode);
      Map<Integer, Double> ratios = new TreeMap<>();
      after.forEach((q, eps) -> {
        Double earlier = before.get(q);
        if (earlier != null) {
          ratios.put(q, eps / earlier);
        }
      });
      Double mean = geometricMean(ratios.values());
      steps.add(new Step(prior.label(), current.label(), ratios, mean == null ? null : mean - 1));
    }
    return steps;
  }

  /** The settings two files must share for their throughputs to be compared over time. */
  public static String comparableSettings(ResultsFile f) {
    return "events=" + f.settings().path("events").asText("?")
        + ", parallelism=" + f.settings().path("parallelism").asText("?");
  }

  /**
   * The settings two files must share for {@code runner}'s throughputs to be compared over time:
   * that runner's events per run ({@code settings.eventsPerRunner}, else {@code settings.events})
   * and the parallelism.
   */
  public static String comparableSettings(ResultsFile f, String runner) {
    return "events=" + eventsOf(f, runner)
        + ", parallelism=" + f.settings().path("parallelism").asText("?");
  }

  /** Events per run that {@code runner} was given in {@code f}, as text ("?" if unknown). */
  public static String eventsOf(ResultsFile f, String runner) {
    JsonNode per = f.settings().path("eventsPerRunner").path(runner);
    return per.isNumber() ? per.asText() : f.settings().path("events").asText("?");
  }

  /** Files in the order they ran (by {@code startedAt}, then path). */
  public static List<ResultsFile> chronological(List<ResultsFile> files) {
    return files.stream()
        .sorted(Comparator.comparing((ResultsFile f) -> f.startedAt() == null ? "" : f.startedAt())
            .thenComparing(f -> f.path().toString()))
        .toList();
  }

  /** Per query: the median events/s of {@code runner} in {@code mode} (non-sweep, ok runs only). */
  public static Map<Integer, Double> throughputByQuery(ResultsFile file, String runner, String mode) {
    Map<Integer, Double> out = new TreeMap<>();
    for (Row row : rows(file)) {
      Cell cell = row.cells().get(runner);
      if (Objects.equals(mode, row.mode()) && row.sweep().isEmpty() && cell != null && cell.ok()) {
        out.put(row.query(), cell.eventsPerSec());
      }
    }
    return out;
  }

  /**
   * One line of a sweep chart: a runner's throughput on one query against the values of one swept
   * option.
   *
   * @param option the swept option
   * @param runner the runner
   * @param query the query
   * @param mode the mode
   * @param values the option values, numerically ordered where they are numbers
   * @param eventsPerSec events/s per value, null where the run was not ok
   */
  public record SweepSeries(String option, String runner, int query, String mode, List<String> values,
      List<Double> eventsPerSec) {}

  /** The sweep series of a file: one per (swept option, runner, query, mode). */
  public static List<SweepSeries> sweeps(ResultsFile file) {
    Map<String, Map<String, Double>> series = new TreeMap<>();
    for (Row row : rows(file)) {
      if (row.sweep().isEmpty()) {
        continue;
      }
      for (String part : row.sweep().split(",")) {
        int eq = part.indexOf('=');
        String option = part.substring(0, eq);
        String value = part.substring(eq + 1);
        row.cells().forEach((runner, cell) -> series
            .computeIfAbsent(option + "\u0000" + runner + "\u0000" + row.query() + "\u0000" + row.mode(),
                k -> new TreeMap<>(Comparison::compareValues))
            .put(value, cell.eventsPerSec()));
      }
    }
    List<SweepSeries> out = new ArrayList<>();
    series.forEach((key, points) -> {
      String[] k = key.split("\u0000");
      out.add(new SweepSeries(k[0], k[1], Integer.parseInt(k[2]), k[3], List.copyOf(points.keySet()),
          new ArrayList<>(points.values())));
    });
    return out;
  }

  /** Orders sweep values numerically when both are numbers, else as text. */
  static int compareValues(String a, String b) {
    try {
      return Double.compare(Double.parseDouble(a), Double.parseDouble(b));
    } catch (NumberFormatException e) {
      return a.compareTo(b);
    }
  }
}
