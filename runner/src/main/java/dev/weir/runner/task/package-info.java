/**
 * The task: one partition of one stage. {@link dev.weir.runner.task.StageTask} runs the stage's
 * fused operators ({@link dev.weir.runner.task.StageGraph}), keeps its phase
 * ({@link dev.weir.runner.task.TaskPhase}) and decides what its host does next
 * ({@link dev.weir.runner.task.StageTask#nextOp()}); {@link dev.weir.runner.task.StageWatermarks}
 * aggregates its watermarks; {@link dev.weir.runner.task.TaskCheckpoint} is its part of a
 * checkpoint; {@link dev.weir.runner.task.ContainerCommit} is the commit point its container (or
 * {@link dev.weir.runner.task.HostedTask}, a container of one inside samza-core) takes. Tasks are
 * created by {@link dev.weir.runner.task.WeirTaskFactory}, which also adapts them to samza-api.
 *
 * <p>Threading: a task is confined to its host's thread; its statistics are read from any thread.
 */
package dev.weir.runner.task;
