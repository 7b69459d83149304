package dev.weir.runner.application;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.WeirRunner;
import dev.weir.runner.stream.InProcessStream;
import dev.weir.runner.task.StageTask;
import dev.weir.runner.task.WeirTaskFactory;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.FlatMapElements;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.samza.container.TaskName;
import org.apache.samza.system.SystemStreamPartition;
import org.apache.samza.system.descriptors.InputDescriptor;
import org.apache.samza.system.descriptors.OutputDescriptor;
import org.apache.samza.task.AsyncStreamTask;
import org.apache.samza.task.AsyncStreamTaskFactory;
import org.apache.samza.task.EndOfStreamListenerTask;
import org.apache.samza.task.InitableTask;
import org.apache.samza.task.WindowableTask;
import org.junit.jupiter.api.Test;

/** A word count translated into a samza-api TaskApplication: declared streams and task factory. */
class WeirTaskApplicationTest {

  @Test
  void wordCountDescribesItsStreamsAndATaskFactoryCreatingStageTasks() {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=WeirRunner", "--parallelism=3",
        "--stateBackend=MEMORY").as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    p.apply(Create.of("a b", "b c c"))
        .apply(FlatMapElements.into(TypeDescriptors.strings()).via((String line) -> Arrays.asList(line.split(" "))))
        .apply(Count.perElement())
        .apply(MapElements.into(TypeDescriptors.strings()).via((KV<String, Long> kv) -> kv.getKey() + "=" + kv.getValue()));
    JobPlan plan = WeirRunner.translate(p, options);
    assertThat(plan.stages()).hasSize(2); // source + lifted partial combine | merge + format
    assertThat(plan.streams()).hasSize(1);
    StreamPlan shuffle = plan.streams().get(0);
    assertThat(shuffle.kind()).isEqualTo(StreamPlan.Kind.SHUFFLE);

    Map<Integer, InProcessStream> streams = new HashMap<>();
    streams.put(shuffle.id(), new InProcessStream(shuffle, 16));
    WeirTaskFactory factory = new WeirTaskFactory(plan, streams, WeirSettings.from(options), new StepMetrics(),
        JobClock.SYSTEM, null);
    WeirTaskApplication application = new WeirTaskApplication(plan, factory);
    InProcessApplicationDescriptor description = new InProcessApplicationDescriptor(Map.of());
    application.describe(description);

    // Streams: the source's input, the shuffle once as output (stage 0) and once as input (stage 1).
    assertThat(description.inputs()).extracting(InputDescriptor::getStreamId)
        .containsExactly("stage-0-source", shuffle.name());
    assertThat(description.inputs()).extracting(InputDescriptor::getSystemName)
        .containsExactly(WeirTaskApplication.SOURCE_SYSTEM, InProcessStream.SYSTEM);
    assertThat(description.outputs()).extracting(OutputDescriptor::getStreamId).containsExactly(shuffle.name());
    assertThat(description.outputs()).extracting(OutputDescriptor::getSystemName).containsExactly(InProcessStream.SYSTEM);

    // Tasks: one per (stage, partition), each reading partition P of its stage's inputs.
    int sourcePartitions = plan.stages().get(0).partitions();
    Map<TaskName, Set<SystemStreamPartition>> taskInputs = application.taskInputs();
    assertThat(taskInputs).hasSize(sourcePartitions + 3);
    assertThat(taskInputs.get(new TaskName("stage-1-p2")))
        .containsExactly(new SystemStreamPartition(InProcessStream.SYSTEM, shuffle.name(), new org.apache.samza.Partition(2)));
    assertThat(taskInputs.get(new TaskName("stage-0-p0")))
        .containsExactly(new SystemStreamPartition(WeirTaskApplication.SOURCE_SYSTEM, "stage-0-source",
            new org.apache.samza.Partition(0)));

    // The declared factory is a samza-api AsyncStreamTaskFactory creating the StageTasks.
    assertThat(description.taskFactory()).isSameAs(factory).isInstanceOf(AsyncStreamTaskFactory.class);
    AsyncStreamTask unbound = factory.createInstance();
    assertThat(unbound).isInstanceOf(InitableTask.class).isInstanceOf(WindowableTask.class)
        .isInstanceOf(EndOfStreamListenerTask.class);
    List<TaskName> names = application.taskNames();
    for (TaskName name : names) {
      StageTask task = factory.createTask(name);
      assertThat(task).as("the task knows no samza-api interface; the factory's instances adapt it")
          .isNotInstanceOf(AsyncStreamTask.class);
      assertThat(task.name()).isEqualTo(name);
    }
  }
}
