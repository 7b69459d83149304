package dev.weir.runner.operators;

import org.apache.beam.sdk.annotations.Internal;

/**
 * Runs a piece of one PTransform's user code that the executor does not call through an operator,
 * with that PTransform as the thread's running step (its metrics container current, its profiling
 * span open). The executor brackets every call into an operator itself, so operators never need
 * this for elements, timers, bundles, set-up or teardown; it exists for code that runs later on
 * the operator's behalf, such as bundle finalization callbacks after a commit
 * ({@link BundleFinalizers}). Implemented by the executor's step scope.
 *
 * <p>Threading: call only on the container thread the step belongs to.
 */
@FunctionalInterface
@Internal
public interface StepRunner {
  /** Runs {@code call} in the step and returns (or throws) what it does. */
  void run(Runnable call);

  /** Runs calls as they are, in whatever step is current (for tests). */
  StepRunner CURRENT = Runnable::run;
}
