package dev.weir.runner.checkpoint;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.apache.beam.sdk.annotations.Internal;

/**
 * The job directories under a state directory ({@code --stateDirectory}), for operators: which
 * jobs left state behind, how big and how old it is, whether a running job holds it, and removing
 * the ones no longer wanted. A streaming job keeps its directory after a failure, a cancel or a
 * stop (so that it can resume) and deletes it only after a normal end, and Beam's default
 * {@code --jobName} changes on every run: without this, directories pile up unseen. The command
 * line is {@code bin/weir state list|remove} ({@link #main}).
 *
 * <p>A directory is in use while its job holds the OS lock on its {@value JobStateDirectory#LOCK_FILE}
 * ({@link JobStateDirectory}); {@link #remove} refuses those, naming the holder's process id.
 *
 * <p>Threading: stateless; run from the command line, outside any job.
 */
@Internal
public final class StateDirectories {
  private StateDirectories() {}

  /**
   * One job's directory.
   *
   * @param name the directory's name (the job name, sanitized)
   * @param path the directory
   * @param holder the process id holding it, or null if no running job does
   * @param checkpoints complete checkpoints in it
   * @param newestCheckpointId the newest complete checkpoint's id, 0 if none
   * @param lastUsed the newest modification time of its files
   * @param sizeBytes the bytes of its files (hard-linked files counted once per link)
   */
  public record JobDirectory(String name, Path path, String holder, int checkpoints, long newestCheckpointId,
      Instant lastUsed, long sizeBytes) {
    /** Whether a running job holds the directory. */
    public boolean inUse() {
      return holder != null;
    }
  }

  /**
   * The job directories under {@code base} (those with a lock file or checkpoints), by name; none if
   * {@code base} does not exist.
   *
   * @throws UncheckedIOException naming the path if a directory cannot be read
   */
  public static List<JobDirectory> list(Path base) {
    List<JobDirectory> jobs = new ArrayList<>();
    if (!Files.isDirectory(base)) {
      return jobs;
    }
    try (Stream<Path> children = Files.list(base)) {
      for (Path dir : (Iterable<Path>) children.sorted()::iterator) {
        if (Files.isDirectory(dir) && (Files.exists(dir.resolve(JobStateDirectory.LOCK_FILE))
            || Files.isDirectory(dir.resolve(JobStateDirectory.CHECKPOINTS)))) {
          jobs.add(describe(dir));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the job directories in " + base + " (" + e + ")", e);
    }
    return jobs;
  }

  private static JobDirectory describe(Path dir) throws IOException {
    CheckpointStore store = new CheckpointStore(dir, "", 1);
    int complete = 0;
    long newest = 0;
    for (long id : store.ids()) {
      if (Files.exists(store.directory(id).resolve(CheckpointStore.MANIFEST))) {
        complete++;
        newest = id;
      }
    }
    long size = 0;
    long lastUsed = Files.getLastModifiedTime(dir).toMillis();
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        if (Files.isRegularFile(file)) {
          size += Files.size(file);
          lastUsed = Math.max(lastUsed, Files.getLastModifiedTime(file).toMillis());
        }
      }
    }
    return new JobDirectory(dir.getFileName().toString(), dir, holder(dir), complete, newest,
        Instant.ofEpochMilli(lastUsed), size);
  }

