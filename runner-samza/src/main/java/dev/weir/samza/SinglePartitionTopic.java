package dev.weir.samza;

import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;

/**
 * Reads a one-partition bookkeeping topic of the job (the checkpoint topic, the source split plan
 * topic) from its start up to the end offset it had when the read began: what a process needs at
 * start, before it writes to the topic itself.
 *
 * <p>Threading: stateless; each call opens and closes its own consumer.
 */
final class SinglePartitionTopic {
  private SinglePartitionTopic() {}

  /**
   * Hands partition 0's records of {@code topic}, oldest first, to {@code visitor} until it returns
   * false or the records present at the start of the call are all read.
   *
   * @param what names the topic's role in errors, e.g. "the checkpoint topic"
   * @throws IllegalStateException naming the topic and the broker if the read takes longer than the
   *     settings' time-out (ms) or Kafka fails
   */
  static void read(KafkaSettings settings, String topic, String what,
      Predicate<ConsumerRecord<byte[], byte[]>> visitor) {
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(settings.consumer())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      long deadlineNs = System.nanoTime() + settings.timeoutMs() * 1_000_000L;
      while (consumer.position(tp) < end) {
        if (System.nanoTime() - deadlineNs > 0) {
          throw new IllegalStateException("reading " + what + " " + topic + " on Kafka at " + settings.bootstrapServers()
              + " took longer than " + settings.timeoutMs() + " ms");
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
          if (!visitor.test(r)) {
            return;
          }
        }
      }
    } catch (KafkaException e) {
      throw new IllegalStateException("cannot read " + what + " " + topic + " on Kafka at "
          + settings.bootstrapServers() + ": " + e, e);
    }
  }
}
