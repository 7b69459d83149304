package dev.weir.samza;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;

/**
 * A {@link SplitPlanStore} on a Kafka topic of the job ({@code <prefix>-<job>-<job.id>-plan}, next
 * to its checkpoint topic), on the broker of Weir's Kafka system: one partition, so "first" is
 * offset order, which every reader sees alike; the first record is the job's plan and later ones
 * (from processes that found the topic empty at the same time) are never read.
 *
 * <p>Retention: the topic is compacted (no time-based deletion: a plan must outlive any job, as
 * the checkpoints that refer to its splits do), and every record has its own key (publisher and a
 * random id), so compaction, which keeps the last record per key, never removes the first plan.
 * Size: one record per plan, up to {@link KafkaSettings#MAX_MESSAGE_BYTES} (64 MiB: the topic's
 * {@code max.message.bytes} and the producer's {@code max.request.size} are raised from Kafka's
 * 1 MB default, as for every topic Weir creates); a larger plan fails the start naming its size
 * and {@value SourceSplitPlan#PLAN_FILE_CONFIG}. Plans are not chunked: one record is atomic, so no
 * reader ever sees half a plan.
 *
 * <p>Progress without a plan ({@link #progressWithoutPlan}): the job's checkpoint topic (Weir's
 * Kafka checkpoint manager) holding checkpoints while the plan topic is empty means the plan was
 * deleted after the job started.
 *
 * <p>Threading: one thread at a time; each call opens and closes its own Kafka client.
 */
final class KafkaSplitPlanStore implements SplitPlanStore {
  private final String topic;
  private final KafkaSettings settings;
  private final short replication;
  private final String checkpointTopic;
  private final String writer;

  /**
   * @param checkpointTopic the job's Kafka checkpoint topic, or null if its checkpoints are elsewhere
   * @param writer who publishes (becomes part of the record key), e.g. {@code processor-0}
   */
  KafkaSplitPlanStore(String topic, KafkaSettings settings, short replication, String checkpointTopic, String writer) {
    this.topic = topic;
    this.settings = settings;
    this.replication = replication;
    this.checkpointTopic = checkpointTopic;
    this.writer = writer;
  }

  /** Creates the topic if missing (one partition, compacted) and waits until the broker shows it. */
  void create(WeirKafkaAdmin admin) {
    admin.createTopics(Map.of(topic, 1), replication, true);
    admin.awaitTopics(Map.of(topic, 1));
  }

  @Override
  public byte[] first() {
    List<byte[]> first = new ArrayList<>(1);
    SinglePartitionTopic.read(settings, topic, "the split plan topic", r -> !first.add(r.value()));
    return first.isEmpty() ? null : first.get(0);
  }

  @Override
  public void append(byte[] envelope) {
    if (envelope.length > KafkaSettings.MAX_MESSAGE_BYTES - 1024) {
      throw tooLarge(envelope, null);
    }
    byte[] key = (writer + "-" + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(settings.producer())) {
      producer.send(new ProducerRecord<>(topic, 0, key, envelope)).get(settings.timeoutMs(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RecordTooLargeException) {
        throw tooLarge(envelope, e.getCause());
      }
      throw new IllegalStateException("writing the split plan (" + envelope.length + " bytes) to " + describe()
          + " failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("writing the split plan to " + describe() + " took longer than "
          + settings.timeoutMs() + " ms; is the broker reachable?", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while writing the split plan to " + describe(), e);
    }
  }

  private IllegalStateException tooLarge(byte[] envelope, Throwable cause) {
    return new IllegalStateException("the split plan is " + envelope.length + " bytes, more than the "
        + KafkaSettings.MAX_MESSAGE_BYTES + " bytes a record of " + describe() + " may have; stage it in a file "
        + "every process reads instead (" + SourceSplitPlan.PLAN_FILE_CONFIG + ")", cause);
  }

  @Override
  public String progressWithoutPlan() {
    if (checkpointTopic == null) {
      return null;
    }
    WeirKafkaAdmin admin = new WeirKafkaAdmin(SamzaJobConfig.KAFKA_SYSTEM, settings);
    try {
      var metadata = admin.getSystemStreamMetadata(java.util.Set.of(checkpointTopic)).get(checkpointTopic);
      boolean any = metadata != null && metadata.getSystemStreamPartitionMetadata().values().stream()
          .anyMatch(p -> p.getNewestOffset() != null);
      return any ? "its checkpoint topic " + checkpointTopic + " holds checkpoints" : null;
    } catch (IllegalStateException missing) {
      return null; // no checkpoint topic yet: the job has not checkpointed
    } finally {
      admin.stop();
    }
  }

  @Override
  public String describe() {
    return "topic " + topic + " on Kafka at " + settings.bootstrapServers();
  }
}
