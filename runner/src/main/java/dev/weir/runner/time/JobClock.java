package dev.weir.runner.time;

import org.apache.beam.sdk.annotations.Internal;

/**
 * The processing-time clock of one job: what the run loops read to fire processing-time timers
 * and triggers, and what {@code TimerInternals.currentProcessingTime()} reports. The default is
 * the system clock ({@link #SYSTEM}); a job with a {@code TestStream} gets a
 * {@link ManualJobClock} that only moves when the test stream says so, which makes
 * processing-time behaviour deterministic.
 *
 * <p>Units: epoch milliseconds. Never goes backwards. Threading: implementations are safe to read
 * from every container thread; {@link #millis()} is called once per run-loop tick per container,
 * so it must be cheap (a volatile read or a system call, no allocation).
 */
@Internal
public interface JobClock {

  /** The wall clock ({@link System#currentTimeMillis()}). */
  JobClock SYSTEM = System::currentTimeMillis;

  /** The current processing time, epoch milliseconds. */
  long millis();
}
