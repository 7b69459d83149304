package dev.weir.runner;

import com.google.auto.service.AutoService;
import java.util.List;
import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsRegistrar;
import org.apache.beam.sdk.runners.PipelineRunnerRegistrar;

/**
 * Registers {@link WeirRunner}, {@link TestWeirRunner} and {@link WeirPipelineOptions} with Beam's
 * service loading, so that {@code --runner=WeirRunner} and {@code --help=WeirPipelineOptions}
 * work. Stateless; called by Beam on whatever thread parses options.
 */
public final class WeirRunnerRegistrar {
  private WeirRunnerRegistrar() {}

  /** Registers the runners by their simple names. */
  @AutoService(PipelineRunnerRegistrar.class)
  public static final class Runner implements PipelineRunnerRegistrar {
    @Override
    public Iterable<Class<? extends PipelineRunner<?>>> getPipelineRunners() {
      return List.of(WeirRunner.class, TestWeirRunner.class);
    }
  }

  /** Registers {@link WeirPipelineOptions}. */
  @AutoService(PipelineOptionsRegistrar.class)
  public static final class Options implements PipelineOptionsRegistrar {
    @Override
    public Iterable<Class<? extends PipelineOptions>> getPipelineOptions() {
      return List.of(WeirPipelineOptions.class);
    }
  }
}
