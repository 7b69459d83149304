package dev.weir.runner.task;

import dev.weir.runner.WeirSettings;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.source.SourceContext;
import dev.weir.runner.source.SourcePartition;
import dev.weir.runner.stream.InProcessStream;
import dev.weir.runner.stream.InputPartition;
import dev.weir.runner.stream.KeyedElement;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.time.Quiescence;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.SourceSpec;
import dev.weir.runner.translation.StagePlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.samza.container.TaskName;
import org.apache.samza.context.Context;
import org.apache.samza.system.IncomingMessageEnvelope;
import org.apache.samza.task.AsyncStreamTask;
import org.apache.samza.task.AsyncStreamTaskFactory;
import org.apache.samza.task.ClosableTask;
import org.apache.samza.task.EndOfStreamListenerTask;
import org.apache.samza.task.InitableTask;
import org.apache.samza.task.MessageCollector;
import org.apache.samza.task.TaskCallback;
import org.apache.samza.task.TaskCoordinator;
import org.apache.samza.task.WindowableTask;

/**
 * The samza-api task factory of a translated job: creates the {@link StageTask} of each task
 * name ({@code stage-N-pP}: partition P of stage N, see {@link JobPlan#taskName}), wired to the
 * job's in-process streams, source splits, clock and metrics. The embedded executor creates its
 * tasks here directly ({@link #createTask}); {@code WeirTaskApplication} registers the same factory
 * with {@code TaskApplicationDescriptor.withTaskFactory} for a samza-core run.
 *
 * <p>samza-api's {@link #createInstance()} takes no arguments (a Samza container learns a task's
 * identity only at {@code init(Context)}), so it returns a task that binds to its StageTask at
 * {@code init}, by the task name in the context's {@code TaskModel}, and adapts samza-api's calls
 * to it (the StageTask implements no samza-api interface). What a
 * samza-core container would still need: opening the bound task's operators with state from the
 * task context's stores (the embedded container opens them itself, see {@code Container}). The
 * Samza systems serving its inputs and outputs are in {@code dev.weir.runner.samza}; they reach the
 * job's splits and streams through {@link #createSourcePartition}, {@link #sourceContext} and
 * {@link #stream}.
 *
 * <p>Threading: created on the submitting thread; {@link #createTask} is called there too; the
 * tasks it returns are then confined to their container threads.
 */
@Internal
public final class WeirTaskFactory implements AsyncStreamTaskFactory {
  /** A task name's place in the plan. */
  private record TaskPlace(StagePlan stage, int partition) {}

  /** Every task of the job by name, in plan order. */
  private final Map<String, TaskPlace> places = new LinkedHashMap<>();
  private final Map<Integer, InProcessStream> streams;
  private final WeirSettings settings;
  /** The job's metrics; only source splits read outside a task register containers here. */
  private final StepMetrics jobMetrics;
  private final JobClock clock;
  private final Quiescence quiescence;
  /** Source specs replacing the translation's, by stage id (empty unless a shared split plan is read). */
  private final Map<Integer, SourceSpec> sources;

  /**
   * @param plan the job
   * @param streams the job's in-process streams by stream id
   * @param settings the run's settings (bundle limits, metrics on or off, options for user code)
   * @param metrics the job's metrics registry
   * @param clock the job's processing-time clock
   * @param quiescence the job's quiescence tracker, or null when it has no test stream
   */
  public WeirTaskFactory(JobPlan plan, Map<Integer, InProcessStream> streams, WeirSettings settings,
      StepMetrics metrics, JobClock clock, Quiescence quiescence) {
    this(plan, Map.of(), streams, settings, metrics, clock, quiescence);
  }

  /**
   * As {@link #WeirTaskFactory(JobPlan, Map, WeirSettings, StepMetrics, JobClock, Quiescence)}, but
   * source stages read the splits in {@code sources} (by stage id) instead of the ones this JVM's
   * translation made: a multi-process Samza job reads the one split plan that all its processes
   * share ({@code dev.weir.samza.SourceSplitPlan}). A stage not in the map reads its own splits.
   *
   * @param sources source specs by stage id; each must have the stage's partition count
   * @throws IllegalArgumentException naming the stage if a stage in {@code sources} is not a source
   *     stage of {@code plan} or its spec has another partition count
   */
  public WeirTaskFactory(JobPlan plan, Map<Integer, ? extends SourceSpec> sources,
      Map<Integer, InProcessStream> streams, WeirSettings settings, StepMetrics metrics, JobClock clock,
      Quiescence quiescence) {
    Map<Integer, SourceSpec> checked = new HashMap<>();
    for (StagePlan stage : plan.stages()) {
      SourceSpec given = sources.get(stage.id());
      if (given != null) {
        if (stage.source() == null || given.partitions() != stage.partitions()) {
          throw new IllegalArgumentException(stage.name() + (stage.source() == null ? " is not a source stage"
              : " has " + stage.partitions() + " partition(s), the given source " + given.partitions()));
        }
        checked.put(stage.id(), given);
      }
    }
    for (Integer id : sources.keySet()) {
      if (!checked.containsKey(id)) {
        throw new IllegalArgumentException("the job has no stage " + id + " (stages 0 to " + (plan.stages().size() - 1)
            + ")");
      }
    }
    this.sources = Map.copyOf(checked);
    for (StagePlan stage : plan.stages()) {
      for (int p = 0; p < stage.partitions(); p++) {
        places.put(JobPlan.taskName(stage, p), new TaskPlace(stage, p));
      }
    }
    this.streams = streams;
    this.settings = settings;
    this.jobMetrics = metrics;
    this.clock = clock;
    this.quiescence = quiescence;
  }

