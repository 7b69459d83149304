package dev.weir.samza;

import dev.weir.runner.application.WeirTaskApplication;
import dev.weir.runner.samza.WeirJobs;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.SourceSpec;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.Map;
import org.apache.samza.application.TaskApplication;
import org.apache.samza.application.descriptors.TaskApplicationDescriptor;
import org.apache.samza.serializers.KVSerde;
import org.apache.samza.serializers.NoOpSerde;
import org.apache.samza.system.descriptors.GenericInputDescriptor;
import org.apache.samza.system.descriptors.GenericSystemDescriptor;
import org.apache.samza.task.TaskFactory;

/**
 * A translated Weir job as the samza-api {@link TaskApplication} that samza-core runs: the same
 * stages and task names as {@link WeirTaskApplication} (the in-process face), but with the
 * intermediate streams on Weir's Kafka system. Declared, in plan order: each source stage's input
 * stream ({@link JobPlan#sourceStreamName}, on {@value WeirTaskApplication#SOURCE_SYSTEM}, bounded
 * for a bounded source; no serde: the splits are read in this JVM); each intermediate stream as an
 * input only (stream id = the stream's name, physical name = its topic), with serde
 * {@link WeirMessageSerde} for messages and none for keys (a shuffle's key bytes go as they are).
 * Tasks write to the topics through samza-core's collector all the same; samza-core keys serdes by
 * system stream, so the input's serde encodes what they write. Declaring the topics as outputs too
 * would make them samza-core intermediate streams: its planner would choose their partition counts
 * (Weir creates the topics with the consuming stage's partitions) and its container would wrap the
 * serde in its own {@code IntermediateMessageSerde}, which re-encodes every watermark and
 * end-of-stream message as its own JSON and drops Weir's producer index.
 *
 * <p>Threading: built and described on the submitting thread; immutable afterwards.
 */
final class SamzaTaskApplication implements TaskApplication {
  private final JobPlan plan;
  private final String jobId;
  private final Map<String, String> topics;
  private final TaskFactory taskFactory;

  /**
   * @param jobId the id the job's sources are bound under in this JVM ({@link WeirJobs})
   * @param topics the Kafka topic of each intermediate stream, by stream name
   */
  SamzaTaskApplication(JobPlan plan, String jobId, Map<String, String> topics, TaskFactory taskFactory) {
    this.plan = plan;
    this.jobId = jobId;
    this.topics = topics;
    this.taskFactory = taskFactory;
  }

  @Override
  public void describe(TaskApplicationDescriptor app) {
    GenericSystemDescriptor sources = new GenericSystemDescriptor(WeirTaskApplication.SOURCE_SYSTEM,
        WeirTaskApplication.SOURCE_SYSTEM_FACTORY).withSystemConfigs(Map.of(WeirJobs.JOB_ID_CONFIG, jobId));
    GenericSystemDescriptor kafka =
        new GenericSystemDescriptor(SamzaJobConfig.KAFKA_SYSTEM, WeirKafkaSystemFactory.class.getName());
    for (StagePlan stage : plan.stages()) {
      if (stage.source() != null) {
        GenericInputDescriptor<Object> source =
            sources.getInputDescriptor(JobPlan.sourceStreamName(stage), new NoOpSerde<>());
        if (!(stage.source() instanceof SourceSpec.Unbounded)) {
          source.isBounded();
        }
        app.withInputStream(source);
      }
    }
    for (StreamPlan stream : plan.streams()) {
      KVSerde<Object, Object> serde = KVSerde.of(new NoOpSerde<>(), new WeirMessageSerde(stream.name(),
          stream.elementCoder()));
      String topic = topics.get(stream.name());
      app.withInputStream(kafka.getInputDescriptor(stream.name(), serde).withPhysicalName(topic));
    }
    app.withTaskFactory(taskFactory);
  }
}
