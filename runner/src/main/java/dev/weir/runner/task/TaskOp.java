package dev.weir.runner.task;

import org.apache.beam.sdk.annotations.Internal;

/**
 * What a container does with a task next, as {@link StageTask#nextOp()} decides it from the task's
 * {@link TaskPhase} and its outbox (Samza's {@code AsyncTaskWorker.nextOp()} returns a
 * {@code WorkerOp} the same way). The container's phases each act on the tasks whose next op is
 * theirs, so the "may this task run" rule is written once, in the task.
 */
@Internal
public enum TaskOp {
  /** Output waits for room downstream: only move it on ({@link StageTask#drainOutbox()}). */
  DRAIN_OUTBOX,
  /** Ready timers wait: fire the next slice ({@link StageTask#continueTimers()}); no input, no tick. */
  FIRE_TIMERS,
  /** Take input envelopes ({@link StageTask#process}) and ticks ({@link StageTask#tick(boolean)}). */
  PROCESS,
  /**
   * A concurrent ParDo of the task has as many elements in flight on worker threads as
   * {@code --taskMaxConcurrency} allows: no input until one completes (its completion reaches the
   * container through its mailbox, which every container pass drains); ticks go on, so processing
   * time does too.
   */
  AWAIT_IN_FLIGHT,
  /** Done, with an empty outbox: nothing more. */
  NONE
}
