package dev.weir.runner.executor;

import dev.weir.runner.WeirSettings;
import dev.weir.runner.checkpoint.JobRestore;
import dev.weir.runner.state.ContainerState;
import dev.weir.state.StateBackend;
import dev.weir.state.cache.SealerQueue;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Opens each container's state from the run's settings: the {@code --stateBackend}, in the
 * container's directory of the job's state directory (RocksDB; created here), bounded to
 * {@code --objectCacheSize} entries and {@code --objectCacheBytes}, sealing through the job's
 * {@link SealerQueue} if any, with direct writes when the job restores only from checkpoints.
 *
 * <p>Threading: {@link #open} on each container's own thread; immutable.
 */
final class ContainerStates implements ContainerContext.StateOpener {
  private final WeirSettings settings;
  private final JobRestore job;
  private final SealerQueue sealers;

  /**
   * @param job the job's state directory and checkpoints
   * @param sealers the job's queue of state values to encode, or null (inline sealing)
   */
  ContainerStates(WeirSettings settings, JobRestore job, SealerQueue sealers) {
    this.settings = settings;
    this.job = job;
    this.sealers = sealers;
  }

  /**
   * Opens the state of container {@code id}.
   *
   * @throws IOException if its directory cannot be created or the store opened
   */
  @Override
  public ContainerState open(int id) throws IOException {
    StateBackend backend = settings.stateBackend();
    Path directory = null;
    if (backend == StateBackend.ROCKSDB) {
      directory = job.directory().containerDirectory(id);
      Files.createDirectories(directory);
    }
    ContainerState state = new ContainerState(backend, directory, settings.objectCacheBounds(), sealers,
        Container.threadName(id), job.checkpointed());
    state.keyGroups(settings.keyGroups());
    return state;
  }
}
