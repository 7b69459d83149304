package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Restore from a damaged checkpoint directory (issue #13, item 4): a job ({@link CrashablePipeline}
 * in a child JVM, RocksDB, two containers, a checkpoint every {@value #CHECKPOINT_INTERVAL_MS} ms)
 * runs until at least two complete checkpoints exist and is killed with SIGKILL; then the newest
 * complete checkpoint is damaged and the job restarted. It must never silently start empty:
 *
 * <ul>
 *   <li>a file of the newest checkpoint truncated (one not shared with older checkpoints through
 *       a hard link where there is one; a RocksDB checkpoint hard-links its SST files): either the
 *       job logs a WARN naming the file, falls back to an older complete checkpoint and ends with
 *       the expected results, or it fails with the file named;
 *   <li>the newest checkpoint's manifest deleted: that checkpoint is incomplete, the one before it
 *       is restored, and the results are the expected ones.
 * </ul>
 *
 * <p>Runtime: 42 s for both tests on the 2-core build machine under a load average of about 10
 * (four JVM starts; each restarted run reads the rest of {@value #COUNT} elements at
 * {@value #ELEMENTS_PER_SECOND}/s).
 */
class CorruptCheckpointIT {
  static final long COUNT = 40_000;
  static final long ELEMENTS_PER_SECOND = 5_000;
  static final int SPLITS = 2;
  static final long CHECKPOINT_INTERVAL_MS = 300;
  private static final String JOB = "corrupt-it";

  /** The state of a job killed once at least two complete checkpoints existed. */
  private record Killed(Path dir, Path out, Path state, List<String> args, Path log, List<Path> complete) {
    Path checkpoints() {
      return CrashRuns.checkpointsDirectory(state, JOB);
    }
  }

  private Killed runUntilTwoCheckpointsThenKill(String name) throws Exception {
    Path dir = CrashRuns.freshDirectory(name);
    Path out = dir.resolve("out");
    Path state = dir.resolve("state");
    Path log = dir.resolve("children.log");
    List<String> args = CrashRuns.args(out, COUNT, ELEMENTS_PER_SECOND, SPLITS, JOB, state,
        "--checkpointingIntervalMs=" + CHECKPOINT_INTERVAL_MS);
    Path checkpoints = CrashRuns.checkpointsDirectory(state, JOB);
    try (ChildJob first = ChildJob.start("first", log, args)) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (CrashRuns.completeCheckpoints(checkpoints).size() < 2) {
        assertThat(first.isAlive()).as("the first run ended before two checkpoints existed\n%s", first.tail(60))
            .isTrue();
        assertThat(System.nanoTime()).as("two complete checkpoints within 60 s under %s\n%s", checkpoints,
            first.tail(60)).isLessThan(deadline);
        Thread.sleep(10);
      }
      first.kill();
    }
    List<Path> complete = CrashRuns.completeCheckpoints(checkpoints);
    System.out.println(name + ": killed with complete checkpoints " + complete);
    return new Killed(dir, out, state, args, log, complete);
  }

  @Test
  void aTruncatedFileInTheNewestCheckpointFallsBackToAnOlderOneOrFailsNamingIt() throws Exception {
    Killed killed = runUntilTwoCheckpointsThenKill("CorruptCheckpointIT-truncated");
    Path newest = killed.complete().get(killed.complete().size() - 1);
    long newestId = CrashRuns.checkpointId(newest);
    Path victim = chooseVictim(newest);
    long size = Files.size(victim);
    try (FileChannel channel = FileChannel.open(victim, StandardOpenOption.WRITE)) {
      channel.truncate(size / 2);
    }
    System.out.println("truncated " + victim + " from " + size + " to " + size / 2 + " bytes (links: "
        + Files.getAttribute(victim, "unix:nlink") + ")");

    try (ChildJob restarted = ChildJob.start("restarted", killed.log(), killed.args())) {
      int exit = restarted.awaitExit(TimeUnit.SECONDS.toMillis(120));
      List<String> lines = restarted.lines();
      String relative = killed.state().relativize(victim).toString();
      assertThat(CrashRuns.startedWithoutCheckpoint(lines)).as("started empty although checkpoints existed\n%s",
          restarted.tail(60)).isFalse();
      if (exit == 0) {
        assertThat(lines).as("a WARN naming the truncated file %s\n%s", victim, restarted.tail(60))
            .anyMatch(l -> l.contains("WARN") && l.contains(victim.getFileName().toString())
                && (l.contains(victim.toString()) || l.contains(relative) || l.contains(newest.getFileName().toString())));
        long restored = CrashRuns.restoredId(lines);
        assertThat(restored).as("restored an older complete checkpoint than %d\n%s", newestId, restarted.tail(60))
            .isBetween(0L, newestId - 1);
        CrashRuns.assertResumedPastStart(CrashRuns.readerStarts(lines, SPLITS), "the restarted run's readers resumed from a mark");
        assertResults(killed, restarted);
        System.out.println("fell back from " + newestId + " to " + restored);
      } else {
        assertThat(lines).as("the failure names the truncated file %s (exit code %d)\n%s", victim, exit,
            restarted.tail(60)).anyMatch(l -> l.contains(victim.toString()) || l.contains(relative));
        assertThat(CrashRuns.restoredId(lines)).as("did not restore the damaged checkpoint").isNotEqualTo(newestId);
        System.out.println("failed naming " + victim + " (exit code " + exit + ")");
      }
    }
  }

  @Test
  void theNewestCheckpointWithoutItsManifestIsIgnoredAndThePreviousOneRestored() throws Exception {
    Killed killed = runUntilTwoCheckpointsThenKill("CorruptCheckpointIT-manifest");
    Path newest = killed.complete().get(killed.complete().size() - 1);
    long previousId = CrashRuns.checkpointId(killed.complete().get(killed.complete().size() - 2));
    Files.delete(newest.resolve(CrashRuns.MANIFEST));

    try (ChildJob restarted = ChildJob.start("restarted", killed.log(), killed.args())) {
      int exit = restarted.awaitExit(TimeUnit.SECONDS.toMillis(120));
      assertThat(exit).as("exit code (0 = DONE)\n%s", restarted.tail(60)).isZero();
      List<String> lines = restarted.lines();
      assertThat(CrashRuns.startedWithoutCheckpoint(lines)).as("started empty\n%s", restarted.tail(60)).isFalse();
      assertThat(CrashRuns.restoredId(lines)).as("restored the checkpoint before %s\n%s", newest, restarted.tail(60))
          .isEqualTo(previousId);
      CrashRuns.assertResumedPastStart(CrashRuns.readerStarts(lines, SPLITS), "the restarted run's readers resumed from a mark");
      assertResults(killed, restarted);
    }
  }

  private static void assertResults(Killed killed, ChildJob restarted) throws IOException {
    Map<String, String> expected = CrashablePipeline.expected(COUNT);
    assertThat(CrashRuns.diff(expected, CrashablePipeline.read(killed.out()), 40))
        .as("results after the restore\n%s", restarted.tail(60)).isEmpty();
  }

  /**
   * The file of a checkpoint to damage: a non-empty one other than the manifest, preferring one
   * that is not hard-linked from elsewhere (so that older checkpoints stay intact), the largest.
   */
  private static Path chooseVictim(Path checkpoint) throws IOException {
    List<Path> candidates = CrashRuns.files(checkpoint).stream()
        .filter(f -> !f.getFileName().toString().equals(CrashRuns.MANIFEST))
        .filter(f -> CrashRuns.size(f) > 1)
        .toList();
    assertThat(candidates).as("files in %s", checkpoint).isNotEmpty();
    Comparator<Path> unshared = Comparator.comparing(CorruptCheckpointIT::links);
    return candidates.stream().min(unshared.thenComparing(Comparator.comparingLong(CrashRuns::size).reversed()))
        .orElseThrow();
  }

  private static int links(Path file) {
    try {
      return (Integer) Files.getAttribute(file, "unix:nlink");
    } catch (IOException e) {
      return Integer.MAX_VALUE;
    }
  }
}
