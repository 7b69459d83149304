package dev.weir.runner.application;

import dev.weir.runner.stream.InProcessStream;
import dev.weir.runner.task.WeirTaskFactory;
import dev.weir.runner.samza.BeamSourceSystemFactory;
import dev.weir.runner.samza.InProcessSystemFactory;
import dev.weir.runner.samza.WeirJobs;
import dev.weir.runner.translation.SourceSpec;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.samza.Partition;
import org.apache.samza.application.TaskApplication;
import org.apache.samza.application.descriptors.TaskApplicationDescriptor;
import org.apache.samza.container.TaskName;
import org.apache.samza.serializers.NoOpSerde;
import org.apache.samza.system.SystemStreamPartition;
import org.apache.samza.system.descriptors.GenericInputDescriptor;
import org.apache.samza.system.descriptors.GenericSystemDescriptor;

/**
 * A translated Weir job as a samza-api low-level {@link TaskApplication}: what a samza-core runner
 * would be given. The embedded executor runs the same plan and the same {@link WeirTaskFactory}
 * without going through this description; this face depends on the executor and the translation,
 * never the reverse (pinned by {@code PackageDependencyTest}). Task and stream names come from
 * {@link JobPlan}.
 *
 * <p>{@link #describe} declares, stage by stage in plan order: a source stage's input stream
 * ({@link JobPlan#sourceStreamName}, {@code stage-N-source}, on system {@value #SOURCE_SYSTEM}, one
 * partition per split, marked bounded for a bounded source); every intermediate stream ({@link StreamPlan#name()} on system
 * {@value InProcessStream#SYSTEM}) as an output of its producing stage and an input of its
 * consuming stage (so each appears once as input and once as output of the job); and the
 * {@link WeirTaskFactory} creating each task's {@code StageTask}. Streams carry Java objects
 * (Beam {@code WindowedValue}s and Weir's watermark and end-of-stream control messages), hence
 * {@link NoOpSerde} everywhere.
 *
 * <p>Systems: the two system descriptors name real samza-api factories,
 * {@link BeamSourceSystemFactory} (source splits as partitions) and {@link InProcessSystemFactory}
 * (the job's in-process streams), and carry the application's job id as system config
 * ({@code systems.<system>.}{@value WeirJobs#JOB_ID_CONFIG}). Those factories serve the job only
 * while it is bound in this JVM ({@link #bindSystems()}); see {@link WeirJobs} for why, and for what
 * a multi-process deployment replaces. The embedded executor does not use them: it binds tasks to
 * splits and streams directly.
 *
 * <p>Samza groups input partitions into tasks; Weir's grouping is one task per (stage,
 * partition) holding partition P of every stream the stage reads, given by {@link #taskInputs()}
 * (a samza-core run would install it as its {@code SystemStreamPartitionGrouper}).
 *
 * <p>Threading: built and described on the submitting thread; immutable afterwards.
 */
@Internal
public final class WeirTaskApplication implements TaskApplication {
  /** samza-api system name of source splits (defined by {@link BeamSourceSystemFactory}). */
  public static final String SOURCE_SYSTEM = BeamSourceSystemFactory.SOURCE_SYSTEM;
  /** Class name of the source system's factory, written into the description's config. */
  public static final String SOURCE_SYSTEM_FACTORY = BeamSourceSystemFactory.class.getName();
  /** Class name of the in-process stream system's factory, written into the description's config. */
  public static final String STREAM_SYSTEM_FACTORY = InProcessSystemFactory.class.getName();
  private static final AtomicLong JOB_IDS = new AtomicLong();

  private final JobPlan plan;
  private final WeirTaskFactory taskFactory;
  private final String jobId;

  /**
   * The application of {@code plan} whose tasks {@code taskFactory} creates, with a job id unique
   * in this JVM.
   */
  public WeirTaskApplication(JobPlan plan, WeirTaskFactory taskFactory) {
    this.plan = plan;
    this.taskFactory = taskFactory;
    this.jobId = "weir-" + ProcessHandle.current().pid() + "-" + JOB_IDS.incrementAndGet();
  }

  /** The job id the description's system config carries. */
  public String jobId() {
    return jobId;
  }

  /**
   * Makes this job's splits and streams reachable by the system factories named in its
   * description, until the returned binding is closed.
   *
   * @throws IllegalStateException if the job is bound already
   */
  public WeirJobs.Binding bindSystems() {
    return WeirJobs.bind(jobId, plan, taskFactory);
  }

  @Override
  public void describe(TaskApplicationDescriptor app) {
    Map<String, String> systemConfig = Map.of(WeirJobs.JOB_ID_CONFIG, jobId);
    GenericSystemDescriptor sources = new GenericSystemDescriptor(SOURCE_SYSTEM, SOURCE_SYSTEM_FACTORY)
        .withSystemConfigs(systemConfig);
    GenericSystemDescriptor streams = new GenericSystemDescriptor(InProcessStream.SYSTEM, STREAM_SYSTEM_FACTORY)
        .withSystemConfigs(systemConfig);
    for (StagePlan stage : plan.stages()) {
      if (stage.source() != null) {
        GenericInputDescriptor<Object> source =
            sources.getInputDescriptor(JobPlan.sourceStreamName(stage), new NoOpSerde<>());
        if (isBounded(stage.source())) {
          source.isBounded();
        }
        app.withInputStream(source);
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
          ssps.add(new SystemStreamPartition(SOURCE_SYSTEM, JobPlan.sourceStreamName(stage), new Partition(p)));
        }
        for (StagePlan.Input input : stage.inputs()) {
          ssps.add(new SystemStreamPartition(InProcessStream.SYSTEM, input.stream().name(), new Partition(p)));
        }
        result.put(new TaskName(JobPlan.taskName(stage, p)), ssps);
      }
    }
    return result;
  }

  private static boolean isBounded(SourceSpec source) {
    return !(source instanceof SourceSpec.Unbounded) && !(source instanceof SourceSpec.Test);
  }

  /** Task names in plan order. */
  public List<TaskName> taskNames() {
    return new ArrayList<>(taskInputs().keySet());
  }
}
