package dev.weir.runner.application;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.samza.application.descriptors.TaskApplicationDescriptor;
import org.apache.samza.config.Config;
import org.apache.samza.config.MapConfig;
import org.apache.samza.context.ApplicationContainerContextFactory;
import org.apache.samza.context.ApplicationTaskContextFactory;
import org.apache.samza.metrics.MetricsReporterFactory;
import org.apache.samza.runtime.ProcessorLifecycleListenerFactory;
import org.apache.samza.system.descriptors.InputDescriptor;
import org.apache.samza.system.descriptors.OutputDescriptor;
import org.apache.samza.system.descriptors.SystemDescriptor;
import org.apache.samza.table.descriptors.TableDescriptor;
import org.apache.samza.task.TaskFactory;

/**
 * Weir's in-process {@link TaskApplicationDescriptor}: records what a {@code TaskApplication}
 * declares (input and output streams in declaration order, the task factory, tables, default
 * system), as samza-core's descriptor implementation would, so that the description can be read
 * back and checked in-process (tests, tools) without samza-core. The embedded executor does not
 * use it: it builds its tasks from the plan directly. Context factories, lifecycle listeners and
 * metrics reporters are recorded but not used.
 *
 * <p>Threading: filled and read on the submitting thread.
 */
@Internal
public final class InProcessApplicationDescriptor implements TaskApplicationDescriptor {
  private final Config config;
  private final List<InputDescriptor<?, ?>> inputs = new ArrayList<>();
  private final List<OutputDescriptor<?, ?>> outputs = new ArrayList<>();
  private final List<TableDescriptor<?, ?, ?>> tables = new ArrayList<>();
  private TaskFactory<?> taskFactory;
  private SystemDescriptor<?> defaultSystem;

  /** A descriptor with {@code config} (may be empty). */
  public InProcessApplicationDescriptor(Map<String, String> config) {
    this.config = new MapConfig(config);
  }

  @Override
  public Config getConfig() {
    return config;
  }

  @Override
  public TaskApplicationDescriptor withTaskFactory(TaskFactory factory) {
    this.taskFactory = factory;
    return this;
  }

  @Override
  public TaskApplicationDescriptor withInputStream(InputDescriptor descriptor) {
    inputs.add(descriptor);
    return this;
  }

  @Override
  public TaskApplicationDescriptor withOutputStream(OutputDescriptor descriptor) {
    outputs.add(descriptor);
    return this;
  }

  @Override
  public TaskApplicationDescriptor withTable(TableDescriptor descriptor) {
    tables.add(descriptor);
    return this;
  }

  @Override
  public TaskApplicationDescriptor withDefaultSystem(SystemDescriptor<?> descriptor) {
    this.defaultSystem = descriptor;
    return this;
  }

  @Override
  public TaskApplicationDescriptor withApplicationContainerContextFactory(ApplicationContainerContextFactory<?> f) {
    return this;
  }

  @Override
  public TaskApplicationDescriptor withApplicationTaskContextFactory(ApplicationTaskContextFactory<?> f) {
    return this;
  }

  @Override
  public TaskApplicationDescriptor withProcessorLifecycleListenerFactory(ProcessorLifecycleListenerFactory f) {
    return this;
  }

  @Override
  public TaskApplicationDescriptor withMetricsReporterFactories(Map<String, MetricsReporterFactory> factories) {
    return this;
  }

  /** Declared input streams, in declaration order. */
  public List<InputDescriptor<?, ?>> inputs() {
    return Collections.unmodifiableList(inputs);
  }

  /** Declared output streams, in declaration order. */
  public List<OutputDescriptor<?, ?>> outputs() {
    return Collections.unmodifiableList(outputs);
  }

  /** Declared tables. */
  public List<TableDescriptor<?, ?, ?>> tables() {
    return Collections.unmodifiableList(tables);
  }

  /**
   * The job config a samza-core planner would derive from this description: the descriptor's own
   * config, then each declared stream's and its system's config ({@code streams.<id>.*},
   * {@code systems.<name>.samza.factory}, {@code systems.<name>.*} system configs), then the default
   * system's. Later entries win on equal keys.
   */
  public Map<String, String> toConfig() {
    Map<String, String> result = new LinkedHashMap<>(config);
    for (InputDescriptor<?, ?> input : inputs) {
      result.putAll(input.getSystemDescriptor().toConfig());
      result.putAll(input.toConfig());
    }
    for (OutputDescriptor<?, ?> output : outputs) {
      result.putAll(output.getSystemDescriptor().toConfig());
      result.putAll(output.toConfig());
    }
    if (defaultSystem != null) {
      result.putAll(defaultSystem.toConfig());
    }
    return result;
  }

  /** The declared default system, or null. */
  public SystemDescriptor<?> defaultSystem() {
    return defaultSystem;
  }

  /**
   * The declared task factory.
   *
   * @throws IllegalStateException if the application declared none
   */
  public TaskFactory<?> taskFactory() {
    if (taskFactory == null) {
      throw new IllegalStateException("the application declared no task factory");
    }
    return taskFactory;
  }
}
