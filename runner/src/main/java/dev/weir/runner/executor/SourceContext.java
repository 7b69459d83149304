package dev.weir.runner.executor;

import dev.weir.runner.metrics.MetricsSwitch;
import org.apache.beam.sdk.metrics.MetricsContainer;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * What a source partition needs on its container thread: options to create readers, and the
 * metrics of its Read step (source readers report metrics too).
 *
 * @param options the pipeline options
 * @param metrics the container thread's metrics switch
 * @param stepMetrics the Read step's container for this task, or null when metrics are off
 * @param spans the container thread's span tracker (reader calls run in the Read step's span)
 * @param stepName the Read step's full name, its span tag
 */
public record SourceContext(PipelineOptions options, MetricsSwitch metrics, MetricsContainer stepMetrics,
    TransformSpans spans, String stepName) {}
