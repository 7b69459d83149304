package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/weir state}: lists the job directories jobs left under a state directory with their
 * checkpoints and whether a running job holds them, removes the ones named or unused for a number
 * of days, and never removes one in use.
 */
class StateDirectoriesTest {
  @TempDir Path base;

  private Path stoppedJob(String name, long checkpoints) throws IOException {
    JobStateDirectory dir = JobStateDirectory.openDurable(base, name);
    CheckpointStore store = new CheckpointStore(dir.directory(), name, 5);
    for (long id = 1; id <= checkpoints; id++) {
      store.prepare(id);
      Files.createDirectories(store.containerDirectory(id, 0));
      Files.writeString(store.containerDirectory(id, 0).resolve("000001.sst"), "x".repeat(1000));
      store.complete(id, new PlanFingerprint(List.of("state cell layout 3")), 1);
    }
    dir.close(false); // a failed or stopped job keeps its directory
    return dir.directory();
  }

  private static void age(Path dir, int days) throws IOException {
    FileTime old = FileTime.from(Instant.now().minus(days, ChronoUnit.DAYS));
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        Files.setLastModifiedTime(file, old);
      }
    }
  }

  private String run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int exit = StateDirectories.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
    assertThat(exit).as("exit code of %s", List.of(args)).isZero();
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void list_showsEveryJobDirectory_itsCheckpoints_andWhetherARunningJobHoldsIt() throws IOException {
    stoppedJob("orders", 2);
    try (JobStateDirectory running = JobStateDirectory.openDurable(base, "clicks")) {
      List<StateDirectories.JobDirectory> jobs = StateDirectories.list(base);
      assertThat(jobs).extracting(StateDirectories.JobDirectory::name).containsExactly("clicks", "orders");
      assertThat(jobs.get(0).inUse()).isTrue();
      assertThat(jobs.get(1).inUse()).isFalse();
      assertThat(jobs.get(1).checkpoints()).isEqualTo(2);
      assertThat(jobs.get(1).newestCheckpointId()).isEqualTo(2);
      assertThat(run("list", "--stateDirectory=" + base)).contains("2 job directories").contains("IN USE by process")
          .contains("2 checkpoint(s), newest 2");
    }
  }

  @Test
  void remove_deletesNamedDirectories_andRefusesOneInUse() throws IOException {
    Path orders = stoppedJob("orders", 1);
    run("remove", "orders", "--stateDirectory=" + base);
    assertThat(orders).doesNotExist();
    try (JobStateDirectory running = JobStateDirectory.openDurable(base, "clicks")) {
      assertThatThrownBy(() -> StateDirectories.remove(base, "clicks"))
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("in use by process");
      assertThat(running.directory()).exists();
    }
    assertThatThrownBy(() -> StateDirectories.remove(base, "nothing"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no job directory nothing");
  }

  @Test
  void removeOlderThan_deletesOnlyDirectoriesUnusedThatLong() throws IOException {
    Path old = stoppedJob("old", 1);
    Path recent = stoppedJob("recent", 1);
    age(old, 10);
    assertThat(run("remove", "--older-than-days=7", "--stateDirectory=" + base)).contains("removed");
    assertThat(old).doesNotExist();
    assertThat(recent).exists();
  }
}