  /** Every task name of the job, in plan order (stage by stage, partition by partition). */
  public List<TaskName> taskNames() {
    List<TaskName> names = new ArrayList<>(places.size());
    for (String name : places.keySet()) {
      names.add(new TaskName(name));
    }
    return names;
  }

  /**
   * Creates the task {@code name}: its source split (for a source stage) and the partitions of
   * the streams its stage reads.
   *
   * @throws IllegalArgumentException if the job has no such task
   */
  public StageTask createTask(TaskName name) {
    TaskPlace place = places.get(name.getTaskName());
    if (place == null) {
      throw new IllegalArgumentException("the job has no task " + name + "; tasks: " + places.keySet());
    }
    StagePlan stage = place.stage();
    int p = place.partition();
    List<InputPartition> inputs = new ArrayList<>();
    if (stage.source() != null) {
      inputs.add(createSourcePartition(stage, p));
    }
    for (StagePlan.Input input : stage.inputs()) {
      inputs.add(stream(input.stream().id()).partition(p));
    }
    return new StageTask(stage, p, inputs, streams, settings, clock, quiescence);
  }

  /**
   * Creates split {@code partition} of source stage {@code stage}, unopened, bound to the job's
   * clock (and quiescence tracker, for a test stream). Used for each source task, and by the
   * samza-api source system ({@code dev.weir.runner.samza.BeamSourceSystemFactory}), which reads
   * the same splits outside a StageTask.
   *
   * @throws IllegalArgumentException if the stage has no source or no such split
   */
  public SourcePartition createSourcePartition(StagePlan stage, int partition) {
    if (stage.source() == null || partition < 0 || partition >= stage.partitions()) {
      throw new IllegalArgumentException(stage.name() + " has no source split " + partition);
    }
    return SourcePartition.create(sources.getOrDefault(stage.id(), stage.source()), JobPlan.sourceStreamName(stage),
        partition,
        JobPlan.taskName(stage, partition),
        clock, quiescence);
  }

  /**
   * What a source partition of {@code stage} needs when it is read outside a StageTask: the
   * options, the reading thread's step scope, and a Read step there with (when metrics are on) a new
   * metrics container of the stage's Read step, registered with the job's metrics (outside a
   * task there is no commit point, so its live values are reported as committed too).
   *
   * @param scope the reading thread's step scope
   */
  public SourceContext sourceContext(StagePlan stage, StepScope scope) {
    NodeSpec read = stage.nodes().get(0);
    MetricsContainerImpl step = null;
    if (settings.metricsEnabled() && read.writesTo() == null) {
      step = new MetricsContainerImpl(read.stepName());
      jobMetrics.register(read.stepName(), step);
    }
    return new SourceContext(settings.pipelineOptions(), scope, scope.step(read.stepName(), step));
  }

  /**
   * The job's in-process stream {@code streamId}.
   *
   * @throws IllegalArgumentException if the job has no such stream
   */
  public InProcessStream stream(int streamId) {
    InProcessStream stream = streams.get(streamId);
    if (stream == null) {
      throw new IllegalArgumentException("the job has no in-process stream " + streamId + "; streams: "
          + streams.keySet());
    }
    return stream;
  }

  @Override
  public AsyncStreamTask createInstance() {
    return new BoundAtInit();
  }

  /**
   * samza-api's face of a {@link StageTask}: becomes the task named by its context's task model at
   * {@code init}, then hands each envelope to {@link StageTask#process} (the input found by the
   * envelope's stream partition; a failure goes to the callback, which completes before
   * {@code processAsync} returns), the window call to {@link StageTask#tick(boolean)} and the end
   * of stream to {@link StageTask#endOfInput()}. The task itself knows no samza-api interface.
   */
  private final class BoundAtInit
      implements AsyncStreamTask, InitableTask, WindowableTask, EndOfStreamListenerTask, ClosableTask {
    private StageTask task;

    @Override
    public void init(Context context) {
      task = createTask(context.getTaskContext().getTaskModel().getTaskName());
    }

    @Override
    public void processAsync(IncomingMessageEnvelope envelope, MessageCollector collector,
        TaskCoordinator coordinator, TaskCallback callback) {
      try {
        task.process(task.inputIndex(envelope.getSystemStreamPartition()),
            KeyedElement.of((byte[]) envelope.getKey(), envelope.getMessage()));
        callback.complete();
      } catch (Throwable t) {
        callback.failure(t);
      }
    }

    @Override
    public void window(MessageCollector collector, TaskCoordinator coordinator) {
      task.tick(false);
    }

    @Override
    public void onEndOfStream(MessageCollector collector, TaskCoordinator coordinator) {
      task.endOfInput();
    }

    @Override
    public void close() {
      if (task != null) {
        task.close();
      }
    }
  }
}
