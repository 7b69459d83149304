package dev.weir.runner.compat;

import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.runners.core.TimerInternals.TimerData;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.CausedByDrain;
import org.joda.time.Instant;

/**
 * Fires a timer on a runners-core {@link DoFnRunner} the way this build's Beam minor spells it
 * (Beam 2.73: with a {@link CausedByDrain}, which runners-core hands to a DoFn's
 * {@code @OnTimer} method and to the elements it outputs).
 *
 * <p>Threading: stateless; called on the task thread that owns {@code runner}.
 */
public final class BeamTimers {
  private BeamTimers() {}

  /** Whether {@code timer} was set or fired because the pipeline is draining. */
  public static boolean causedByDrain(TimerData timer) {
    return timer.causedByDrain() == CausedByDrain.CAUSED_BY_DRAIN;
  }

  /**
   * {@code timer}, marked as firing because the pipeline is draining ({@code CAUSED_BY_DRAIN}):
   * runners-core then hands the cause to the DoFn's {@code @OnTimer} method, and a GroupByKey's
   * {@code ReduceFnRunner} to the panes it emits.
   */
  public static TimerData withDrainCause(TimerData timer) {
    if (timer.causedByDrain() == CausedByDrain.CAUSED_BY_DRAIN) {
      return timer;
    }
    return TimerData.of(timer.getTimerId(), timer.getTimerFamilyId(), timer.getNamespace(), timer.getTimestamp(),
        timer.getOutputTimestamp(), timer.getDomain(), CausedByDrain.CAUSED_BY_DRAIN);
  }

  /**
   * Calls {@code runner.onTimer} for one firing.
   *
   * @param causedByDrain whether the firing comes from a drain
   */
  public static <KeyT> void fire(DoFnRunner<?, ?> runner, String timerId, String timerFamilyId, KeyT key,
      BoundedWindow window, Instant timestamp, Instant outputTimestamp, TimeDomain timeDomain, boolean causedByDrain) {
    runner.onTimer(timerId, timerFamilyId, key, window, timestamp, outputTimestamp, timeDomain,
        causedByDrain ? CausedByDrain.CAUSED_BY_DRAIN : CausedByDrain.NORMAL);
  }
}
