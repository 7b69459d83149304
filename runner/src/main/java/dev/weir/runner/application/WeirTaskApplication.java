package dev.weir.runner.application;

import dev.weir.runner.executor.InProcessStream;
import dev.weir.runner.executor.WeirTaskFactory;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.samza.Partition;
import org.apache.samza.application.TaskApplication;
import org.apache.samza.application.descriptors.TaskApplicationDescriptor;
import org.apache.samza.container.TaskName;
import org.apache.samza.serializers.NoOpSerde;
import org.apache.samza.system.SystemStreamPartition;
import org.apache.samza.system.descriptors.GenericSystemDescriptor;

/**
 * A translated Weir job as a samza-api low-level {@link TaskApplication}: the same description
 * the embedded executor runs from, and what a samza-core runner would be given.
 *
 * <p>{@link #describe} declares, stage by stage in plan order: a source stage's input stream
 * ({@code stage-N-source} on system {@value #SOURCE_SYSTEM}, one partition per split); every
 * intermediate stream ({@link StreamPlan#name()} on system {@value InProcessStream#SYSTEM}) as an
 * output of its producing stage and an input of its consuming stage (so each appears once as
 * input and once as output of the job); and the {@link WeirTaskFactory} creating each task's
 * {@code StageTask}. Streams carry Java objects (Beam {@code WindowedValue}s and Weir's watermark
 * and end-of-stream control messages), hence {@link NoOpSerde} everywhere.
 *
 * <p>Samza groups input partitions into tasks; Weir's grouping is one task per (stage,
 * partition) holding partition P of every stream the stage reads, given by {@link #taskInputs()}
 * (a samza-core run would install it as its {@code SystemStreamPartitionGrouper}).
 *
 * <p>Threading: built and described on the submitting thread; immutable afterwards.
 */
public final class WeirTaskApplication implements TaskApplication {
  /** samza-api system name of source splits. */
  public static final String SOURCE_SYSTEM = "weir-source";
  /**
   * System factory class names written into the description's config. The embedded executor
   * does not use them (it binds streams in process); Samza {@code SystemFactory}s for them are
   * future work (a samza-core run needs them).
   */
  public static final String SOURCE_SYSTEM_FACTORY = "dev.weir.runner.samza.BeamSourceSystemFactory";
  public static final String STREAM_SYSTEM_FACTORY = "dev.weir.runner.samza.InProcessSystemFactory";

  private final JobPlan plan;
  private final WeirTaskFactory taskFactory;

  /** The application of {@code plan} whose tasks {@code taskFactory} creates. */
  public WeirTaskApplication(JobPlan plan, WeirTaskFactory taskFactory) {
    this.plan = plan;
    this.taskFactory = taskFactory;
  }

  @Override
  public void describe(TaskApplicationDescriptor app) {
    GenericSystemDescriptor sources = new GenericSystemDescriptor(SOURCE_SYSTEM, SOURCE_SYSTEM_FACTORY);
    GenericSystemDescriptor streams = new GenericSystemDescriptor(InProcessStream.SYSTEM, STREAM_SYSTEM_FACTORY);
    for (StagePlan stage : plan.stages()) {
      if (stage.source() != null) {
        app.withInputStream(sources.getInputDescriptor(WeirTaskFactory.sourceStreamName(stage), new NoOpSerde<>()));
      }
      for (StagePlan.Input input : stage.inputs()) {
        app.withInputStream(streams.getInputDescriptor(input.stream().name(), new NoOpSerde<>()));
      }
      for (StreamPlan stream : plan.streams()) {
        if (stream.producer() == stage) {
          app.withOutputStream(streams.getOutputDescriptor(stream.name(), new NoOpSerde<>()));
        }
      }
    }
    app.withTaskFactory(taskFactory);
  }

  /**
   * Weir's task grouping: per task name ({@code stage-N-pP}), the input partitions it reads, in
   * the order its stage declares its inputs (source split first).
   */
  public Map<TaskName, Set<SystemStreamPartition>> taskInputs() {
    Map<TaskName, Set<SystemStreamPartition>> result = new LinkedHashMap<>();
    for (StagePlan stage : plan.stages()) {
      for (int p = 0; p < stage.partitions(); p++) {
        Set<SystemStreamPartition> ssps = new LinkedHashSet<>();
        if (stage.source() != null) {
          ssps.add(new SystemStreamPartition(SOURCE_SYSTEM, WeirTaskFactory.sourceStreamName(stage), new Partition(p)));
        }
        for (StagePlan.Input input : stage.inputs()) {
          ssps.add(new SystemStreamPartition(InProcessStream.SYSTEM, input.stream().name(), new Partition(p)));
        }
        result.put(new TaskName(WeirTaskFactory.taskName(stage, p)), ssps);
      }
    }
    return result;
  }

  /** Task names in plan order. */
  public List<TaskName> taskNames() {
    return new ArrayList<>(taskInputs().keySet());
  }
}
