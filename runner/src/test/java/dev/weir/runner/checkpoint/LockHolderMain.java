package dev.weir.runner.checkpoint;

import java.nio.file.Path;

/**
 * Child-JVM entry point of {@link JobStateDirectoryLockIT}: takes the durable directory
 * {@code args[0]/args[1]}, prints {@code LOCKED} and holds it until its standard input ends (then
 * closes it as after a failure), or until it is killed.
 */
public final class LockHolderMain {
  private LockHolderMain() {}

  public static void main(String[] args) throws Exception {
    JobStateDirectory dir = JobStateDirectory.openDurable(Path.of(args[0]), args[1]);
    System.out.println("LOCKED");
    System.out.flush();
    while (System.in.read() >= 0) {
      // hold the lock until stdin closes
    }
    dir.close(false);
  }
}
