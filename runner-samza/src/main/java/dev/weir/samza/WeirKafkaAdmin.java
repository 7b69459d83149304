package dev.weir.samza;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.samza.Partition;
import org.apache.samza.system.StreamSpec;
import org.apache.samza.system.StreamValidationException;
import org.apache.samza.system.SystemAdmin;
import org.apache.samza.system.SystemStreamMetadata;
import org.apache.samza.system.SystemStreamPartition;

/**
 * The samza-api {@link SystemAdmin} of Weir's Kafka system: per topic, its partitions with their
 * offsets (oldest, newest, upcoming, as Kafka's log start and end offsets), the offset after an
 * offset, and topic creation. Every call is bounded by the system's time-out and fails with an
 * {@link IllegalStateException} naming the broker addresses it tried.
 *
 * <p>Threading: thread-safe (Kafka's {@link Admin} is); created lazily on first use, closed by
 * {@link #stop}.
 */
final class WeirKafkaAdmin implements SystemAdmin {
  private final String system;
  private final KafkaSettings settings;
  private Admin admin;
  private boolean stopped;

  WeirKafkaAdmin(String system, KafkaSettings settings) {
    this.system = system;
    this.settings = settings;
  }

  @Override
  public synchronized void stop() {
    stopped = true;
    if (admin != null) {
      admin.close(java.time.Duration.ofSeconds(5));
      admin = null;
    }
  }

  @Override
  public synchronized boolean isStopped() {
    return stopped;
  }

  private synchronized Admin admin() {
    if (admin == null) {
      admin = Admin.create(settings.admin());
    }
    return admin;
  }

  /** Kafka offsets are longs; the next one follows. */
  @Override
  public Map<SystemStreamPartition, String> getOffsetsAfter(Map<SystemStreamPartition, String> offsets) {
    Map<SystemStreamPartition, String> after = new HashMap<>();
    offsets.forEach((ssp, offset) -> after.put(ssp, Long.toString(Long.parseLong(offset) + 1)));
    return after;
  }

  /**
   * Partitions and offsets of each topic: oldest = log start, upcoming = log end, newest =
   * upcoming - 1 (null for an empty partition).
   *
   * @throws IllegalStateException naming the broker if a topic is missing or Kafka does not answer in time
   */
  @Override
  public Map<String, SystemStreamMetadata> getSystemStreamMetadata(Set<String> streams) {
    Map<String, SystemStreamMetadata> result = new HashMap<>();
    if (streams.isEmpty()) {
      return result;
    }
    Map<String, TopicDescription> topics = await("describe topics " + streams,
        () -> admin().describeTopics(streams).allTopicNames().get(settings.timeoutMs(), TimeUnit.MILLISECONDS));
    Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    for (TopicDescription topic : topics.values()) {
      topic.partitions().forEach(p -> {
        earliest.put(new TopicPartition(topic.name(), p.partition()), OffsetSpec.earliest());
        latest.put(new TopicPartition(topic.name(), p.partition()), OffsetSpec.latest());
      });
    }
    Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> starts = await("list offsets of " + streams,
        () -> admin().listOffsets(earliest).all().get(settings.timeoutMs(), TimeUnit.MILLISECONDS));
    Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = await("list offsets of " + streams,
        () -> admin().listOffsets(latest).all().get(settings.timeoutMs(), TimeUnit.MILLISECONDS));
    for (TopicDescription topic : topics.values()) {
      Map<Partition, SystemStreamMetadata.SystemStreamPartitionMetadata> partitions = new LinkedHashMap<>();
      for (var p : topic.partitions()) {
        TopicPartition tp = new TopicPartition(topic.name(), p.partition());
        long start = starts.get(tp).offset();
        long end = ends.get(tp).offset();
        partitions.put(new Partition(p.partition()), new SystemStreamMetadata.SystemStreamPartitionMetadata(
            Long.toString(start), end > start ? Long.toString(end - 1) : null, Long.toString(end)));
      }
      result.put(topic.name(), new SystemStreamMetadata(topic.name(), partitions));
    }
    return result;
  }

  @Override
  public Integer offsetComparator(String offset1, String offset2) {
    if (offset1 == null || offset2 == null) {
      return null;
    }
    return Long.compare(Long.parseLong(offset1), Long.parseLong(offset2));
  }

  /**
   * Creates the topic with the spec's partition count (replication: {@code 1}, records up to
   * {@link KafkaSettings#MAX_MESSAGE_BYTES}); false if it exists. A store's changelog and samza-core's
   * coordinator stream (with ZooKeeper coordination: job model versions and the task-to-changelog
   * partition mapping, keyed) are compacted, so that time-based retention never drops the latest value
   * of a key.
   */
  @Override
  public boolean createStream(StreamSpec spec) {
    return createTopics(Map.of(spec.getPhysicalName(), spec.getPartitionCount()), (short) 1,
        spec.isChangeLogStream() || spec.isCoordinatorStream()).contains(spec.getPhysicalName());
  }

