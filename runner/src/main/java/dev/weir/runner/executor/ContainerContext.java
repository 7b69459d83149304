package dev.weir.runner.executor;

import dev.weir.runner.WeirSettings;
import dev.weir.runner.checkpoint.CheckpointCoordinator;
import dev.weir.runner.checkpoint.JobRestore;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.time.Quiescence;
import dev.weir.state.cache.SealerQueue;
import java.io.IOException;

/**
 * Everything a {@link Container} needs from its job, handed down once when it is built, so that a
 * container never calls back into the executor that started it (Agrona's {@code AgentRunner} is
 * given its agent, idle strategy and error handler the same way; the runner knows the agent, never
 * the reverse). Shared by every container of the job; each member is safe for that (see its class).
 *
 * @param clock the job's processing-time clock: the system clock, or a test stream's manual clock
 * @param quiescence the job's quiescence tracker (test streams only), or null
 * @param states opens each container's state (backend, directory, object cache)
 * @param metrics the job's metrics registry; each container commits its tasks' metrics into it
 * @param sealers the queue of sealed state values idle loops encode, or null (inline sealing)
 * @param checkpoints the job's checkpoint coordinator, or null if the job takes no checkpoints
 * @param restore the job's state directory and checkpoints (where each container writes its part);
 *     null if the job takes no checkpoints
 * @param failures where containers report their failure, the end of their loop and their exit
 * @param concurrency worker threads per container and elements in flight per task for concurrent
 *     ParDos ({@code --containerThreadPoolSize}, {@code --taskMaxConcurrency}); a container starts
 *     its {@link ContainerWorkers} only if {@link WeirSettings.Concurrency#enabled()}
 */
record ContainerContext(JobClock clock, Quiescence quiescence, StateOpener states, StepMetrics metrics,
    SealerQueue sealers, CheckpointCoordinator checkpoints, JobRestore restore, FailureCoordinator failures,
    WeirSettings.Concurrency concurrency) {

  /** Opens a container's state (storage and object cache); {@link ContainerStates} from the run's settings. */
  @FunctionalInterface
  interface StateOpener {
    /**
     * Opens the state of container {@code id}, on that container's thread.
     *
     * @throws IOException if its directory cannot be created or its store opened
     */
    ContainerState open(int id) throws IOException;
  }
}
