package dev.weir.samza;

import dev.weir.runner.WeirSettings;
import dev.weir.runner.executor.HostedTask;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StreamPlan;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.samza.context.Context;
import org.apache.samza.system.IncomingMessageEnvelope;
import org.apache.samza.system.OutgoingMessageEnvelope;
import org.apache.samza.system.SystemStream;
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
 * The samza-api task factory of a Weir job on samza-core: each Samza task becomes, at
 * {@code init}, the Weir task of the same name ({@code stage-N-pP}) as a {@link HostedTask},
 * which runs the stage's fused operators exactly as the embedded executor does. Envelopes of its
 * input partitions (source splits, intermediate Kafka topics) go to it; what it writes to its
 * output streams goes to samza-core's {@link MessageCollector}, to the stream's topic and the
 * partition Weir's writer chose; {@code window} (every {@value SamzaJobConfig#TICK_MS} ms) is its
 * tick. A task whose input ended and whose output is sent asks samza-core to shut it down
 * ({@link TaskCoordinator.RequestScope#CURRENT_TASK}); when every task has, the container ends.
 *
 * <p>State: the task's keyed state and timers live in Weir's own stores ({@code --stateBackend},
 * a directory per task under the run's state directory), not in Samza stores, and are not
 * restored after a failure (Samza stores with changelogs: issue 15's next slice).
 *
 * <p>Threading: samza-core calls each task from one thread at a time.
 */
final class SamzaStageTaskFactory implements AsyncStreamTaskFactory {
  private final JobPlan plan;
  private final WeirSettings settings;
  private final StepMetrics metrics;
  private final Path stateDirectory;
  /** Topic to stream name, for the inputs; stream name to output system stream. */
  private final Map<String, String> streamOfTopic = new HashMap<>();
  private final Map<String, SystemStream> outputOf = new HashMap<>();

  /**
   * @param topics the Kafka topic of each intermediate stream, by stream name
   * @param stateDirectory the run's state directory (each task gets a sub-directory), or null for
   *     the memory backend
   */
  SamzaStageTaskFactory(JobPlan plan, WeirSettings settings, StepMetrics metrics, Map<String, String> topics,
      Path stateDirectory) {
    this.plan = plan;
    this.settings = settings;
    this.metrics = metrics;
    this.stateDirectory = stateDirectory;
    topics.forEach((stream, topic) -> {
      streamOfTopic.put(topic, stream);
      outputOf.put(stream, new SystemStream(SamzaJobConfig.KAFKA_SYSTEM, topic));
    });
  }

  @Override
  public AsyncStreamTask createInstance() {
    return new Task();
  }

  /** One Samza task hosting one Weir task. */
  private final class Task
      implements AsyncStreamTask, InitableTask, WindowableTask, EndOfStreamListenerTask, ClosableTask {
    private HostedTask task;
    private MessageCollector collector;
    private final HostedTask.Output output = this::send;
    private boolean shutdownRequested;

    @Override
    public void init(Context context) throws Exception {
      String name = context.getTaskContext().getTaskModel().getTaskName().getTaskName();
      task = new HostedTask(plan, name, settings, metrics, stateDirectory == null ? null : stateDirectory.resolve(name));
      task.open();
    }

    @Override
    public void processAsync(IncomingMessageEnvelope envelope, MessageCollector collector,
        TaskCoordinator coordinator, TaskCallback callback) {
      try {
        this.collector = collector;
        String stream = envelope.getSystemStreamPartition().getStream();
        String weirStream = streamOfTopic.getOrDefault(stream, stream);
        int input = task.inputIndex(weirStream);
        if (input < 0) {
          throw new IllegalStateException(task.name() + " does not read " + envelope.getSystemStreamPartition());
        }
        task.process(input, envelope.getKey(), envelope.getMessage(), output);
        shutDownIfDone(coordinator);
        callback.complete();
      } catch (Throwable t) {
        callback.failure(t);
      }
    }

    @Override
    public void window(MessageCollector collector, TaskCoordinator coordinator) {
      this.collector = collector;
      task.tick(output);
      shutDownIfDone(coordinator);
    }

    @Override
    public void onEndOfStream(MessageCollector collector, TaskCoordinator coordinator) {
      this.collector = collector;
      task.endOfInput(output);
    }

    @Override
    public void close() {
      if (task != null) {
        task.close();
      }
    }

    private void shutDownIfDone(TaskCoordinator coordinator) {
      if (!shutdownRequested && task.isDone()) {
        shutdownRequested = true;
        coordinator.commit(TaskCoordinator.RequestScope.CURRENT_TASK);
        coordinator.shutdown(TaskCoordinator.RequestScope.CURRENT_TASK);
      }
    }

    private void send(StreamPlan stream, int partition, byte[] key, Object message) {
      collector.send(new OutgoingMessageEnvelope(outputOf.get(stream.name()), partition, key, message));
    }
  }
}
