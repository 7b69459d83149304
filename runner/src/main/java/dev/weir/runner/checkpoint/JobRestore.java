package dev.weir.runner.checkpoint;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.translation.JobPlan;
import dev.weir.state.StateBackend;
import java.nio.file.Path;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.options.StreamingOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a job's state lives and what it resumes from, decided once at start: takes the job's
 * {@link JobStateDirectory} (RocksDB backend), opens its {@link CheckpointStore} when the job takes
 * checkpoints, restores the newest complete checkpoint into the containers' working directories
 * (or deletes them all, {@code --restoreMode=NONE}), and logs one INFO line saying whether the job
 * is restorable, under which name and directory, and what it restored.
 *
 * <table>
 *   <caption>What a job gets</caption>
 *   <tr><th>Job</th><th>State directory</th><th>Checkpoints</th></tr>
 *   <tr><td>{@code --stateBackend=MEMORY}</td><td>none</td><td>none (not restorable)</td></tr>
 *   <tr><td>batch (bounded sources, not {@code --streaming})</td><td>temporary, deleted at the end</td>
 *       <td>none (starts over after a crash)</td></tr>
 *   <tr><td>streaming, {@code --checkpointingIntervalMs=0} or a {@code TestStream}</td>
 *       <td>{@code <stateDirectory>/<jobName>}, locked</td><td>none (wiped at start)</td></tr>
 *   <tr><td>streaming</td><td>{@code <stateDirectory>/<jobName>}, locked</td>
 *       <td>every interval; the newest complete one restored</td></tr>
 * </table>
 *
 * <p>Threading: {@link #open} on the submitting thread; {@link #partDirectory} from container
 * threads (synchronized); {@link #close} once, by the last container to exit.
 */
@Internal
public final class JobRestore {
  private static final Logger LOG = LoggerFactory.getLogger(JobRestore.class);
  /** Beam's default job name ({@code JobNameFactory}): {@code <app>-<user>-<MMddHHmmss>-<8 hex digits>}. */
  private static final java.util.regex.Pattern BEAM_DEFAULT_JOB_NAME =
      java.util.regex.Pattern.compile(".*-\\d{10}-[0-9a-f]{8}");

  /** The job's state directory, or null (memory backend). */
  private final JobStateDirectory directory;
  /** The job's checkpoints, or null if it takes none. */
  private final CheckpointStore store;
  /** The id of the restored checkpoint, 0 if none. */
  private final long restoredId;
  /** The plan the job's checkpoints belong to (computed once), or null if it takes none. */
  private final PlanFingerprint fingerprint;
  /** The job's containers, recorded in each manifest. */
  private final int containers;
  /** The number of splits the job asked its sources for, recorded in each manifest. */
  private final int sourceParallelism;
  /** The last checkpoint whose directory was created (by the first container to write its part). */
  private long preparedCheckpoint;

  private JobRestore(JobStateDirectory directory, CheckpointStore store, long restoredId, PlanFingerprint fingerprint,
      int containers, int sourceParallelism) {
    this.sourceParallelism = sourceParallelism;
    this.fingerprint = fingerprint;
    this.containers = containers;
    this.directory = directory;
    this.store = store;
    this.restoredId = restoredId;
  }

  /**
   * {@code settings} for the translation of a job that may resume a checkpoint: with sources split
   * as the checkpoint's job split them, if it recorded another number
   * ({@link CheckpointStore.Manifest#sourceParallelism}), so that a job restarted at another
   * {@code --parallelism} finds the same splits and their positions; else {@code settings}.
   * Only a streaming job on RocksDB with checkpoints and {@code --restoreMode=LATEST}, or
   * {@code --restoreFrom}, resumes.
   */
  public static WeirSettings withResumedSourceParallelism(WeirSettings settings) {
    Path restoreFrom = settings.checkpointing().restoreFrom();
    if (settings.stateBackend() != StateBackend.ROCKSDB || !settings.checkpointing().enabled()
        || (restoreFrom == null && settings.checkpointing().restoreMode() != WeirPipelineOptions.RestoreMode.LATEST)) {
      return settings;
    }
    Path jobDirectory = settings.stateDirectory().resolve(
        JobStateDirectory.directoryName(settings.pipelineOptions().getJobName()));
    int recorded = restoreFrom != null ? CheckpointStore.sourceParallelismOf(restoreFrom)
        : CheckpointStore.newestSourceParallelism(jobDirectory);
    if (recorded <= 0 || recorded == settings.sourceParallelism()) {
      return settings;
    }
    LOG.info("Weir job {}: sources split for {} partitions, as in the checkpoint it resumes (--parallelism={} "
        + "applies to keyed stages)", settings.pipelineOptions().getJobName(), recorded, settings.parallelism());
    return settings.withSourceParallelism(recorded);
  }

  /**
   * Opens the state of a job of {@code containers} containers, as the class comment describes.
   *
   * @param taskParts deals the tasks' heap parts out if the checkpoint was taken at another
   *     parallelism or on another number of containers ({@link RescaledRestore})
   * @throws IllegalStateException if a running job holds the directory (naming path and pid), or
   *     the checkpoint cannot be restored (another plan: naming the first difference; every
   *     checkpoint damaged: naming them)
   */
  public static JobRestore open(JobPlan plan, WeirSettings settings, int containers,
      RescaledRestore.TaskParts taskParts) {
    String jobName = settings.pipelineOptions().getJobName();
    boolean streaming = settings.pipelineOptions().as(StreamingOptions.class).isStreaming()
        || plan.readsUnboundedSource();
    if (settings.checkpointing().restoreFrom() != null && (settings.stateBackend() != StateBackend.ROCKSDB
        || !streaming || !settings.checkpointing().enabled() || plan.hasTestStream())) {
      throw new IllegalArgumentException("--restoreFrom=" + settings.checkpointing().restoreFrom() + " needs a "
          + "streaming job on --stateBackend=ROCKSDB that takes checkpoints (--checkpointingIntervalMs above 0, no "
          + "TestStream); this job is not one");
    }
    if (settings.stateBackend() != StateBackend.ROCKSDB) {
      LOG.info("Weir job {}: state on the heap (--stateBackend={}); not restorable after a crash or a restart",
          jobName, settings.stateBackend().optionValue());
      return new JobRestore(null, null, 0, null, containers, settings.sourceParallelism());
    }
    if (!streaming) {
      JobStateDirectory temporary = JobStateDirectory.openTemporary(settings.stateDirectory());
      LOG.info("Weir job {}: batch job, state in {} (deleted at the end); after a crash a batch job starts over",
          jobName, temporary.directory());
      return new JobRestore(temporary, null, 0, null, containers, settings.sourceParallelism());
    }
    JobStateDirectory durable = JobStateDirectory.openDurable(settings.stateDirectory(), jobName);
    WeirSettings.Checkpointing checkpointing = settings.checkpointing();
    if (!checkpointing.enabled() || plan.hasTestStream()) {
      LOG.info("Weir job {}: streaming job, state in {} (kept after a failure or cancel); NOT restorable: {}, "
          + "so state left by an earlier run under this name was wiped", jobName, durable.directory(),
          plan.hasTestStream() ? "a job reading a TestStream takes no checkpoints" : "--checkpointingIntervalMs=0");
      return new JobRestore(durable, null, 0, null, containers, settings.sourceParallelism());
    }
    try {
      CheckpointStore store = new CheckpointStore(durable.directory(), jobName, checkpointing.retain());
      PlanFingerprint fingerprint = PlanFingerprint.of(plan, settings.keyGroups());
      long restoredId = 0;
      String restored;
      if (checkpointing.restoreFrom() != null) {
        CheckpointStore.Restored from = store.restoreFrom(checkpointing.restoreFrom(), fingerprint, containers,
            durable::containerDirectory, new RescaledRestore(plan, containers, settings.keyGroups(), taskParts,
                checkpointing.allowNonRestoredState()));
        store.deleteAll(); // after the restore: --restoreFrom may name one of this job's own checkpoints
        restoredId = from.manifest().id();
        restored = "restored from checkpoint " + restoredId + " of job " + from.manifest().jobName() + " ("
            + from.directory() + ", --restoreFrom; this job's own earlier checkpoints deleted)";
      } else if (checkpointing.restoreMode() == WeirPipelineOptions.RestoreMode.NONE) {
        store.deleteAll();
        restored = "no checkpoint (--restoreMode=NONE: checkpoints of an earlier run deleted)";
      } else {
        CheckpointStore.Restored latest = store.restoreLatest(fingerprint, containers,
            durable::containerDirectory, new RescaledRestore(plan, containers, settings.keyGroups(), taskParts,
                checkpointing.allowNonRestoredState()));
        if (latest == null) {
          restored = "no checkpoint to restore, starting fresh";
        } else {
          restoredId = latest.manifest().id();
          restored = "restored from checkpoint " + restoredId + " (" + latest.directory() + ")"
              + (latest.manifest().containers() == containers ? ""
                  : ", written by " + latest.manifest().containers() + " container(s), onto " + containers);
        }
      }
      LOG.info("Weir job {}: streaming job, restorable: checkpoints every {} ms in {} (the newest {} kept); {}. "
          + "Beam's default --jobName changes on every run: set --jobName to resume a job after a restart",
          jobName, checkpointing.intervalMs(), store.root(), checkpointing.retain(), restored);
      if (BEAM_DEFAULT_JOB_NAME.matcher(jobName).matches()) {
        LOG.warn("Weir job {}: --jobName is Beam's default, which changes on every run: no later run will resume "
            + "this job's checkpoints, and {} stays after a failure or stop until removed (bin/weir state list, "
            + "bin/weir state remove). Set --jobName to make the job resumable", jobName, durable.directory());
      }
      return new JobRestore(durable, store, restoredId, fingerprint, containers, settings.sourceParallelism());
    } catch (RuntimeException e) {
      durable.close(false);
      throw e;
    }
  }

  /** The job's state directory, or null (memory backend). */
  public JobStateDirectory directory() {
    return directory;
  }

  /** The job's checkpoints, or null if it takes none. */
  public CheckpointStore store() {
    return store;
  }

  /** Whether the job takes checkpoints. */
  public boolean checkpointed() {
    return store != null;
  }

  /** The id of the checkpoint the job restored, 0 if none. */
  public long restoredId() {
    return restoredId;
  }

  /**
   * Completes checkpoint {@code id} once every container wrote its part: its manifest, with the
   * job's plan and containers ({@link CheckpointStore#complete}). Called by the coordinator.
   *
   * @return the checkpoint's size in bytes
   * @throws IllegalStateException if the job takes no checkpoints
   */
  public long complete(long id) {
    if (store == null) {
      throw new IllegalStateException("the job takes no checkpoints");
    }
    return store.complete(id, fingerprint, containers, sourceParallelism).sizeBytes();
  }

  /**
   * The directory container {@code container} writes its part of checkpoint {@code id} into; the
   * checkpoint's directory is created by the first container that asks. Container threads.
   *
   * @throws IllegalStateException if the job takes no checkpoints
   * @throws java.io.UncheckedIOException naming the path if the directory cannot be created
   */
  public synchronized Path partDirectory(long id, int container) {
    if (store == null) {
      throw new IllegalStateException("the job takes no checkpoints");
    }
    if (preparedCheckpoint != id) {
      store.prepare(id);
      preparedCheckpoint = id;
    }
    return store.containerDirectory(id, container);
  }

  /**
   * Ends the job's use of its state directory ({@link JobStateDirectory#close(boolean)}: after a
   * normal end deleted, after a failure or cancel a durable one is kept for a restart). No effect
   * without a directory.
   */
  public void close(boolean normalEnd) {
    if (directory != null) {
      directory.close(normalEnd);
    }
  }
}
