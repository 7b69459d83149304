package dev.weir.runner;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;

/** Test helper: pipelines on {@link TestWeirRunner} with small, fast settings. */
final class Pipelines {
  private Pipelines() {}

  static WeirPipelineOptions options(boolean streaming) {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs(
        "--runner=TestWeirRunner", "--streaming=" + streaming, "--parallelism=2", "--containers=2",
        "--stateBackend=MEMORY").as(WeirPipelineOptions.class);
    return options;
  }

  static Pipeline create(boolean streaming) {
    return Pipeline.create(options(streaming));
  }
}
