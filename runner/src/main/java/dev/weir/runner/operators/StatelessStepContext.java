package dev.weir.runner.operators;

import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.runners.core.StepContext;
import org.apache.beam.runners.core.TimerInternals;
import org.apache.beam.sdk.transforms.DoFn;

/**
 * The step context of a DoFn without state or timers: asking for either is a translation bug,
 * since stateful DoFns are translated to {@link StatefulParDoOperator} instead. Carries the
 * operator's bundle finalizer, if it has one. Immutable; confined to the operator's thread like
 * the finalizer.
 */
final class StatelessStepContext implements StepContext {
  /** A context without bundle finalization. */
  static final StatelessStepContext INSTANCE = new StatelessStepContext(null);

  private final DoFn.BundleFinalizer finalizer;

  /** @param finalizer the operator's bundle finalizer, or null if it has none */
  StatelessStepContext(DoFn.BundleFinalizer finalizer) {
    this.finalizer = finalizer;
  }

  @Override
  public StateInternals stateInternals() {
    throw new UnsupportedOperationException("this DoFn was translated as stateless; it has no state");
  }

  @Override
  public TimerInternals timerInternals() {
    throw new UnsupportedOperationException("this DoFn was translated as stateless; it has no timers");
  }

  @Override
  public DoFn.BundleFinalizer bundleFinalizer() {
    if (finalizer == null) {
      throw new UnsupportedOperationException("this operator does not support bundle finalization");
    }
    return finalizer;
  }
}
