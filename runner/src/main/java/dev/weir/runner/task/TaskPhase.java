package dev.weir.runner.task;

/**
 * Where a {@link StageTask} is in its life, one value at a time (Jet's {@code ProcessorTasklet}
 * keeps its {@code ProcessorState} the same way). The task moves between phases itself; the
 * container only asks {@link StageTask#nextOp()} what to do with it next.
 *
 * <pre>
 *   RUNNING ──a watermark or tick made timers ready──▶ FIRING ──last ready timer fired──▶ RUNNING
 *   RUNNING ──every input ended──▶ (timers ready?) ENDING ──last fired──▶ (end of input)
 *   (end of input): bundle finished; pending operator work? DRAINING : DONE
 *   DRAINING ──a tick made timers ready──▶ FIRING ──last fired──▶ DRAINING
 *   DRAINING ──a tick found no pending work──▶ DONE
 * </pre>
 *
 * <p>Whether the outbox waits for room downstream is not a phase: it is a separate fact (the
 * outbox's own), and {@link StageTask#nextOp()} puts it first in its ladder. Neither is whether
 * the task is open (its operators and readers hold resources until the container closes it,
 * which happens after DONE too).
 */
enum TaskPhase {
  /** Takes input envelopes and processing-time ticks. */
  RUNNING,
  /**
   * Operators have ready timers left from a watermark or a tick: the container has the task fire
   * the next bounded slice each pass ({@link StageTask#continueTimers()}); no input, no tick and
   * no further watermark meanwhile. Returns to the phase it came from (RUNNING or DRAINING).
   */
  FIRING,
  /**
   * Every input ended, and the end of input made timers ready that still wait: fires them as
   * FIRING does; after the last, the end of input completes (DRAINING or DONE).
   */
  ENDING,
  /**
   * Every input ended and every ready timer fired, but an operator still has work no input drives
   * (e.g. checkpointed splittable-DoFn restrictions resumed by processing-time ticks): the task
   * keeps ticking and sends end-of-stream on once that work is done.
   */
  DRAINING,
  /** End-of-stream has been sent downstream (the outbox may still hold envelopes). */
  DONE
}
