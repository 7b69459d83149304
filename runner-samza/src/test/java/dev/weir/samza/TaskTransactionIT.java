package dev.weir.samza;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.testservices.KafkaBroker;
import dev.weir.testservices.KafkaBrokerExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.samza.config.MapConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link TaskTransaction} and {@link TaskTransactions} on a real broker: what a task sends becomes
 * visible to {@code read_committed} readers only with the checkpoint that commits it; what it sends
 * after the commit's seal waits for the next transaction; a new owner fences the old one and aborts
 * what it left open; a broker lost mid-transaction fails the commit within the time-out, naming its
 * address. About 20 s with the two brokers' starts.
 */
class TaskTransactionIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  private static KafkaSettings settings(String prefix) {
    return KafkaSettings.of(SamzaJobConfig.KAFKA_SYSTEM, new MapConfig(Map.of(
        "systems.weir-kafka.bootstrap.servers", KAFKA.broker().bootstrapServers(),
        "systems.weir-kafka.timeout.ms", "10000",
        "systems.weir-kafka." + KafkaSettings.TRANSACTIONAL_ID_PREFIX, prefix)));
  }

  private static ProducerRecord<byte[], byte[]> record(String topic, String value) {
    return new ProducerRecord<>(topic, 0, null, value.getBytes(StandardCharsets.UTF_8));
  }

  /** Every committed value of partition 0 of {@code topic}, read_committed, from the start to the end. */
  private static List<String> committed(KafkaSettings settings, String topic) {
    List<String> values = new ArrayList<>();
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(settings.consumer())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp); // the last stable offset, read_committed
      while (consumer.position(tp) < end) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
          values.add(new String(r.value(), StandardCharsets.UTF_8));
        }
      }
    }
    return values;
  }

  @Test
  void sentRecords_visibleOnlyWithTheirCheckpoint_sendsAfterTheSealJoinTheNextTransaction() throws Exception {
    KafkaBroker broker = KAFKA.broker();
    broker.createTopic("tt-out", 1);
    broker.createTopic("tt-checkpoints", 1);
    KafkaSettings settings = settings("tt-a");
    TaskTransaction t = TaskTransactions.acquire(settings, "stage-1-p0", true);
    try {
      t.send(record("tt-out", "a1"));
      t.send(record("tt-out", "a2"));
      t.flush();
      assertThat(committed(settings, "tt-out")).as("sent, flushed, not committed").isEmpty();

      t.requestCommit();
      t.flush(); // the commit's synchronous stage: seals
      t.send(record("tt-out", "b1")); // the task processes on while the checkpoint is written
      t.commit("tt-checkpoints", "stage-1-p0".getBytes(StandardCharsets.UTF_8), "cp1".getBytes(StandardCharsets.UTF_8));
      assertThat(committed(settings, "tt-out")).containsExactly("a1", "a2");
      assertThat(committed(settings, "tt-checkpoints")).containsExactly("cp1");

      // b1 opened the next transaction; an unchanged checkpoint still commits it
      t.commit("tt-checkpoints", "stage-1-p0".getBytes(StandardCharsets.UTF_8), "cp1".getBytes(StandardCharsets.UTF_8));
      assertThat(committed(settings, "tt-out")).containsExactly("a1", "a2", "b1");
      // nothing sent and the same checkpoint: nothing written
      t.commit("tt-checkpoints", "stage-1-p0".getBytes(StandardCharsets.UTF_8), "cp1".getBytes(StandardCharsets.UTF_8));
      assertThat(committed(settings, "tt-checkpoints")).containsExactly("cp1", "cp1");
    } finally {
      TaskTransactions.release(t);
    }
  }

  @Test
  void aNewOwner_fencesTheOldOne_andAbortsWhatItLeftOpen() throws Exception {
    KafkaBroker broker = KAFKA.broker();
    broker.createTopic("tt-fence", 1);
    KafkaSettings settings = settings("tt-b");
    TaskTransaction old = TaskTransactions.acquire(settings, "stage-2-p1", true);
    old.send(record("tt-fence", "zombie"));
    old.flush(); // on the broker, uncommitted: a process killed here leaves this transaction open

    TaskTransaction owner = TaskTransactions.acquire(settings, "stage-2-p1", true); // a new container
    try {
      assertThat(TaskTransactions.find("tt-b", "stage-2-p1")).isSameAs(owner);
      assertThatThrownBy(() -> {
        old.send(record("tt-fence", "late"));
        old.commit("tt-fence", new byte[] {1}, new byte[] {1});
      }).isInstanceOf(IllegalStateException.class).hasMessageContaining("tt-b-stage-2-p1");
      owner.send(record("tt-fence", "new"));
      owner.commit("tt-fence", "k".getBytes(StandardCharsets.UTF_8), "cp".getBytes(StandardCharsets.UTF_8));
      assertThat(committed(settings, "tt-fence")).as("the zombie's record aborted, the owner's committed")
          .containsExactly("new", "cp");
    } finally {
      TaskTransactions.release(old);
      TaskTransactions.release(owner);
    }
    assertThat(TaskTransactions.find("tt-b", "stage-2-p1")).as("the last release forgets it").isNull();
  }

  @Test
  void aBrokerLostMidTransaction_failsTheCommitWithinTheTimeOut_namingTheAddress() throws Exception {
    KafkaBroker own = KafkaBroker.start(KafkaBroker.Config.in(java.nio.file.Path.of("target", "kafka-broker",
        "tt-lost-" + System.currentTimeMillis())));
    KafkaSettings settings;
    TaskTransaction t;
    try {
      own.createTopic("tt-lost", 1);
      settings = KafkaSettings.of(SamzaJobConfig.KAFKA_SYSTEM, new MapConfig(Map.of(
          "systems.weir-kafka.bootstrap.servers", own.bootstrapServers(),
          "systems.weir-kafka.timeout.ms", "3000",
          "systems.weir-kafka." + KafkaSettings.TRANSACTIONAL_ID_PREFIX, "tt-c")));
      t = TaskTransactions.acquire(settings, "stage-0-p0", true);
      t.send(record("tt-lost", "x"));
      t.flush();
    } finally {
      own.close();
    }
    long lostNs = System.nanoTime();
    try {
      assertThatThrownBy(() -> t.commit("tt-lost", new byte[] {1}, new byte[] {1}))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("tt-c-stage-0-p0")
          .hasMessageContaining("Kafka at " + settings.bootstrapServers());
      assertThat((System.nanoTime() - lostNs) / 1_000_000L).as("ms to fail").isLessThan(30_000L);
    } finally {
      TaskTransactions.release(t);
    }
  }
}
