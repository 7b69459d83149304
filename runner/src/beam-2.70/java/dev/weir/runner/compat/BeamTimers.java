package dev.weir.runner.compat;

import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.runners.core.TimerInternals.TimerData;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.joda.time.Instant;

/**
 * Fires a timer on a runners-core {@link DoFnRunner} the way this build's Beam minor spells it
 * (Beam 2.70: no drain argument; the drain cause is dropped, as runners-core 2.70 has no way to
 * pass it to the DoFn).
 *
 * <p>Threading: stateless; called on the task thread that owns {@code runner}.
 */
public final class BeamTimers {
  private BeamTimers() {}

  /** Whether {@code timer} fires because the pipeline is draining: never on Beam 2.70, whose timers carry no cause. */
  public static boolean causedByDrain(TimerData timer) {
    return false;
  }

  /** {@code timer}, marked as firing because the pipeline is draining: {@code timer} itself on Beam 2.70. */
  public static TimerData withDrainCause(TimerData timer) {
    return timer;
  }

  /**
   * Calls {@code runner.onTimer} for one firing.
   *
   * @param causedByDrain whether the firing comes from a drain (ignored on Beam 2.70)
   */
  public static <KeyT> void fire(DoFnRunner<?, ?> runner, String timerId, String timerFamilyId, KeyT key,
      BoundedWindow window, Instant timestamp, Instant outputTimestamp, TimeDomain timeDomain, boolean causedByDrain) {
    runner.onTimer(timerId, timerFamilyId, key, window, timestamp, outputTimestamp, timeDomain);
  }
}
