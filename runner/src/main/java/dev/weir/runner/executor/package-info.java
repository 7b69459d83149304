/**
 * The embedded executor's run loop and job: {@link dev.weir.runner.executor.JobExecutor} builds a
 * job's streams, tasks and containers; each {@link dev.weir.runner.executor.Container} is one
 * thread running a run loop of named, timed phases over its tasks (Samza's {@code RunLoop}, shaped
 * like Agrona's duty cycle), handed a {@link dev.weir.runner.executor.ContainerContext} so that it
 * never calls back into its job. The container's part of checkpoints is
 * {@link dev.weir.runner.executor.ContainerCheckpointer}; how containers end together (first
 * failure, teardown order) is {@link dev.weir.runner.executor.FailureCoordinator}.
 *
 * <p>Threading: one thread per container; the job's methods from any thread.
 */
package dev.weir.runner.executor;
