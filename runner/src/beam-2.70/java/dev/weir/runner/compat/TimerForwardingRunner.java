package dev.weir.runner.compat;

import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.joda.time.Instant;

/**
 * Base of Weir's own {@link DoFnRunner}s: implements {@code onTimer} in this Beam minor's
 * signature once and hands every firing to {@link #fireTimer}, which takes the drain cause as a
 * {@code boolean} in every minor (Beam 2.70: always {@code false}, runners-core 2.70 has none).
 *
 * <p>Threading: as the subclass; runners are confined to their task's thread.
 */
public abstract class TimerForwardingRunner<InputT, OutputT> implements DoFnRunner<InputT, OutputT> {
  @Override
  public final <KeyT> void onTimer(String timerId, String timerFamilyId, KeyT key, BoundedWindow window,
      Instant timestamp, Instant outputTimestamp, TimeDomain timeDomain) {
    fireTimer(timerId, timerFamilyId, key, window, timestamp, outputTimestamp, timeDomain, false);
  }

  /**
   * One timer firing, with every Beam minor's arguments.
   *
   * @param causedByDrain whether the firing comes from a drain
   */
  protected abstract <KeyT> void fireTimer(String timerId, String timerFamilyId, KeyT key, BoundedWindow window,
      Instant timestamp, Instant outputTimestamp, TimeDomain timeDomain, boolean causedByDrain);
}
