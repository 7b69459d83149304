package dev.weir.runner.operators;

import org.apache.beam.sdk.annotations.Internal;

/**
 * Creates one {@link Operator} instance per task from a translated transform. Factories are built
 * on the submitting thread and called by the executor while it sets tasks up.
 */
@FunctionalInterface
@Internal
public interface OperatorFactory {
  /** A fresh, unopened operator for one task. */
  Operator create();
}
