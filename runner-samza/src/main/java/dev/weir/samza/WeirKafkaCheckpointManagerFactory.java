package dev.weir.samza;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.samza.checkpoint.Checkpoint;
import org.apache.samza.checkpoint.CheckpointManager;
import org.apache.samza.checkpoint.CheckpointManagerFactory;
import org.apache.samza.checkpoint.CheckpointV1;
import org.apache.samza.config.Config;
import org.apache.samza.container.TaskName;
import org.apache.samza.metrics.MetricsRegistry;
import org.apache.samza.serializers.CheckpointV1Serde;

/**
 * A samza-api checkpoint manager on a Kafka topic, written with Kafka's own client on the broker of
 * Weir's Kafka system ({@value SamzaJobConfig#KAFKA_SYSTEM}), so that checkpoints of a
 * SAMZA_STANDALONE job survive the loss of a machine's disk: the topic (config key
 * {@value #TOPIC_CONFIG}, one partition, compacted) holds one record per checkpoint, key = task
 * name, value = samza-core's {@link CheckpointV1Serde} JSON; the last record of a task is its
 * checkpoint. samza-kafka's own {@code KafkaCheckpointManagerFactory} does the same, but brings
 * Kafka 2.4's broker and Scala clients next to Weir's Kafka 3.9 client.
 *
 * <p>{@link CheckpointManager#start} creates the topic if missing and reads it to its end once;
 * {@link CheckpointManager#writeCheckpoint} waits until the broker acknowledged the record
 * ({@code acks=all}) and fails naming the broker otherwise. Only version-1 checkpoints are written
 * ({@link SamzaJobConfig} sets {@code task.checkpoint.write.versions=1}); samza-core 1.8's version 1
 * carries the store changelog offsets that its transactional state restores to.
 *
 * <p>Exactly-once ({@link KafkaSettings#exactlyOnce()}): {@link CheckpointManager#start} first
 * acquires the {@link TaskTransaction} of every registered task, which fences the task's earlier
 * owners and aborts what they left open, and only then reads the topic ({@code read_committed});
 * {@link CheckpointManager#writeCheckpoint} sends the record in the task's transaction and commits
 * it, so the checkpoint and everything the task sent since the last one (outputs, changelog writes)
 * become visible together.
 *
 * <p>Threading: samza-core calls a manager from its container thread and its commit threads;
 * the methods synchronize on the manager, except that a checkpoint's
 * transaction commits outside the lock.
 */
public final class WeirKafkaCheckpointManagerFactory implements CheckpointManagerFactory {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(WeirKafkaCheckpointManagerFactory.class);
  /** Config key of the checkpoint topic (written by {@link SamzaJobConfig}). */
  static final String TOPIC_CONFIG = "weir.checkpoint.topic";

  @Override
  public CheckpointManager getCheckpointManager(Config config, MetricsRegistry registry) {
    String topic = config.get(TOPIC_CONFIG);
    if (topic == null || topic.isBlank()) {
      throw new IllegalArgumentException(WeirKafkaCheckpointManagerFactory.class.getName() + " needs " + TOPIC_CONFIG
          + " (the checkpoint topic) in the config");
    }
    return new Manager(topic, KafkaSettings.of(SamzaJobConfig.KAFKA_SYSTEM, config));
  }

  /** The manager of one job's checkpoint topic. */
  private static final class Manager implements CheckpointManager {
    private final String topic;
    private final KafkaSettings settings;
    private final CheckpointV1Serde serde = new CheckpointV1Serde();
    private final Map<String, byte[]> last = new HashMap<>();
    private final java.util.Set<String> registered = new java.util.LinkedHashSet<>();
    /** Exactly-once: the registered tasks' transactions, by task name, from {@link #start}. */
    private final Map<String, TaskTransaction> transactions = new HashMap<>();
    private KafkaProducer<byte[], byte[]> producer;

    Manager(String topic, KafkaSettings settings) {
      this.topic = topic;
      this.settings = settings;
    }

    @Override
    public synchronized void start() {
      WeirKafkaAdmin admin = new WeirKafkaAdmin(SamzaJobConfig.KAFKA_SYSTEM, settings);
      try {
        admin.createTopics(Map.of(topic, 1), (short) 1, true);
        admin.awaitTopics(Map.of(topic, 1));
      } finally {
        admin.stop();
      }
      if (settings.exactlyOnce() && !registered.isEmpty()) {
        long t0 = System.nanoTime();
        for (String task : registered) { // before reading: a dead owner's open transaction must not hide checkpoints
          transactions.put(task, TaskTransactions.acquire(settings, task, true));
        }
        LOG.info("exactly-once: initialized the Kafka transactions of {} task(s) {} in {} ms (earlier owners fenced, "
            + "their open transactions aborted)", registered.size(), registered, (System.nanoTime() - t0) / 1_000_000);
      }
      SinglePartitionTopic.read(settings, topic, "the checkpoint topic", r -> {
        if (r.key() != null) {
          last.put(new String(r.key(), StandardCharsets.UTF_8), r.value());
        }
        return true;
      });
      producer = new KafkaProducer<>(settings.producer());
    }

    @Override
    public synchronized void register(TaskName taskName) {
      registered.add(taskName.getTaskName());
    }

    /**
     * @throws IllegalArgumentException for a checkpoint that is not version 1
     * @throws IllegalStateException naming the broker if Kafka does not acknowledge it in time
     */
    @Override
    public void writeCheckpoint(TaskName taskName, Checkpoint checkpoint) {
      if (!(checkpoint instanceof CheckpointV1 v1)) {
        throw new IllegalArgumentException("Weir's Kafka checkpoint manager writes version-1 checkpoints only, not "
            + checkpoint.getClass().getSimpleName() + " (set task.checkpoint.write.versions=1)");
      }
      byte[] value = serde.toBytes(v1);
      byte[] key = taskName.getTaskName().getBytes(StandardCharsets.UTF_8);
      TaskTransaction transaction;
      synchronized (this) {
        transaction = transactions.get(taskName.getTaskName());
      }
      if (transaction != null) {
        // not under the manager's lock: tasks commit their transactions concurrently
        transaction.commit(topic, key, value);
      } else if (settings.exactlyOnce()) {
        throw new IllegalStateException("exactly-once: no Kafka transaction for " + taskName + ", which this "
            + "container did not register with the checkpoint manager");
      } else {
        synchronized (this) {
          try {
            producer.send(new ProducerRecord<>(topic, 0, key, value)).get(settings.timeoutMs(), TimeUnit.MILLISECONDS);
          } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("writing the checkpoint of " + taskName + " to topic " + topic
                + " on Kafka at " + settings.bootstrapServers() + " failed: " + e, e);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while writing the checkpoint of " + taskName, e);
          }
        }
      }
      synchronized (this) {
        last.put(taskName.getTaskName(), value);
      }
    }

    @Override
    public synchronized Checkpoint readLastCheckpoint(TaskName taskName) {
      byte[] value = last.get(taskName.getTaskName());
      return value == null ? null : serde.fromBytes(value);
    }

    @Override
    public synchronized void stop() {
      transactions.values().forEach(TaskTransactions::release);
      transactions.clear();
      if (producer != null) {
        producer.close(Duration.ofMillis(settings.timeoutMs()));
        producer = null;
      }
    }
  }
}
