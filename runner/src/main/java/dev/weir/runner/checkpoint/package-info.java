/**
 * Checkpoints and restore: when the job checkpoints and how its containers hold together while it
 * does ({@link dev.weir.runner.checkpoint.CheckpointCoordinator}, with why a pause and not aligned
 * barriers), how a task takes part ({@link dev.weir.runner.checkpoint.CheckpointParticipant}), the
 * checkpoints on disk ({@link dev.weir.runner.checkpoint.CheckpointStore}: layout, manifest with
 * CRC32s, verification, retention), the plan a checkpoint belongs to
 * ({@link dev.weir.runner.checkpoint.PlanFingerprint}), the job's locked state directory
 * ({@link dev.weir.runner.checkpoint.JobStateDirectory}) and what a job restores at start
 * ({@link dev.weir.runner.checkpoint.JobRestore}).
 */
package dev.weir.runner.checkpoint;
