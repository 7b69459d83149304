package dev.weir.runner.operators;

import org.apache.beam.sdk.metrics.MetricsContainer;
import org.apache.beam.sdk.transforms.reflect.DoFnInvoker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tears a DoFn down at operator close, with the step's metrics container current. A failing
 * {@code @Teardown} is logged, not thrown: by then the DoFn's output is complete, and Beam allows
 * runners to skip teardown altogether. Called on the container thread that set the DoFn up.
 */
final class DoFnTeardown {
  private static final Logger LOG = LoggerFactory.getLogger(DoFnTeardown.class);

  private DoFnTeardown() {}

  /**
   * Runs {@code @Teardown} of {@code invoker} if it is non-null.
   *
   * @param context the operator's context (for the metrics switch and the step name)
   * @param stepMetrics the step's metrics container, made current for the call
   */
  static void teardown(DoFnInvoker<?, ?> invoker, OperatorContext context, MetricsContainer stepMetrics) {
    if (invoker == null) {
      return;
    }
    MetricsContainer previous = context.metrics().swap(stepMetrics);
    try {
      invoker.invokeTeardown();
    } catch (RuntimeException e) {
      LOG.warn("Teardown of the DoFn of {} failed", context.stepName(), e);
    } finally {
      context.metrics().swap(previous);
    }
  }
}
