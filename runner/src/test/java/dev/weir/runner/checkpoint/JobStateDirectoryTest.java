package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The job state directory: names, the lock naming its holder, what is kept and what is deleted. */
class JobStateDirectoryTest {
  private static final String PID = Long.toString(ProcessHandle.current().pid());

  @TempDir
  Path base;

  @Test
  void durableDirectoryIsNamedAfterTheJobAndItsLockFileNamesThePid() throws Exception {
    JobStateDirectory dir = JobStateDirectory.openDurable(base, "orders-job");
    try {
      assertThat(dir.directory()).isEqualTo(base.resolve("orders-job"));
      assertThat(dir.durable()).isTrue();
      assertThat(dir.containerDirectory(1)).isEqualTo(base.resolve("orders-job/working/container-1"));
      assertThat(Files.readString(dir.directory().resolve(JobStateDirectory.LOCK_FILE), StandardCharsets.US_ASCII))
          .isEqualTo(PID + "\n");
    } finally {
      dir.close(false);
    }
  }

  @Test
  void aSecondJobNamingALockedDirectoryFailsWithThePathAndThePid() {
    JobStateDirectory first = JobStateDirectory.openDurable(base, "shared");
    try {
      assertThatThrownBy(() -> JobStateDirectory.openDurable(base, "shared"))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(base.resolve("shared").toString())
          .hasMessageContaining("held by process " + PID)
          .hasMessageContaining("--jobName");
    } finally {
      first.close(false);
    }
    JobStateDirectory again = JobStateDirectory.openDurable(base, "shared"); // released by close
    again.close(true);
  }

  @Test
  void keptAfterFailureWipedAtTheNextStartDeletedAfterANormalEnd() throws Exception {
    JobStateDirectory dir = JobStateDirectory.openDurable(base, "job");
    Path container = dir.containerDirectory(0);
    Files.createDirectories(container);
    Files.writeString(container.resolve("CURRENT"), "state");
    dir.close(false);
    assertThat(container.resolve("CURRENT")).exists();

    JobStateDirectory restarted = JobStateDirectory.openDurable(base, "job");
    assertThat(restarted.containerDirectory(0)).as("no checkpoint to restore: working state wiped").doesNotExist();
    restarted.close(true);
    assertThat(base.resolve("job")).doesNotExist();
  }

  @Test
  void temporaryDirectoryIsDeletedWhateverTheOutcome() throws Exception {
    JobStateDirectory failed = JobStateDirectory.openTemporary(base);
    Files.createDirectories(failed.containerDirectory(0));
    assertThat(failed.durable()).isFalse();
    assertThat(failed.directory().getFileName().toString()).startsWith("job-");
    failed.close(false);
    assertThat(failed.directory()).doesNotExist();
  }

  @Test
  void jobNamesBecomeSafeDirectoryNames() {
    assertThat(JobStateDirectory.directoryName("a/b c:d")).isEqualTo("a_b_c_d");
    assertThat(JobStateDirectory.directoryName("..")).isEqualTo("_");
    assertThat(JobStateDirectory.directoryName("nexmark-q5_1.0")).isEqualTo("nexmark-q5_1.0");
  }
}
