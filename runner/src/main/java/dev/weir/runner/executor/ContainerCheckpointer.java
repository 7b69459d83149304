package dev.weir.runner.executor;

import dev.weir.runner.checkpoint.CheckpointCoordinator;
import dev.weir.runner.checkpoint.CheckpointParticipant;
import dev.weir.runner.operators.FailureContext;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * One container's part of the job's checkpoints, in one place: restoring its tasks at start, and,
 * once per run-loop pass, the steps of a checkpoint as {@link CheckpointCoordinator} describes them
 * (why a pause and not aligned barriers is written there):
 *
 * <ol>
 *   <li><b>due</b>: {@link #pass} polls the coordinator, which starts a checkpoint when the interval
 *       passed; the container then stops polling its sources and firing processing-time timers
 *       ({@link #paused()});
 *   <li><b>quiesce</b>: in a pass that did no other work, each task finishes its open bundle
 *       ({@link CheckpointParticipant#finishBundleForCheckpoint()}); once none had one and all are
 *       quiet ({@link CheckpointParticipant#quietForCheckpoint()}), the container waits at the
 *       coordinator until every container is quiet and every stream empty;
 *   <li><b>snapshot</b>: each task writes its part into one metadata map
 *       ({@link CheckpointParticipant#snapshot}), which goes into the container's storage commit,
 *       and the container's {@link PartWriter} writes it (the container's store commits and
 *       writes a RocksDB checkpoint of itself into the checkpoint's directory);
 *   <li><b>complete</b>: once every container wrote its part the coordinator writes the manifest;
 *       then each task hears of it ({@link CheckpointParticipant#checkpointCompleted()}) and
 *       finalizes its source marks.
 * </ol>
 *
 * A container whose tasks are all done stays (its state belongs to every later checkpoint) until
 * the whole job is done ({@link #mayEnd}); whatever way its loop ends, it leaves the coordinator
 * ({@link #leave()}) so that no checkpoint waits for it.
 *
 * <p>Threading: the container's thread only; the coordinator is shared and synchronized.
 */
final class ContainerCheckpointer {
  /** Writes the container's part of a checkpoint: its tasks' metadata into its store's commit, and the store's checkpoint. */
  @FunctionalInterface
  interface PartWriter {
    /**
     * @param checkpointId the checkpoint's id
     * @param metadata every task's part, by key
     * @throws RuntimeException if the part cannot be written (naming the path)
     */
    void write(long checkpointId, Map<String, byte[]> metadata);
  }

  private final int container;
  private final CheckpointCoordinator coordinator;
  private final List<? extends CheckpointParticipant> participants;
  private final PartWriter writer;
  /** Whether the container still runs (a stopped one stops waiting at the coordinator). */
  private final BooleanSupplier running;
  /** Whether input arrived for the container while it waits (it is then no longer quiet). */
  private final BooleanSupplier hasStreamInput;

  /**
   * @param container the container's id
   * @param coordinator the job's checkpoint coordinator
   * @param participants the container's tasks
   * @param writer writes the container's part of each checkpoint
   * @param running whether the container still runs; asked while it waits
   * @param hasStreamInput whether input arrived for the container; asked while it waits
   */
  ContainerCheckpointer(int container, CheckpointCoordinator coordinator,
      List<? extends CheckpointParticipant> participants, PartWriter writer, BooleanSupplier running,
      BooleanSupplier hasStreamInput) {
    this.container = container;
    this.coordinator = coordinator;
    this.participants = participants;
    this.writer = writer;
    this.running = running;
    this.hasStreamInput = hasStreamInput;
  }

  /**
   * Hands every task the checkpoint metadata its container's storage restored (empty on a fresh
   * start); before they open.
   */
  void restore(Map<String, byte[]> metadata) {
    for (CheckpointParticipant participant : participants) {
      participant.restore(metadata);
    }
  }

  /** Whether a checkpoint is under way: sources and processing-time timers pause. One volatile read. */
  boolean paused() {
    return coordinator.phase() != CheckpointCoordinator.Phase.RUNNING;
  }

  /**
   * The container's checkpoint step of one run-loop pass (see the class comment).
   *
   * @param work what the pass did so far (a pass that did something is not quiet)
   * @param nowNs the pass's time, {@link System#nanoTime()}
   * @return work done here: bundles finished, or 1 for a checkpoint written
   * @throws RuntimeException if the container's part could not be written (the job fails; the
   *     previous checkpoint stays the newest complete one), with the checkpoint's id attached
   */
  int pass(int work, long nowNs)
      throws InterruptedException {
    coordinator.poll(nowNs);
    if (coordinator.phase() != CheckpointCoordinator.Phase.PAUSING || work > 0) {
      return 0;
    }
    int finished = 0;
    for (CheckpointParticipant participant : participants) {
      finished += participant.finishBundleForCheckpoint();
    }
    if (finished > 0) {
      return finished;
    }
    for (CheckpointParticipant participant : participants) {
      if (!participant.quietForCheckpoint()) {
        return 0;
      }
    }
    long checkpointId = coordinator.arriveQuiet(container, running, hasStreamInput);
    if (checkpointId == 0) {
      return 0;
    }
    Throwable failure = null;
    try {
      Map<String, byte[]> metadata = new HashMap<>();
      for (CheckpointParticipant participant : participants) {
        participant.snapshot(metadata);
      }
      writer.write(checkpointId, metadata);
    } catch (Throwable t) {
      failure = t;
    }
    boolean completed = coordinator.snapshotDone(container, checkpointId, failure, running);
    if (failure != null) {
      throw FailureContext.attach(failure, "writing checkpoint " + checkpointId + " ("
          + Container.threadName(container) + ")");
    }
    if (completed) {
      for (CheckpointParticipant participant : participants) {
        participant.checkpointCompleted();
      }
    }
    return 1;
  }

  /**
   * Whether the container's loop may end, given whether its own tasks are all done: only once every
   * container's are (a finished container's state belongs to every later checkpoint).
   */
  boolean mayEnd(boolean tasksDone) {
    if (!tasksDone) {
      return false;
    }
    coordinator.markDone(container);
    return coordinator.jobDone();
  }

  /** The container's loop ended (normally, failed or stopped): no checkpoint waits for it any more. */
  void leave() {
    coordinator.leave(container);
  }
}
