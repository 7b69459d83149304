package dev.weir.runner.operators;

import org.apache.beam.sdk.transforms.reflect.DoFnInvoker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tears a DoFn down at operator close. A failing {@code @Teardown} is logged, not thrown: by then
 * the DoFn's output is complete, and Beam allows runners to skip teardown altogether. Called on
 * the container thread that set the DoFn up, inside the executor's bracket around
 * {@link Operator#close()} (so the step's metrics container is current).
 */
final class DoFnTeardown {
  private static final Logger LOG = LoggerFactory.getLogger(DoFnTeardown.class);

  private DoFnTeardown() {}

  /**
   * Runs {@code @Teardown} of {@code invoker} if it is non-null.
   *
   * @param stepName the operator's PTransform, for the log message
   */
  static void teardown(DoFnInvoker<?, ?> invoker, String stepName) {
    if (invoker == null) {
      return;
    }
    try {
      invoker.invokeTeardown();
    } catch (RuntimeException e) {
      LOG.warn("Teardown of the DoFn of {} failed", stepName, e);
    }
  }
}
