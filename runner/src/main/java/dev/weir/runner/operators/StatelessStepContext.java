package dev.weir.runner.operators;

import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.runners.core.StepContext;
import org.apache.beam.runners.core.TimerInternals;

/**
 * The step context of a DoFn without state or timers: asking for either is a translation bug,
 * since stateful DoFns are translated to {@link StatefulParDoOperator} instead. Stateless and shareable.
 */
final class StatelessStepContext implements StepContext {
  static final StatelessStepContext INSTANCE = new StatelessStepContext();

  private StatelessStepContext() {}

  @Override
  public StateInternals stateInternals() {
    throw new UnsupportedOperationException("this DoFn was translated as stateless; it has no state");
  }

  @Override
  public TimerInternals timerInternals() {
    throw new UnsupportedOperationException("this DoFn was translated as stateless; it has no timers");
  }
}
