package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue #13's crash test that cannot pass by luck: a streaming job ({@link CrashablePipeline}:
 * per-key state, event- and processing-time timers, fixed windows with a GroupByKey and a Combine,
 * a side input; RocksDB, two containers, a checkpoint every {@value #CHECKPOINT_INTERVAL_MS} ms)
 * in a child JVM is killed with SIGKILL {@value #KILLS} times at seeded random moments, restarted
 * each time with the same {@code --jobName} and {@code --stateDirectory}, and then left to finish.
 * Its result files must equal, file for file, those of an uncrashed run of the same pipeline
 * (another child JVM, run alongside), which in turn must equal what
 * {@link CrashablePipeline#expected} computes.
 *
 * <p>The seed is printed (failsafe's {@code *-output.txt}) and named in every failure; rerun with
 * {@code -Dweir.crash.seed=<seed>}. The kills are of four kinds, shuffled by the seed (five of
 * each): <b>startup</b> (0-50 ms after the child logged its job plan: while it restores its
 * checkpoint and opens its stores); the others timed from the child's {@code STARTED} line (its
 * {@code run()} returned): <b>plain</b> (a random moment 0-2.5 s after it: mid-bundle, at times
 * while the sources start or a checkpoint drains), <b>checkpoint</b> (armed 0.3-1.5 s after it, then 0-20 ms after the next new entry under
 * {@code checkpoints/}, seen through inotify: mid-checkpoint; the test counts the kills that left
 * a checkpoint without its manifest) and <b>firing</b> (armed likewise, then 0-10 ms after the
 * pipeline wrote a window's result for key 0: while the window-end timers of the other keys fire).
 * A segment is killed at the latest {@value #SEGMENT_CAP_MS} ms after {@code STARTED}.
 *
 * <p>Why a pass is not luck: results are written idempotently, so a job that silently started
 * over would also end with the right files; the test therefore also requires that every restart
 * after the first checkpoint logs {@code restored from checkpoint <id>} with ids that never go
 * back (and at least {@code KILLS / 4} different ones: a restarted job takes checkpoints too),
 * that each split's reader resumes at a position that never goes back, and that the final run
 * resumed past 0. Lost or doubled state shows in the per-key finals and in the tally of
 * window results, which are state too (a window result emitted before a crash but lost from
 * state after it changes the tally). A kill never lands after the job could have finished:
 * the source is paced at {@value #ELEMENTS_PER_SECOND}/s and a segment is killed at the latest
 * when its readers could be within reach of the end.
 *
 * <p>Runtime, measured on the 2-core build machine while other builds ran (load average about 10):
 * 128 s with {@value #COUNT} elements (main at d61a95c plus a local, uncommitted fix of the
 * post-restore checkpoint stall that kept restarted jobs from checkpointing; 11 distinct
 * checkpoints restored, 8 kills left a checkpoint without its manifest); with 200,000 elements,
 * 146-206 s while that stall made every restart resume from the same early checkpoint. Most of it is 21 JVM starts
 * (1.5-4 s each under that load) and the final run's remainder of the paced input. Issue 41 runs
 * it twice, the second time with every ParDo that may on worker threads
 * ({@code --containerThreadPoolSize=4 --taskMaxConcurrency=3}); both together took 151 s on the
 * 2-core machine, nothing else running (2026-11-29).
 */
class CrashRecoveryIT {
  static final long COUNT = 100_000;
  static final long ELEMENTS_PER_SECOND = 5_000;
  static final int SPLITS = 2;
  static final int KILLS = 20;
  static final long CHECKPOINT_INTERVAL_MS = 300;
  static final long SEGMENT_CAP_MS = 3_000;
  private static final String JOB = "crash-it";
  /** Elements per split a segment may still read before the guard kills it. */
  private static final long GUARD_MARGIN = 2_000;
  private static final Pattern FIRED = Pattern.compile("^FIRED ");

  enum Kind { STARTUP, PLAIN, CHECKPOINT, FIRING }

  /** What one kill did. */
  record Kill(int segment, Kind kind, String trigger, long msAfterStarted, boolean midCheckpoint) {}

  /**
   * @param concurrency the crashed job's concurrency options, empty for none: with them every
   *     stateless ParDo without side inputs (KeyBy, Summarize, NameSums and the file writers) runs
   *     {@code @ProcessElement} on worker threads (issue #41), and its results must still equal
   *     those of the uncrashed run without
   */
  @ParameterizedTest(name = "concurrency options [{0}]")
  @ValueSource(strings = {"", "--containerThreadPoolSize=4 --taskMaxConcurrency=3"})
  void aJobKilledTwentyTimesEndsWithTheResultsOfAnUncrashedRun(String concurrency) throws Exception {
    long seed = Long.getLong("weir.crash.seed", new SecureRandom().nextLong());
    String seedNote = "seed " + seed + " (rerun with -Dweir.crash.seed=" + seed + ")"
        + (concurrency.isEmpty() ? "" : ", " + concurrency);
    System.out.println("CrashRecoveryIT " + seedNote);
    Random random = new Random(seed);
    long started = System.nanoTime();

    Path dir = CrashRuns.freshDirectory(concurrency.isEmpty() ? "CrashRecoveryIT" : "CrashRecoveryIT-concurrent");
    Path log = dir.resolve("children.log");
    Path out = dir.resolve("out");
    Path state = dir.resolve("state");
    Path referenceOut = dir.resolve("reference-out");
    System.out.println("CrashRecoveryIT files and child logs in " + dir);

    ChildJob reference = ChildJob.start("reference", dir.resolve("reference.log"), CrashRuns.args(referenceOut,
        COUNT, 0, SPLITS, "crash-reference", dir.resolve("reference-state")));
    List<String> crashArgs = CrashRuns.args(out, COUNT, ELEMENTS_PER_SECOND, SPLITS, JOB, state,
        "--checkpointingIntervalMs=" + CHECKPOINT_INTERVAL_MS);
    if (!concurrency.isEmpty()) {
      crashArgs.addAll(List.of(concurrency.split(" ")));
    }
    Path checkpoints = CrashRuns.checkpointsDirectory(state, JOB);

    List<Kind> kinds = new ArrayList<>();
    for (int i = 0; i < KILLS; i++) {
      kinds.add(Kind.values()[i % Kind.values().length]);
    }
    Collections.shuffle(kinds, random);

    List<Kill> kills = new ArrayList<>();
    List<List<String>> segmentLines = new ArrayList<>();
    for (int segment = 0; segment < KILLS; segment++) {
      ChildJob child = ChildJob.start("segment-" + segment, log, crashArgs);
      try {
        Kill kill = killAtTheChosenMoment(child, segment, kinds.get(segment), random, checkpoints);
        assertThat(child.isAlive())
            .as("%s: segment %d ended by itself before its kill (%s)\n%s", seedNote, segment, kill, child.tail(40))
            .isTrue();
        child.kill();
        kills.add(kill);
        System.out.println("CrashRecoveryIT kill " + kill);
      } finally {
        child.close();
      }
      segmentLines.add(child.lines());
    }

    ChildJob last = ChildJob.start("final", log, crashArgs);
    int exit = last.awaitExit(TimeUnit.SECONDS.toMillis(240));
    segmentLines.add(last.lines());
    assertThat(exit).as("%s: the final run's exit code (0 = DONE)\n%s", seedNote, last.tail(60)).isZero();
    int referenceExit = reference.awaitExit(TimeUnit.SECONDS.toMillis(120));
    assertThat(referenceExit).as("the reference run's exit code\n%s", reference.tail(60)).isZero();
    long elapsedMs = (System.nanoTime() - started) / 1_000_000;

    Map<Kind, Integer> byKind = new EnumMap<>(Kind.class);
    kills.forEach(k -> byKind.merge(k.kind(), 1, Integer::sum));
    long midCheckpoint = kills.stream().filter(Kill::midCheckpoint).count();
    long afterFiring = kills.stream().filter(k -> k.trigger().equals("fired")).count();
    long guard = kills.stream().filter(k -> k.trigger().equals("guard")).count();
    System.out.printf("CrashRecoveryIT %s: %d kills %s, %d left a checkpoint without its manifest, %d right after a "
        + "window fired, %d by the end-of-input guard; %d ms in all%n", seedNote, kills.size(), byKind,
        midCheckpoint, afterFiring, guard, elapsedMs);

    // the reference itself is right
    Map<String, String> expected = CrashablePipeline.expected(COUNT);
    Map<String, String> referenceFiles = CrashablePipeline.read(referenceOut);
    assertThat(CrashRuns.diff(expected, referenceFiles, 20)).as("the uncrashed reference run's results").isEmpty();

    // every check below is reported, not only the first that fails
    SoftAssertions soft = new SoftAssertions();
    // the job restored from checkpoints instead of starting over
    long lastRestored = -1;
    long[] lastStarts = new long[SPLITS];
    StringBuilder restores = new StringBuilder();
    int restoredSegments = 0;
    Set<Long> restoredIds = new TreeSet<>();
    for (int s = 0; s < segmentLines.size(); s++) {
      List<String> lines = segmentLines.get(s);
      long restored = CrashRuns.restoredId(lines);
      boolean fresh = CrashRuns.startedWithoutCheckpoint(lines);
      long[] starts = CrashRuns.readerStarts(lines, SPLITS);
      restores.append("\n  segment ").append(s).append(": ")
          .append(restored >= 0 ? "restored " + restored : fresh ? "no checkpoint" : "(no restore line)")
          .append(", readers from ").append(Arrays.toString(starts))
          .append(", checkpoints skipped ").append(CrashRuns.linesWith(lines, "skipped: the job did not become quiescent").size());
      if (restored >= 0) {
        restoredSegments++;
        restoredIds.add(restored);
        soft.assertThat(restored).as("segment %d restored an older checkpoint than a segment before it", s)
            .isGreaterThanOrEqualTo(lastRestored);
        lastRestored = restored;
      } else if (fresh) {
        soft.assertThat(lastRestored).as("segment %d started without a checkpoint after one was restored", s)
            .isEqualTo(-1);
      }
      for (int split = 0; split < SPLITS; split++) {
        if (starts[split] >= 0) {
          soft.assertThat(starts[split]).as("segment %d split %d resumed before an earlier segment's position", s,
              split).isGreaterThanOrEqualTo(lastStarts[split]);
          lastStarts[split] = Math.max(lastStarts[split], starts[split]);
        }
      }
    }
    System.out.println("CrashRecoveryIT restores:" + restores);
    List<String> finalLines = segmentLines.get(segmentLines.size() - 1);
    soft.assertThat(CrashRuns.restoredId(finalLines)).as("the final run restored a checkpoint").isGreaterThanOrEqualTo(0);
    soft.assertThatCode(() -> CrashRuns.assertResumedPastStart(CrashRuns.readerStarts(finalLines, SPLITS),
        "the final run's readers resumed from a mark")).doesNotThrowAnyException();
    soft.assertThat(restoredSegments).as("runs that restored a checkpoint").isGreaterThanOrEqualTo(KILLS / 2);
    soft.assertThat(restoredIds).as("distinct checkpoints restored (restarted jobs take checkpoints too)")
        .hasSizeGreaterThanOrEqualTo(KILLS / 4);

    // and its results are those of the uncrashed run, file for file
    Map<String, String> crashed = CrashablePipeline.read(out);
    soft.assertThat(CrashRuns.diff(referenceFiles, crashed, 40))
        .as("results after %d kills against the uncrashed run", kills.size()).isEmpty();
    try {
      soft.assertAll();
    } catch (AssertionError e) {
      throw new AssertionError(seedNote + "; child logs in " + log + "\nrestores:" + restores + "\n"
          + e.getMessage() + "\n" + last.tail(40), e);
    }
  }

  /**
   * Waits for the moment of this segment's kill (not killing): see the class comment for the
   * kinds. Times count from the child's {@code STARTED} line (JVM start-up takes 1.5-4 s
   * depending on load); never later than {@link #SEGMENT_CAP_MS} after it, nor later than the
   * moment a reader could be within {@link #GUARD_MARGIN} elements of its split's end.
   */
  private Kill killAtTheChosenMoment(ChildJob child, int segment, Kind kind, Random random, Path checkpoints)
      throws IOException, InterruptedException {
    long plainAtMs = random.nextLong(SEGMENT_CAP_MS - 500);
    long armAtMs = 300 + random.nextLong(1_200);
    long extraMs = kind == Kind.CHECKPOINT ? random.nextLong(21) : random.nextLong(11);
    long startupMs = random.nextLong(51);
    if (kind == Kind.STARTUP) {
      int plan = child.awaitLine(0, l -> l.contains("Weir job plan"), System.nanoTime() + TimeUnit.SECONDS.toNanos(60));
      if (plan < 0) {
        return new Kill(segment, kind, child.isAlive() ? "no plan within 60 s" : "exited", -1, false);
      }
      Thread.sleep(startupMs);
      return new Kill(segment, kind, child.lines().contains("STARTED") ? "startup, after STARTED" : "startup", -1,
          false);
    }
    int startedLine = child.awaitLine(0, "STARTED"::equals, System.nanoTime() + TimeUnit.SECONDS.toNanos(60));
    if (startedLine < 0) {
      return new Kill(segment, kind, child.isAlive() ? "not started within 60 s" : "exited", child.ageMs(), false);
    }
    long startedAgeMs = child.ageMs() - (System.nanoTime() - child.lineNanos(startedLine)) / 1_000_000;
    int firedFrom = Integer.MAX_VALUE;
    String trigger = null;
    try (WatchService watch = FileSystems.getDefault().newWatchService()) {
      WatchKey key = null;
      while (trigger == null) {
        long age = child.ageMs() - startedAgeMs;
        if (!child.isAlive()) {
          return new Kill(segment, kind, "exited", child.ageMs(), false);
        }
        if (child.ageMs() >= guardMs(child)) {
          trigger = "guard";
        } else if (age >= SEGMENT_CAP_MS) {
          trigger = "cap";
        } else if (kind == Kind.PLAIN && age >= plainAtMs) {
          trigger = "time";
        } else if (kind == Kind.CHECKPOINT && age >= armAtMs) {
          if (key == null) {
            if (Files.isDirectory(checkpoints)) {
              key = checkpoints.register(watch, StandardWatchEventKinds.ENTRY_CREATE);
            }
          } else if (!key.pollEvents().isEmpty()) {
            trigger = "checkpoint";
          }
        } else if (kind == Kind.FIRING && age >= armAtMs) {
          if (firedFrom == Integer.MAX_VALUE) {
            firedFrom = child.lineCount();
          } else if (child.awaitLine(firedFrom, l -> FIRED.matcher(l).find(), System.nanoTime()) >= 0) {
            trigger = "fired";
          }
        }
        if (trigger == null) {
          try {
            watch.poll(2, TimeUnit.MILLISECONDS);
          } catch (ClosedWatchServiceException e) {
            throw new IllegalStateException(e);
          }
        }
      }
    }
    if (trigger.equals("checkpoint") || trigger.equals("fired")) {
      Thread.sleep(extraMs);
    }
    List<Path> all = CrashRuns.checkpoints(checkpoints);
    boolean midCheckpoint = !all.isEmpty()
        && !Files.exists(all.get(all.size() - 1).resolve(CrashRuns.MANIFEST));
    return new Kill(segment, kind, trigger, child.ageMs() - startedAgeMs, midCheckpoint);
  }

  /**
   * The child's age (ms) at which one of its readers could be within {@link #GUARD_MARGIN}
   * elements of its split's end, from the {@code READER} lines seen so far (Long.MAX_VALUE
   * before any).
   */
  private static long guardMs(ChildJob child) {
    List<String> lines = child.lines();
    long guard = Long.MAX_VALUE;
    long nowNanos = System.nanoTime();
    for (int i = 0; i < lines.size(); i++) {
      Matcher m = Pattern.compile("^READER split=(\\d+) from=(\\d+)").matcher(lines.get(i));
      if (m.find()) {
        long from = Long.parseLong(m.group(2));
        long left = (COUNT - from) / SPLITS - GUARD_MARGIN; // elements this split may still read
        long msToReach = left * 1000 * SPLITS / ELEMENTS_PER_SECOND;
        long lineAgeMs = child.ageMs() - (nowNanos - child.lineNanos(i)) / 1_000_000;
        guard = Math.min(guard, lineAgeMs + msToReach);
      }
    }
    return guard;
  }
}
