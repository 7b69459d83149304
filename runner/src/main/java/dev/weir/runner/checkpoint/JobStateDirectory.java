package dev.weir.runner.checkpoint;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.annotations.Internal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The on-disk home of one job's RocksDB state: where each container's storage lives, who holds
 * it, and what happens to it when the job ends.
 *
 * <p>Two kinds (the idea of a durable, named, locked directory is Samza's
 * {@code job.logged.store.base.dir} and Flink's checkpoint directory per job):
 *
 * <ul>
 *   <li><b>Durable</b> (streaming jobs): {@code <stateDirectory>/<jobName>} (the job name with
 *       every character outside {@code [A-Za-z0-9._-]} replaced by {@code _}). A lock file
 *       {@value #LOCK_FILE} in it is held with an OS file lock for the life of the job and names
 *       the holder's process id, so a second job naming the same directory fails at start with
 *       the path and that id. Each container's storage is {@code working/container-<id>}. The
 *       directory is kept when the job fails or is cancelled (it is where a restart would find
 *       its state) and deleted when the job finishes normally (nothing is left to resume).
 *       Working state left by an earlier run is not a consistent cut of anything: it is wiped at
 *       start. What a restarted job resumes from are the checkpoints in {@value #CHECKPOINTS}
 *       (see {@code checkpoint.CheckpointStore}), deleted too after a normal end.
 *   <li><b>Temporary</b> (batch jobs): {@code <stateDirectory>/job-<random>}, deleted when the
 *       job ends for any reason; a batch job starts over after a crash (as on Flink and Beam's
 *       Direct runner).
 * </ul>
 *
 * <p>Threading: {@link #open} and {@link #close} on the executor's threads, serialized by the
 * executor; {@link #containerDirectory} from any container thread (it only resolves paths).
 */
@Internal
public final class JobStateDirectory implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(JobStateDirectory.class);
  /** Name of the lock file in a durable job directory; its content is the holder's pid. */
  public static final String LOCK_FILE = "weir.lock";
  /** Sub-directory of a durable job directory holding the containers' working storage. */
  public static final String WORKING = "working";
  /** Sub-directory of a durable job directory holding its checkpoints ({@code checkpoint.CheckpointStore}). */
  public static final String CHECKPOINTS = "checkpoints";

  /**
   * Durable directories held by jobs of this JVM (absolute, normalized). Checked before the lock
   * file is opened: on Linux, closing any descriptor of a file drops the process's fcntl locks on
   * it, so a second job of this JVM must not even open the holder's lock file.
   */
  private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

  private final Path directory;
  private final boolean durable;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private boolean closed;

  private JobStateDirectory(Path directory, boolean durable, FileChannel lockChannel, FileLock lock) {
    this.directory = directory;
    this.durable = durable;
    this.lockChannel = lockChannel;
    this.lock = lock;
  }

  /**
   * Opens (creating) the durable directory of job {@code jobName} under {@code base}, takes its
   * lock and wipes working state left by an earlier run (see the class comment).
   *
   * @throws IllegalStateException if another job (this process or another) holds the directory;
   *     the message names the path and the holder's pid as written in its lock file
   * @throws UncheckedIOException if the directory or its lock file cannot be created or written,
   *     naming the path
   */
  public static JobStateDirectory openDurable(Path base, String jobName) {
    Path directory = base.resolve(directoryName(jobName));
    Path lockPath = directory.resolve(LOCK_FILE);
    Path key = directory.toAbsolutePath().normalize();
    if (!HELD.add(key)) {
      throw inUse(directory, lockPath, Long.toString(ProcessHandle.current().pid()));
    }
    FileChannel channel = null;
    boolean opened = false;
    try {
      Files.createDirectories(directory);
      channel = FileChannel.open(lockPath, StandardOpenOption.CREATE, StandardOpenOption.READ,
          StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null; // held by this JVM outside Weir
      }
      if (lock == null) {
        String holder = readHolder(lockPath);
        channel.close();
        throw inUse(directory, lockPath, holder);
      }
      channel.truncate(0);
      channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
      channel.force(true);
      CheckpointStore.deleteTree(directory.resolve(WORKING));
      opened = true;
      return new JobStateDirectory(directory, true, channel, lock);
    } catch (IOException e) {
      closeQuietly(channel);
      throw new UncheckedIOException("Cannot open the job state directory " + directory + " (" + e + ")", e);
    } finally {
      if (!opened) {
        HELD.remove(key);
      }
    }
  }

  /** Whether a job of this JVM holds {@code directory} (checked without opening its lock file). */
  static boolean heldByThisJvm(Path directory) {
    return HELD.contains(directory.toAbsolutePath().normalize());
  }

  private static IllegalStateException inUse(Path directory, Path lockPath, String holder) {
    return new IllegalStateException("The state directory " + directory + " is in use by another Weir job (lock "
        + "file " + lockPath + " held by process " + holder + "); give this job another --jobName or "
        + "--stateDirectory, or stop that job first");
  }

  /**
   * Creates a fresh temporary job directory {@code job-<random>} under {@code base}, deleted at
   * {@link #close}.
   *
   * @throws UncheckedIOException naming {@code base} if it cannot be created
   */
  public static JobStateDirectory openTemporary(Path base) {
    try {
      Files.createDirectories(base);
      return new JobStateDirectory(Files.createTempDirectory(base, "job-"), false, null, null);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create a job state directory under " + base + " (" + e + ")", e);
    }
  }

  /**
   * The directory name of job {@code jobName}: the name with every character outside
   * {@code [A-Za-z0-9._-]} replaced by {@code _} ({@code "."} and {@code ".."} become {@code "_"}).
   */
  public static String directoryName(String jobName) {
    String name = jobName == null || jobName.isEmpty() ? "_" : jobName.replaceAll("[^A-Za-z0-9._-]", "_");
    return name.equals(".") || name.equals("..") ? "_" : name;
  }

  /** The job's directory. */
  public Path directory() {
    return directory;
  }

  /** Whether this is a durable (named, locked, kept on failure) directory. */
  public boolean durable() {
    return durable;
  }

  /** The directory of container {@code id}'s storage (not created here). */
  public Path containerDirectory(int id) {
    return (durable ? directory.resolve(WORKING) : directory).resolve("container-" + id);
  }

  /**
   * Ends the job's use of the directory: a temporary one is deleted; a durable one is deleted if
   * {@code finishedNormally}, else kept; its lock is released either way. Idempotent; problems
   * are logged, never thrown (the job's own outcome matters more).
   */
  public synchronized void close(boolean finishedNormally) {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (!durable) {
        CheckpointStore.deleteTree(directory);
      } else if (finishedNormally) {
        CheckpointStore.deleteTree(directory.resolve(WORKING)); // while still locked: no other job sees it half-deleted
        CheckpointStore.deleteTree(directory.resolve(CHECKPOINTS)); // a job that ended has nothing to resume
      }
    } catch (IOException e) {
      LOG.warn("Cannot delete the job state in {}", directory, e);
    }
    if (!durable) {
      return;
    }
    try {
      lock.release();
    } catch (IOException e) {
      LOG.warn("Cannot release the lock of {}", directory, e);
    }
    closeQuietly(lockChannel);
    HELD.remove(directory.toAbsolutePath().normalize());
    if (!finishedNormally) {
      LOG.info("The state of the job is kept in {}", directory);
      return;
    }
    try {
      Files.deleteIfExists(directory.resolve(LOCK_FILE));
      Files.deleteIfExists(directory);
    } catch (IOException e) {
      LOG.debug("Cannot delete the job state directory {}", directory, e); // e.g. a file a user put there
    }
  }

  /** Closes as after a failure: see {@link #close(boolean)}. */
  @Override
  public void close() {
    close(false);
  }

  private static String readHolder(Path lockPath) {
    try {
      String content = Files.readString(lockPath, StandardCharsets.US_ASCII).trim();
      return content.isEmpty() ? "(unknown pid)" : content;
    } catch (IOException e) {
      return "(unknown pid: " + e.getMessage() + ")";
    }
  }

  private static void closeQuietly(FileChannel channel) {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException e) {
        LOG.debug("Closing a lock file failed", e);
      }
    }
  }

}
