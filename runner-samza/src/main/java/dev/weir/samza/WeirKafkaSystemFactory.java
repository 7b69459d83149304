package dev.weir.samza;

import org.apache.samza.config.Config;
import org.apache.samza.metrics.MetricsRegistry;
import org.apache.samza.system.SystemAdmin;
import org.apache.samza.system.SystemConsumer;
import org.apache.samza.system.SystemFactory;
import org.apache.samza.system.SystemProducer;

/**
 * samza-api {@link SystemFactory} of Weir's Kafka system ({@value SamzaJobConfig#KAFKA_SYSTEM}):
 * a Weir job's intermediate streams (shuffles, forwards, side-input broadcasts) as Kafka topics,
 * one topic partition per stream partition, messages in {@link WeirMessageSerde}'s encoding with
 * a shuffle's encoded key as the record key. Written on Kafka's own client (not samza-kafka, which
 * is built on Kafka 2.4's client and Scala) so that every client call has a bounded time-out and an
 * unreachable broker fails naming its address ({@link KafkaSettings}).
 *
 * <p>Threading: the factory is stateless; see the admin, consumer and producer.
 */
public final class WeirKafkaSystemFactory implements SystemFactory {

  /** The consumer of the system's topics (partitions assigned by Samza, no consumer group). */
  @Override
  public SystemConsumer getConsumer(String systemName, Config config, MetricsRegistry registry) {
    return new WeirKafkaConsumer(systemName, KafkaSettings.of(systemName, config));
  }

  /** The producer writing to the partition each envelope names ({@code Integer} partition key). */
  @Override
  public SystemProducer getProducer(String systemName, Config config, MetricsRegistry registry) {
    return new WeirKafkaProducer(systemName, KafkaSettings.of(systemName, config));
  }

  /** The admin: topic metadata and offsets, topic creation. */
  @Override
  public SystemAdmin getAdmin(String systemName, Config config) {
    return new WeirKafkaAdmin(systemName, KafkaSettings.of(systemName, config));
  }
}
