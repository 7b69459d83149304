package dev.weir.runner.operators;

import org.apache.beam.sdk.annotations.Internal;

/**
 * An operator that may run its user code on the container's worker threads
 * ({@link ConcurrentParDoOperator}, a stateful ParDo in concurrent mode): its task asks it whether
 * it can take more input.
 *
 * <p>Threading: the task's container thread.
 */
@Internal
public interface ConcurrentOperator {
  /** Whether this instance was translated to run concurrently; asked once, when the task is built. */
  boolean concurrent();

  /**
   * Whether its calls in flight and waiting reached {@code --taskMaxConcurrency}: the task then
   * takes no input, and fires no timer, until one completes.
   */
  boolean saturated();
}
