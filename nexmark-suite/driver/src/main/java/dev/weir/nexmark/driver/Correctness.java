// Role: decides the `correct` field of each run: Nexmark's model check (--assertCorrectness) when
// asked for, and otherwise the comparison of result counts across runners (both modes).
// Threading: stateless; called from the driver's main thread after the runs.
package dev.weir.nexmark.driver;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Correctness verdicts. Nexmark's model check (--assertCorrectness) counts only when it passes;
 * its failures are not verdicts because it fails on the reference runners too. Otherwise, runs of
 * the same (query, mode, events, sweep values, repeat) on different runners must report the same
 * number of results; the majority count is taken as right when there is one, and with two runners
 * that disagree both are marked false. Counts of Q6 and Q9 that differ are recorded as
 * timing-dependent in streaming mode ({@link #countsTimingDependent}), with no verdict; those runs
 * also run a no-delay pass (the same events with Nexmark's delayed events off), whose counts decide
 * the verdict: against the count the runners' batch reference passes agree on when they do
 * ({@link #batchReference}; nothing is late in batch), else compared across runners like any other. Q10 (sharding) and Q12 (processing-time triggers) are not
 * judged; Direct and Flink agree on every other query in streaming mode (and on all but Q6 in
 * batch, where Flink's batch translation fires Q6's per-element trigger differently), see
 * shared/reference/peerbench/DETAILS.md section 5.
 */
public final class Correctness {
  private Correctness() {}

  /** How {@code correctness} starts for a count recorded as timing-dependent (after "check pass: " for a check pass's). */
  static final String TIMING_DEPENDENT = "timing-dependent: ";

  /** Whether {@code correctness} records a count (measured or check pass) as timing-dependent. */
  static boolean recordsTimingDependent(String correctness) {
    return correctness != null && correctness.contains(TIMING_DEPENDENT);
  }

  /** Queries with a Nexmark model (Query0Model..Query9Model, the two side-input joins). */
  public static boolean hasModel(int query) {
    return query <= 9 || query == 13 || query == 14;
  }

  /**
   * Whether equal result counts are expected across runners: not for Q10 (one result per written
   * shard file; sharding is the runner's choice) nor Q12 (processing-time triggers).
   */
  public static boolean countsComparable(int query) {
    return query != 10 && query != 12;
  }

  /**
   * Whether a query's result count may legitimately differ from run to run, on every runner: Q6
   * and Q9 (AuctionOrBidWindowFn windows joined with CoGroupByKey, no allowed lateness) drop the
   * bids that Nexmark's generator delays past the watermark ({@code occasionalDelaySec}), and
   * which of them arrive late depends on how far each runner's watermark has moved, i.e. on
   * timing. At 200,000 events the counts still agree on Direct, Flink and Weir; at 1,000,000 they
   * vary between two runs of the same runner. Such counts, when they differ, are recorded as
   * timing-dependent, not as wrong. Only in streaming mode: a batch run has no late data (its
   * watermark moves once all input was read), so its counts stay judged.
   */
  public static boolean countsTimingDependent(int query, String mode) {
    return (query == 6 || query == 9) && "streaming".equals(mode);
  }

  /** Reads the outcome of Nexmark's PAssert-based model check from an --assertCorrectness run. */
  static void fromAssertion(RunRecord r, Path log) {
    String text;
    try {
      text = Files.readString(log, StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      text = "";
    }
    if (RunRecord.OK.equals(r.status)) {
      r.correct = Boolean.TRUE;
      r.correctness = "nexmark-model: --assertCorrectness passed";
    } else if (text.contains("AssertionError")) {
      // Not taken as a verdict: with Nexmark 2.76.0 on Beam 2.70.0 the model check also fails on
      // the reference runners (Q2 batch, 5,000 events: "wrong pipeline output" on Direct and on
      // Flink), so an AssertionError says nothing about the runner under test.
      r.correct = null;
      r.correctness = "none: --assertCorrectness raised AssertionError, but Nexmark's model check "
          + "also fails on Direct and Flink here, so it is not taken as a verdict";
    }
  }

  /**
   * One result count to compare: a run's measured count over its events, or its check pass's over
   * its check events ({@link RunRecord#checkResults}).
   */
  private record Count(RunRecord run, long events, long results, Pass pass) {
    String label() {
      return run.runner + pass.label + "=" + results;
    }

    boolean check() {
      return pass == Pass.CHECK;
    }
  }

  /**
   * The count a no-delay group's streaming passes must reach: the one their runs' batch reference
   * passes ({@link RunRecord#noDelayBatchResults}) agree on, by more than half of them and from at
   * least two runners; null when there is none. A batch run drops nothing as late, but runners
   * may fire a trigger differently in batch (Flink's batch GroupByKey fires Q6's per-element
   * trigger once per key), which is why one runner's batch count alone does not decide.
   */
  private static Long batchReference(List<Count> group) {
    Map<Long, Integer> votes = new HashMap<>();
    Map<Long, java.util.Set<String>> runners = new HashMap<>();
    int counted = 0;
    for (Count c : group) {
      if (c.run.noDelayBatchResults != null) {
        counted++;
        votes.merge(c.run.noDelayBatchResults, 1, Integer::sum);
        runners.computeIfAbsent(c.run.noDelayBatchResults, k -> new java.util.HashSet<>()).add(c.run.runner);
      }
    }
    for (Map.Entry<Long, Integer> e : votes.entrySet()) {
      if (e.getValue() * 2 > counted && runners.get(e.getKey()).size() >= 2) {
        return e.getKey();
      }
    }
    return null;
  }

  private static Verdict referenceVerdict(Count c, long reference, List<Count> group) {
    String counts = group.stream().map(Count::label).collect(Collectors.joining(", "));
    String words = c.run.mode + " count " + c.results + (c.results == reference ? " equals" : " differs from")
        + " the batch count " + reference + " that the runners' batch passes agree on (nothing is late in batch)";
    if (c.results < reference) {
      words += ": " + (reference - c.results) + " results lost to events dropped as late";
    }
    return new Verdict(c.results == reference, words + " (" + counts + ")");
  }

  /** Which pass of a run a count comes from. */
  private enum Pass {
    MEASURED(""), CHECK(" (check pass)"), NO_DELAY(" (no-delay pass)");

    final String label;

    Pass(String label) {
      this.label = label;
    }
  }

  /** One count's verdict: {@code correct} as {@link RunRecord#correct}, and the words for it. */
  record Verdict(Boolean correct, String words) {}

  /**
   * Applies the cross-runner result-count comparison to every ok run that has no verdict yet.
   *
   * <p>Counts are grouped by (query, mode, events, sweep values, repeat); a run's check pass
   * (over the events of Direct's run of the same point, {@link RunRecord#checkEvents}) joins the
   * group of those events, so with the default sizes Flink's and Weir's check passes are judged
   * with Direct's run, and their measured counts with each other. A run with both verdicts is
   * correct when neither is false and one is true; {@code correctness} gives both, the measured
   * count's first.
   */
  public static void compareCounts(List<RunRecord> runs) {
    Map<String, List<Count>> groups = new LinkedHashMap<>();
    Map<RunRecord, Verdict> passes = new HashMap<>();
    for (RunRecord r : runs) {
      if (!RunRecord.OK.equals(r.status) || "bare".equals(r.runner) || !countsComparable(r.query)) {
        continue;
      }
      Verdict ownPasses = passesAgree(r);
      if (ownPasses != null) {
        passes.put(r, ownPasses);
      }
      if (r.numResults != null) {
        groups.computeIfAbsent(groupKey(r, r.events), k -> new ArrayList<>())
            .add(new Count(r, r.events, r.numResults, Pass.MEASURED));
      }
      if (r.checkResults != null && r.checkEvents != null) {
        groups.computeIfAbsent(groupKey(r, r.checkEvents), k -> new ArrayList<>())
            .add(new Count(r, r.checkEvents, r.checkResults, Pass.CHECK));
      }
      if (r.noDelayResults != null) {
        groups.computeIfAbsent(groupKey(r, r.events) + "|no-delay", k -> new ArrayList<>())
            .add(new Count(r, r.events, r.noDelayResults, Pass.NO_DELAY));
      }
    }
    Map<RunRecord, Verdict> measured = new HashMap<>();
    Map<RunRecord, List<Verdict>> checked = new LinkedHashMap<>();
    Map<RunRecord, Verdict> noDelay = new HashMap<>();
    for (List<Count> g : groups.values()) {
      long distinctRunners = g.stream().map(x -> x.run.runner).distinct().count();
      Long reference = g.get(0).pass == Pass.NO_DELAY ? batchReference(g) : null;
      if (reference != null) {
        for (Count c : g) {
          noDelay.put(c.run, referenceVerdict(c, reference, g));
        }
        continue;
      }
      if (distinctRunners < 2) {
        continue;
      }
      Map<Long, Integer> votes = new HashMap<>();
      for (Count c : g) {
        votes.merge(c.results, 1, Integer::sum);
      }
      String counts = g.stream().map(Count::label).collect(Collectors.joining(", "));
      String where = g.stream().anyMatch(Count::check) ? " at " + g.get(0).events + " events" : "";
      Long majority = null;
      for (Map.Entry<Long, Integer> e : votes.entrySet()) {
        if (e.getValue() * 2 > g.size()) {
          majority = e.getKey();
        }
      }
      for (Count c : g) {
        RunRecord r = c.run;
        Verdict v;
        if (votes.size() == 1) {
          v = new Verdict(Boolean.TRUE, r.mode + " result counts equal across runners" + where + " (" + counts + ")");
        } else if (countsTimingDependent(r.query, r.mode) && c.pass != Pass.NO_DELAY) {
          v = new Verdict(null, TIMING_DEPENDENT + r.mode + " result counts differ across runners" + where
              + " (" + counts + "), as they do between two runs of one runner: late-data drops of "
              + "Nexmark's delayed events depend on timing; not judged");
        } else {
          v = new Verdict(Objects.equals(majority, c.results), r.mode + " result counts differ across runners"
              + where + " (" + counts + ")" + (majority == null ? "; no majority" : "; majority " + majority));
        }
        if (c.pass == Pass.CHECK) {
          checked.computeIfAbsent(r, k -> new ArrayList<>()).add(v);
        } else if (c.pass == Pass.NO_DELAY) {
          noDelay.put(r, v);
        } else {
          measured.put(r, v);
        }
      }
    }
    for (RunRecord r : runs) {
      if (r.correct != null) {
        continue; // the model check already decided
      }
      List<Verdict> all = new ArrayList<>();
      if (measured.containsKey(r)) {
        all.add(measured.get(r));
      }
      for (Verdict v : checked.getOrDefault(r, List.of())) {
        all.add(new Verdict(v.correct, "check pass: " + v.words));
      }
      if (passes.containsKey(r)) {
        all.add(passes.get(r));
      }
      if (noDelay.containsKey(r)) {
        Verdict v = noDelay.get(r);
        all.add(new Verdict(v.correct, "no-delay pass (--probDelayedEvent=0): " + v.words));
      }
      if (all.isEmpty()) {
        continue;
      }
      boolean anyFalse = all.stream().anyMatch(v -> Boolean.FALSE.equals(v.correct));
      boolean anyTrue = all.stream().anyMatch(v -> Boolean.TRUE.equals(v.correct));
      r.correct = anyFalse ? Boolean.FALSE : anyTrue ? Boolean.TRUE : null;
      r.correctness = all.stream().map(Verdict::words).collect(Collectors.joining("; "));
    }
    for (RunRecord r : runs) {
      if (r.correct == null && "none".equals(r.correctness)) {
        r.correctness = !RunRecord.OK.equals(r.status) ? "none: the run did not finish ok"
            : "bare".equals(r.runner) ? "none: bare pseudo-runner (no pipeline)"
            : !countsComparable(r.query) ? notJudged(r.query)
            : "none: no other runner's result count to compare with";
      }
    }
  }

  /**
   * The verdict on a run's own measured passes, which run the same query over the same events in
   * one JVM (the first pass's count is the one compared across runners): they must all count alike,
   * so a later pass that counts otherwise is wrong even when the first agreed with every runner.
   * Timing-dependent counts (Q6, Q9 in streaming mode) that differ get no verdict. Null with one
   * pass.
   */
  static Verdict passesAgree(RunRecord r) {
    if (r.measuredPassResults == null || r.measuredPassResults.size() < 2) {
      return null;
    }
    long distinct = r.measuredPassResults.stream().distinct().count();
    int n = r.measuredPassResults.size();
    if (distinct == 1) {
      return new Verdict(Boolean.TRUE, "all " + n + " measured passes counted " + r.measuredPassResults.get(0));
    }
    if (countsTimingDependent(r.query, r.mode)) {
      return new Verdict(null, TIMING_DEPENDENT + "the " + n + " measured passes counted "
          + r.measuredPassResults + " over the same events; not judged");
    }
    return new Verdict(Boolean.FALSE, "the " + n + " measured passes counted " + r.measuredPassResults
        + " over the same events");
  }

  /**
   * Why a query's count is not judged (Q10, Q12), in the words a run's {@code correctness} gives.
   * Q10 would be judged by the files it writes, but Nexmark 2.76's Query10 refuses an
   * {@code --outputPath} on every runner ("Disabled after removal of GcsIOChannelFactory"), so it
   * writes none and counts one result per pane of its per-shard windows, and the panes depend on
   * each runner's bundling and triggering. Q12 counts panes of processing-time triggers, which
   * depend on how fast the runner is.
   */
  static String notJudged(int query) {
    return query == 10
        ? "none: Q10 writes no files here (Nexmark's Query10 refuses --outputPath on every runner), and its "
            + "count is of per-shard panes, which depend on the runner's bundling and triggering"
        : "none: Q12 counts panes of processing-time triggers, which depend on the runner's speed";
  }

  private static String groupKey(RunRecord r, long events) {
    return r.query + "|" + r.mode + "|" + events + "|" + r.sweep + "|" + r.repeat;
  }
}
