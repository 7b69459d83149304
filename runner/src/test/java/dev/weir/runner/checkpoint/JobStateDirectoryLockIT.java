package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job-directory lock across processes: a child JVM ({@link LockHolderMain}) holds
 * {@code <base>/<jobName>}; this JVM's attempt fails naming the path and the child's pid; once the
 * child is killed with SIGKILL (no clean-up of any kind), the OS has dropped its lock and a
 * restarted job takes the directory although the stale lock file still names the dead pid.
 * About 1 s (two JVM starts).
 */
class JobStateDirectoryLockIT {
  @TempDir
  Path base;

  @Test
  void anotherProcessHoldsTheLockUntilItIsKilled() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        LockHolderMain.class.getName(), base.toString(), "job-a")
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
      assertThat(out.readLine()).isEqualTo("LOCKED");
      assertThatThrownBy(() -> JobStateDirectory.openDurable(base, "job-a"))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(base.resolve("job-a").toString())
          .hasMessageContaining("held by process " + child.pid());
    } finally {
      child.destroyForcibly(); // SIGKILL
      assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
    }
    JobStateDirectory restarted = JobStateDirectory.openDurable(base, "job-a");
    restarted.close(true);
  }
}
