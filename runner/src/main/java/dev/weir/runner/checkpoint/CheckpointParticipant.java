package dev.weir.runner.checkpoint;

import java.util.Map;
import org.apache.beam.sdk.annotations.Internal;

/**
 * How one task takes part in the job's checkpoints: the one interface through which its container
 * restores it, quiesces it, has it write its part and tells it the checkpoint completed. The
 * container's side of the same protocol is {@code executor.ContainerCheckpointer}; when a
 * checkpoint is due and when the job is quiescent is decided by {@link CheckpointCoordinator}.
 *
 * <p>The order, per checkpoint: {@link #finishBundleForCheckpoint()} until it returns 0, then
 * {@link #quietForCheckpoint()} until every participant of every container is quiet (the container
 * keeps running its loop meanwhile, without source input); then {@link #snapshot}, and once the
 * checkpoint's manifest is written {@link #checkpointCompleted()}. {@link #restore} is called once,
 * before the task opens, with what the container's storage restored.
 *
 * <p>What goes into {@code metadata}: each participant writes under keys of its own prefix (a
 * task's {@code task/<task name>/...}), so that the parts of a container's tasks share one map,
 * stored in the container's storage commit. Keys and values are opaque to the checkpointer.
 *
 * <p>Threading: every method on the participant's container thread.
 */
@Internal
public interface CheckpointParticipant {
  /**
   * Hands the participant the container's restored checkpoint metadata (all of its tasks' parts;
   * empty on a fresh start), before it opens: it resumes from its own part when it opens.
   */
  void restore(Map<String, byte[]> metadata);

  /**
   * Quiesce, first step: finishes the open bundle, if any, so that its output drains before the
   * cut.
   *
   * @return 1 if a bundle was finished (the container is not quiet this pass), else 0
   */
  int finishBundleForCheckpoint();

  /**
   * Quiesce, second step: whether the participant is quiet (nothing in its outbox, no timer firing
   * pending, no bundle open, every operator ready to write its state).
   */
  boolean quietForCheckpoint();

  /**
   * Writes the participant's part of the checkpoint into {@code metadata}; the job is quiescent.
   *
   * @throws RuntimeException if a part cannot be written (e.g. a coder fails); the checkpoint then
   *     fails and the job with it
   */
  void snapshot(Map<String, byte[]> metadata);

  /**
   * The checkpoint the participant last wrote its part of is complete (its manifest written):
   * source marks it held may be finalized now.
   */
  void checkpointCompleted();
}
