package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/**
 * Issue 44's rescale proof: the crash tests' streaming job ({@link CrashablePipeline}: per-key
 * state, event- and processing-time timers, fixed windows with a GroupByKey and a Combine, a side
 * input; RocksDB, a checkpoint every {@value #CHECKPOINT_INTERVAL_MS} ms) in a child JVM is killed
 * first with SIGTERM, which stops it with a savepoint, then twice with SIGKILL after a checkpoint,
 * and restarted at another parallelism and number of containers each time — 2 partitions on 2
 * containers, then 4 on 3, then 1 on 1, and it ends at 3 on 2 — and must end with exactly the
 * results {@link CrashablePipeline#expected} computes. The first restart must resume from the
 * savepoint the SIGTERM logged; every restart must restore through a rescaled restore, and every
 * reader resume where the one before it stopped.
 *
 * <p>Kills land a seeded random 0-{@value #EXTRA_MS} ms after a checkpoint completed past the
 * segment's restored one (so mid-bundle, at times mid-checkpoint); the seed is printed, rerun with
 * {@code -Dweir.crash.seed=<seed>}. Why a pass is not luck: a job that restored nothing and
 * started over would be caught by the restore and reader checks; state lost or doubled on the way
 * between key groups' owners shows in the per-key finals and the windows' tallies.
 *
 * <p>Runtime: about 40 s on the 2-core build machine (four JVM starts and the paced input).
 */
class RescaleRecoveryIT {
  static final long COUNT = 100_000;
  static final long ELEMENTS_PER_SECOND = 5_000;
  static final int SPLITS = 2;
  static final long CHECKPOINT_INTERVAL_MS = 300;
  static final long EXTRA_MS = 800;
  private static final String JOB = "rescale-it";
  /** Per segment: parallelism, containers. The last one runs to the end. */
  private static final int[][] SEGMENTS = {{2, 2}, {4, 3}, {1, 1}, {3, 2}};

  @Test
  void aJobRestartedAtOtherParallelismsAfterKills_endsWithTheResultsOfAnUncrashedRun() throws Exception {
    long seed = Long.getLong("weir.crash.seed", new SecureRandom().nextLong());
    String seedNote = "seed " + seed + " (rerun with -Dweir.crash.seed=" + seed + ")";
    System.out.println("RescaleRecoveryIT " + seedNote);
    Random random = new Random(seed);
    Path dir = CrashRuns.freshDirectory("RescaleRecoveryIT");
    Path log = dir.resolve("children.log");
    Path out = dir.resolve("out");
    Path state = dir.resolve("state");
    Path checkpoints = CrashRuns.checkpointsDirectory(state, JOB);
    System.out.println("RescaleRecoveryIT files and child logs in " + dir);

    List<List<String>> segmentLines = new ArrayList<>();
    long restoredBefore = 0;
    long savepoint = -1;
    for (int s = 0; s < SEGMENTS.length; s++) {
      int parallelism = SEGMENTS[s][0];
      int containers = SEGMENTS[s][1];
      ChildJob child = ChildJob.start("segment-" + s + "-p" + parallelism + "-c" + containers, log,
          CrashRuns.args(out, COUNT, ELEMENTS_PER_SECOND, SPLITS, JOB, state, parallelism, containers,
              "--checkpointingIntervalMs=" + CHECKPOINT_INTERVAL_MS));
      try {
        if (s == SEGMENTS.length - 1) {
          int exit = child.awaitExit(TimeUnit.SECONDS.toMillis(240));
          segmentLines.add(child.lines());
          assertThat(exit).as("%s: the final run's exit code (0 = DONE)\n%s", seedNote, child.tail(60)).isZero();
          break;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        assertThat(child.awaitLine(0, "STARTED"::equals, deadline))
            .as("%s: segment %d started\n%s", seedNote, s, child.tail(40)).isGreaterThanOrEqualTo(0);
        long restored = Math.max(restoredBefore, CrashRuns.restoredId(child.lines()));
        long newest;
        do {
          Thread.sleep(20);
          List<Path> complete = CrashRuns.completeCheckpoints(checkpoints);
          newest = complete.isEmpty() ? -1 : CrashRuns.checkpointId(complete.get(complete.size() - 1));
        } while (newest <= restored && child.isAlive() && System.nanoTime() < deadline);
        Thread.sleep(random.nextLong(EXTRA_MS + 1));
        assertThat(child.isAlive()).as("%s: segment %d ended before its kill\n%s", seedNote, s, child.tail(40))
            .isTrue();
        if (s == 0) {
          int exit = child.terminate(TimeUnit.SECONDS.toMillis(60));
          System.out.println("RescaleRecoveryIT segment 0 exited with " + exit + " after SIGTERM");
          // 143 (128 + SIGTERM) from the JVM's handler, or 1 from the main's own exit once its job was cancelled
          assertThat(exit).as("%s: exit code after SIGTERM\n%s", seedNote, child.tail(40)).isIn(143, 1);
          List<String> stopped = CrashRuns.linesWith(child.lines(), "stopped with a savepoint, checkpoint ");
          assertThat(stopped).as("%s: the SIGTERM's savepoint line\n%s", seedNote, child.tail(40)).hasSize(1);
          savepoint = Long.parseLong(stopped.get(0).replaceFirst(".*stopped with a savepoint, checkpoint (\\d+).*", "$1"));
        } else {
          child.kill();
        }
        restoredBefore = restored;
        System.out.println("RescaleRecoveryIT " + (s == 0 ? "stopped (SIGTERM)" : "killed") + " segment " + s
            + " (parallelism " + parallelism
            + ", containers " + containers + ") after checkpoint " + newest);
      } finally {
        child.close();
      }
      segmentLines.add(child.lines());
    }

    SoftAssertions soft = new SoftAssertions();
    long lastRestored = -1;
    long[] lastStarts = new long[SPLITS];
    for (int s = 1; s < segmentLines.size(); s++) {
      List<String> lines = segmentLines.get(s);
      long restored = CrashRuns.restoredId(lines);
      soft.assertThat(restored).as("segment %d restored a checkpoint", s).isGreaterThan(lastRestored);
      if (s == 1) {
        soft.assertThat(restored).as("the run after the SIGTERM resumed from its savepoint").isEqualTo(savepoint);
      }
      lastRestored = restored;
      soft.assertThat(CrashRuns.linesWith(lines, "RescaledRestore")).as("segment %d restored through a rescale", s)
          .isNotEmpty();
      long[] starts = CrashRuns.readerStarts(lines, SPLITS);
      for (int split = 0; split < SPLITS; split++) {
        soft.assertThat(starts[split]).as("segment %d split %d resumed (%s)", s, split, Arrays.toString(starts))
            .isGreaterThan(lastStarts[split]);
        lastStarts[split] = Math.max(lastStarts[split], starts[split]);
      }
    }
    Map<String, String> expected = CrashablePipeline.expected(COUNT);
    soft.assertThat(CrashRuns.diff(expected, CrashablePipeline.read(out), 40))
        .as("%s: results after rescaled restores against the expected ones", seedNote).isEmpty();
    soft.assertAll();
  }
}