  /**
   * Checks that the topic exists with at least the spec's partition count (a store's changelog:
   * one partition per task), waiting up to the time-out for a topic just created.
   *
   * @throws StreamValidationException naming the topic, the broker and the counts
   */
  @Override
  public void validateStream(StreamSpec spec) throws StreamValidationException {
    String topic = spec.getPhysicalName();
    try {
      // a topic just created may be unknown to the broker's metadata for a moment
      awaitTopics(Map.of(topic, spec.getPartitionCount()));
    } catch (IllegalStateException e) {
      // not there with that partition count in time: the description below says what is there
    }
    Map<String, TopicDescription> described = await("describe topic " + topic,
        () -> admin().describeTopics(List.of(topic)).allTopicNames().get(settings.timeoutMs(), TimeUnit.MILLISECONDS));
    TopicDescription d = described.get(topic);
    if (d == null || d.partitions().size() < spec.getPartitionCount()) {
      throw new StreamValidationException("topic " + topic + " on Kafka at " + settings.bootstrapServers() + " has "
          + (d == null ? "no" : d.partitions().size()) + " partitions; " + spec.getPartitionCount() + " needed");
    }
  }

  /**
   * Creates topics (name to partition count) that do not exist yet, taking records up to
   * {@link KafkaSettings#MAX_MESSAGE_BYTES}.
   *
   * @return the topics created (the others existed)
   * @throws IllegalStateException naming the broker if Kafka does not answer in time or refuses
   */
  List<String> createTopics(Map<String, Integer> partitions, short replication) {
    return createTopics(partitions, replication, false);
  }

  /** As {@link #createTopics(Map, short)}; {@code compacted}: a store's changelog (cleanup.policy=compact). */
  List<String> createTopics(Map<String, Integer> partitions, short replication, boolean compacted) {
    List<NewTopic> topics = new ArrayList<>();
    Map<String, String> configs = new HashMap<>(Map.of("max.message.bytes",
        Integer.toString(KafkaSettings.MAX_MESSAGE_BYTES),
        // a log segment must hold the largest batch; brokers set up for tests often use small ones
        "segment.bytes", Integer.toString(2 * KafkaSettings.MAX_MESSAGE_BYTES)));
    if (compacted) {
      configs.put("cleanup.policy", "compact");
    }
    partitions.forEach((name, count) -> topics.add(new NewTopic(name, count, replication).configs(configs)));
    var result = admin().createTopics(topics);
    List<String> created = new ArrayList<>();
    for (var e : result.values().entrySet()) {
      try {
        await("create topic " + e.getKey(), () -> e.getValue().get(settings.timeoutMs(), TimeUnit.MILLISECONDS));
        created.add(e.getKey());
      } catch (IllegalStateException failure) {
        if (!(failure.getCause() instanceof TopicExistsException)) {
          throw failure;
        }
      }
    }
    return created;
  }

  /**
   * Waits until the broker describes every topic with its partition count: a topic just created
   * may be unknown to the broker's metadata for a moment, and samza-core reads it at once.
   *
   * @throws IllegalStateException naming the broker and the topics missing after the time-out
   */
  void awaitTopics(Map<String, Integer> partitions) {
    long deadlineNs = System.nanoTime() + settings.timeoutMs() * 1_000_000L;
    Map<String, Integer> missing = new HashMap<>(partitions);
    while (true) {
      try {
        Map<String, org.apache.kafka.common.KafkaFuture<TopicDescription>> described =
            admin().describeTopics(missing.keySet()).topicNameValues();
        for (var e : described.entrySet()) {
          try {
            TopicDescription d = e.getValue().get(settings.timeoutMs(), TimeUnit.MILLISECONDS);
            if (d.partitions().size() == missing.get(e.getKey())) {
              missing.remove(e.getKey());
            }
          } catch (ExecutionException notYet) {
            if (!(notYet.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)) {
              throw new IllegalStateException("Kafka at " + settings.bootstrapServers() + " (system " + system
                  + ") failed to describe topic " + e.getKey() + ": " + notYet.getCause(), notYet.getCause());
            }
          }
        }
      } catch (TimeoutException e) {
        // retried until the deadline
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for topics on Kafka at "
            + settings.bootstrapServers(), e);
      }
      if (missing.isEmpty()) {
        return;
      }
      if (System.nanoTime() - deadlineNs > 0) {
        throw new IllegalStateException("Kafka at " + settings.bootstrapServers() + " (system " + system
            + ") does not show the topics " + missing.keySet() + " with their partitions within "
            + settings.timeoutMs() + " ms of creating them");
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for topics on Kafka at "
            + settings.bootstrapServers(), e);
      }
    }
  }

  /** Deletes topics (best effort, bounded by the time-out). */
  void deleteTopics(List<String> topics) {
    await("delete topics " + topics,
        () -> admin().deleteTopics(topics).all().get(settings.timeoutMs(), TimeUnit.MILLISECONDS));
  }

  private interface Call<T> {
    T call() throws InterruptedException, ExecutionException, TimeoutException;
  }

  private <T> T await(String what, Call<T> call) {
    try {
      return call.call();
    } catch (TimeoutException e) {
      throw new IllegalStateException("Kafka at " + settings.bootstrapServers() + " (system " + system
          + ") did not answer within " + settings.timeoutMs() + " ms to: " + what + "; is the broker reachable?", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw new IllegalStateException("Kafka at " + settings.bootstrapServers() + " (system " + system + ") failed to "
          + what + ": " + cause, cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for Kafka at " + settings.bootstrapServers()
          + " to " + what, e);
    }
  }
}
