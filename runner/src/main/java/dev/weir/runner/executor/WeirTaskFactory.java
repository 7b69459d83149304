package dev.weir.runner.executor;

import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.StagePlan;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.options.PipelineOptions;
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
 * name ({@code stage-N-pP}: partition P of stage N), wired to the job's in-process streams,
 * source splits, clock and metrics. It is what {@code WeirTaskApplication} registers with
 * {@code TaskApplicationDescriptor.withTaskFactory}, and the embedded executor gets its tasks from
 * the factory it finds in that description ({@link #createTask}).
 *
 * <p>samza-api's {@link #createInstance()} takes no arguments (a Samza container learns a task's
 * identity only at {@code init(Context)}), so it returns a task that binds to its StageTask at
 * {@code init}, by the task name in the context's {@code TaskModel}, and delegates to it. What a
 * samza-core container would still need: opening the bound task's operators with state from the
 * task context's stores (the embedded container opens them itself, see {@code Container}). The
 * Samza systems serving its inputs and outputs are in {@code dev.weir.runner.samza}; they reach the
 * job's splits and streams through {@link #createSourcePartition}, {@link #sourceContext} and
 * {@link #stream}.
 *
 * <p>Threading: created on the submitting thread; {@link #createTask} is called there too; the
 * tasks it returns are then confined to their container threads.
 */
public final class WeirTaskFactory implements AsyncStreamTaskFactory {
  /** A task name's place in the plan. */
  private record Slot(StagePlan stage, int partition) {}

  private final Map<String, Slot> slots = new LinkedHashMap<>();
  private final Map<Integer, InProcessStream> streams;
  private final PipelineOptions options;
  private final int maxBundleSize;
  private final long maxBundleTimeMs;
  private final boolean metricsEnabled;
  /** The job's metrics; only source splits read outside a task register containers here. */
  private final StepMetrics metrics;
  private final JobClock clock;
  private final Quiescence quiescence;

  /**
   * @param plan the job
   * @param streams the job's in-process streams by stream id
   * @param quiescence the job's quiescence tracker, or null when it has no test stream
   */
  public WeirTaskFactory(JobPlan plan, Map<Integer, InProcessStream> streams, PipelineOptions options,
      int maxBundleSize, long maxBundleTimeMs, StepMetrics metrics, boolean metricsEnabled, JobClock clock,
      Quiescence quiescence) {
    for (StagePlan stage : plan.stages()) {
      for (int p = 0; p < stage.partitions(); p++) {
        slots.put(taskName(stage, p), new Slot(stage, p));
      }
    }
    this.streams = streams;
    this.options = options;
    this.maxBundleSize = maxBundleSize;
    this.maxBundleTimeMs = maxBundleTimeMs;
    this.metricsEnabled = metricsEnabled;
    this.metrics = metrics;
    this.clock = clock;
    this.quiescence = quiescence;
  }

  /** The task name of partition {@code partition} of {@code stage}: {@code stage-N-pP}. */
  public static String taskName(StagePlan stage, int partition) {
    return stage.name() + "-p" + partition;
  }

  /** The samza-api stream name of a source stage's input. */
  public static String sourceStreamName(StagePlan stage) {
    return stage.name() + "-source";
  }

  /** Every task name of the job, in plan order (stage by stage, partition by partition). */
  public List<TaskName> taskNames() {
    List<TaskName> names = new ArrayList<>(slots.size());
    for (String name : slots.keySet()) {
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
    Slot slot = slots.get(name.getTaskName());
    if (slot == null) {
      throw new IllegalArgumentException("the job has no task " + name + "; tasks: " + slots.keySet());
    }
    StagePlan stage = slot.stage();
    int p = slot.partition();
    List<InputPartition> inputs = new ArrayList<>();
    if (stage.source() != null) {
      inputs.add(createSourcePartition(stage, p));
    }
    for (StagePlan.Input input : stage.inputs()) {
      inputs.add(stream(input.stream().id()).partition(p));
    }
    return new StageTask(stage, p, inputs, streams, options, maxBundleSize, maxBundleTimeMs,
        metricsEnabled, clock, quiescence);
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
    return SourcePartition.create(stage.source(), sourceStreamName(stage), partition, taskName(stage, partition),
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
    if (metricsEnabled && read.writesTo() == null) {
      step = new MetricsContainerImpl(read.stepName());
      this.metrics.register(read.stepName(), step);
    }
    return new SourceContext(options, scope, scope.step(read.stepName(), step));
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

  /** A task that becomes the StageTask named by its context's task model at {@code init}. */
  private final class BoundAtInit
      implements AsyncStreamTask, InitableTask, WindowableTask, EndOfStreamListenerTask, ClosableTask {
    private StageTask task;

    @Override
    public void init(Context context) {
      task = createTask(context.getTaskContext().getTaskModel().getTaskName());
      task.init(context);
    }

    @Override
    public void processAsync(IncomingMessageEnvelope envelope, MessageCollector collector,
        TaskCoordinator coordinator, TaskCallback callback) {
      task.processAsync(envelope, collector, coordinator, callback);
    }

    @Override
    public void window(MessageCollector collector, TaskCoordinator coordinator) {
      task.window(collector, coordinator);
    }

    @Override
    public void onEndOfStream(MessageCollector collector, TaskCoordinator coordinator) {
      task.onEndOfStream(collector, coordinator);
    }

    @Override
    public void close() {
      if (task != null) {
        task.close();
      }
    }
  }
}
