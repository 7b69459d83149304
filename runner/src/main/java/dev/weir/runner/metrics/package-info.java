/**
 * Metrics per PTransform and of the run loop: {@link dev.weir.runner.metrics.StepMetrics} (Beam
 * metrics containers per task and step, attempted and committed), the
 * {@link dev.weir.runner.metrics.StepScope} that makes the running PTransform's metrics container
 * and profiling span current with a few field writes, {@link dev.weir.runner.metrics.TransformSpans}
 * (async-profiler spans by PTransform) and {@link dev.weir.runner.metrics.RunLoopMetrics} (time per
 * run-loop phase).
 */
package dev.weir.runner.metrics;