  /** The pid a running job wrote into the directory's lock file while holding its lock, or null if none holds it. */
  private static String holder(Path dir) throws IOException {
    Path lockPath = dir.resolve(JobStateDirectory.LOCK_FILE);
    if (JobStateDirectory.heldByThisJvm(dir)) {
      return Long.toString(ProcessHandle.current().pid()); // opening its lock file here would drop the lock
    }
    if (!Files.exists(lockPath)) {
      return null;
    }
    try (FileChannel channel = FileChannel.open(lockPath, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      FileLock lock = channel.tryLock();
      if (lock != null) {
        lock.release();
        return null;
      }
    }
    String pid = Files.readString(lockPath).strip();
    return pid.isEmpty() ? "unknown" : pid;
  }

  /**
   * Deletes job directory {@code name} under {@code base}.
   *
   * @throws IllegalArgumentException naming it if there is no such job directory
   * @throws IllegalStateException naming the process if a running job holds it
   * @throws UncheckedIOException naming the path if it cannot be deleted
   */
  public static void remove(Path base, String name) {
    JobDirectory job = list(base).stream().filter(j -> j.name().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no job directory " + name + " in " + base
            + " (bin/weir state list shows them)"));
    if (job.inUse()) {
      throw new IllegalStateException("the job directory " + job.path() + " is in use by process " + job.holder()
          + "; stop that job first");
    }
    try {
      CheckpointStore.deleteTree(job.path());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + job.path() + " (" + e + ")", e);
    }
  }

  /** Where jobs keep their state by default ({@code --stateDirectory}'s default). */
  public static Path defaultBase() {
    return Path.of(System.getProperty("java.io.tmpdir"), "weir-state");
  }

  /**
   * {@code list [--stateDirectory=DIR]}, {@code remove JOB... [--stateDirectory=DIR]} or
   * {@code remove --older-than-days=N [--stateDirectory=DIR]}; exits 2 on bad arguments, 1 if a
   * removal failed.
   */
  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  static int run(String[] args, PrintStream out, PrintStream err) {
    Path base = defaultBase();
    Long olderThanDays = null;
    List<String> names = new ArrayList<>();
    String command = args.length == 0 ? "" : args[0];
    for (int i = 1; i < args.length; i++) {
      String arg = args[i];
      if (arg.startsWith("--stateDirectory=")) {
        base = Path.of(arg.substring("--stateDirectory=".length()));
      } else if (arg.startsWith("--older-than-days=")) {
        try {
          olderThanDays = Long.parseLong(arg.substring("--older-than-days=".length()));
        } catch (NumberFormatException e) {
          olderThanDays = -1L;
        }
        if (olderThanDays < 0) {
          err.println("bin/weir state: --older-than-days takes a whole number of days, 0 or more (got " + arg + ")");
          return 2;
        }
      } else if (arg.startsWith("-")) {
        err.println("bin/weir state: unknown option " + arg + "; allowed: --stateDirectory=DIR, --older-than-days=N");
        return 2;
      } else {
        names.add(arg);
      }
    }
    switch (command) {
      case "list" -> {
        List<JobDirectory> jobs = list(base);
        out.printf(Locale.ROOT, "%d job director%s in %s%n", jobs.size(), jobs.size() == 1 ? "y" : "ies", base);
        for (JobDirectory job : jobs) {
          out.printf(Locale.ROOT, "  %-40s %10s  last used %s  %s%s%n", job.name(), megabytes(job.sizeBytes()),
              job.lastUsed(), job.checkpoints() == 0 ? "no checkpoint"
                  : job.checkpoints() + " checkpoint(s), newest " + job.newestCheckpointId(),
              job.inUse() ? "  IN USE by process " + job.holder() : "");
        }
        return 0;
      }
      case "remove" -> {
        if (names.isEmpty() == (olderThanDays == null)) {
          err.println("bin/weir state remove: name the job directories, or give --older-than-days=N (not both)");
          return 2;
        }
        if (olderThanDays != null) {
          Instant before = Instant.now().minus(Duration.ofDays(olderThanDays));
          for (JobDirectory job : list(base)) {
            if (!job.inUse() && job.lastUsed().isBefore(before)) {
              names.add(job.name());
            }
          }
        }
        int failed = 0;
        for (String name : names) {
          try {
            remove(base, name);
            out.println("removed " + base.resolve(name));
          } catch (RuntimeException e) {
            err.println("bin/weir state remove: " + e.getMessage());
            failed++;
          }
        }
        return failed == 0 ? 0 : 1;
      }
      default -> {
        err.println("usage: bin/weir state list [--stateDirectory=DIR]\n"
            + "       bin/weir state remove JOB... [--stateDirectory=DIR]\n"
            + "       bin/weir state remove --older-than-days=N [--stateDirectory=DIR]\n"
            + "  the job directories streaming jobs leave under --stateDirectory (default " + defaultBase() + ")");
        return command.isEmpty() || command.equals("--help") || command.equals("-h") ? 0 : 2;
      }
    }
  }

  private static String megabytes(long bytes) {
    return String.format(Locale.ROOT, "%.1f MB", bytes / 1_048_576.0);
  }
}
