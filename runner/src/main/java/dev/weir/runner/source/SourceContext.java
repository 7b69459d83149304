package dev.weir.runner.source;

import dev.weir.runner.metrics.StepScope;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * What a source partition needs on its reading thread: options to create readers, and its Read
 * step, entered around every reader call (source readers report metrics too).
 *
 * @param options the pipeline options
 * @param scope the reading thread's step scope
 * @param step the Read step of that scope (its metrics container is null when metrics are off)
 */
@Internal
public record SourceContext(PipelineOptions options, StepScope scope, StepScope.Step step) {

  /** The Read step's full name. */
  public String stepName() {
    return step.name();
  }
}
