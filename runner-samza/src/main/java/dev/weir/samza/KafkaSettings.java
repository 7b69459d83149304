package dev.weir.samza;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.samza.config.Config;

/**
 * How Weir's Kafka system ({@link WeirKafkaSystemFactory}) reaches its broker, read from the
 * system's config ({@code systems.<system>.}), which {@link SamzaJobConfig} generates from the
 * user's {@code weir.kafka.*} keys: {@value #BOOTSTRAP_SERVERS}, {@value #TIMEOUT_MS} (how long an
 * admin call, a metadata fetch or a blocked send may take before the job fails naming the
 * address, default {@value #DEFAULT_TIMEOUT_MS}) and any Kafka client setting under
 * {@value #CLIENT_PREFIX}.
 *
 * <p>Threading: immutable.
 *
 * @param bootstrapServers Kafka's {@code bootstrap.servers}
 * @param timeoutMs milliseconds an admin call, a metadata fetch or a blocked send may take
 * @param client extra Kafka client settings, applied to admin, producer and consumer
 * @param transactionalIdPrefix with {@code weir.processing.guarantee=exactly_once}, the first part
 *     of every task's {@code transactional.id} ({@link TaskTransactions}; consumers then read
 *     committed records only); null for at-least-once
 */
record KafkaSettings(String bootstrapServers, long timeoutMs, Map<String, String> client,
    String transactionalIdPrefix) {
  /** Key (under the system) of the broker addresses. */
  static final String BOOTSTRAP_SERVERS = "bootstrap.servers";
  /** Key (under the system) of the client time-out, ms. */
  static final String TIMEOUT_MS = "timeout.ms";
  /** Prefix (under the system) of extra Kafka client settings. */
  static final String CLIENT_PREFIX = "client.";
  /**
   * Largest record Weir's topics take, bytes (64 MiB; Kafka's default is 1 MB): a shuffled element
   * carries its key twice (record key, and inside the value). Set as the producer's
   * {@code max.request.size} and the topics' {@code max.message.bytes}; a broker still refuses
   * requests above its {@code socket.request.max.bytes} (100 MB by default).
   */
  static final int MAX_MESSAGE_BYTES = 64 << 20;
  /**
   * Key (under the system) of the transactional id prefix, written by {@link SamzaJobConfig} with
   * {@code weir.processing.guarantee=exactly_once}.
   */
  static final String TRANSACTIONAL_ID_PREFIX = "transactional.id.prefix";
  /** Default client time-out: well inside the 60 s a user waits for an unreachable broker. */
  static final long DEFAULT_TIMEOUT_MS = 30_000L;

  /**
   * The settings of system {@code system} in {@code config}.
   *
   * @throws IllegalArgumentException naming the key if the broker addresses are missing or the
   *     time-out is not a positive number
   */
  static KafkaSettings of(String system, Config config) {
    String prefix = "systems." + system + ".";
    String servers = config.get(prefix + BOOTSTRAP_SERVERS);
    if (servers == null || servers.isBlank()) {
      throw new IllegalArgumentException("the config has no " + prefix + BOOTSTRAP_SERVERS + " (Weir writes it from "
          + SamzaJobConfig.USER_BOOTSTRAP_SERVERS + ")");
    }
    String timeout = config.get(prefix + TIMEOUT_MS, Long.toString(DEFAULT_TIMEOUT_MS));
    long timeoutMs;
    try {
      timeoutMs = Long.parseLong(timeout.trim());
    } catch (NumberFormatException e) {
      timeoutMs = -1;
    }
    if (timeoutMs < 1) {
      throw new IllegalArgumentException(prefix + TIMEOUT_MS + "=" + timeout + " is out of range; allowed: 1 to "
          + Long.MAX_VALUE + " (milliseconds)");
    }
    Map<String, String> client = new HashMap<>(config.subset(prefix + CLIENT_PREFIX, true));
    String transactional = config.get(prefix + TRANSACTIONAL_ID_PREFIX);
    return new KafkaSettings(servers.trim(), timeoutMs, Map.copyOf(client),
        transactional == null || transactional.isBlank() ? null : transactional.trim());
  }

  /** Whether the job runs exactly-once: tasks send in Kafka transactions, consumers read committed records. */
  boolean exactlyOnce() {
    return transactionalIdPrefix != null;
  }

  /** Admin client properties: the addresses, the time-outs, then the user's client settings. */
  Properties admin() {
    Properties p = common();
    p.putAll(client);
    return p;
  }

  /** Producer properties: byte arrays, acks=all, idempotent, the time-outs, then the user's settings. */
  Properties producer() {
    Properties p = common();
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true"); // no reordering or duplicates on retry
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(MAX_MESSAGE_BYTES));
    p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(2L * MAX_MESSAGE_BYTES));
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(timeoutMs));
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(Math.max(timeoutMs, 1_000L) + 5_000L));
    p.putAll(client);
    return p;
  }

  /**
   * Consumer properties: byte arrays, no group (partitions are assigned), the time-outs,
   * {@code read_uncommitted}, then the user's settings; {@code read_committed} if {@link #exactlyOnce()}.
   */
  Properties consumer() {
    Properties p = common();
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
    p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
    p.putAll(client);
    if (exactlyOnce()) {
      p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"); // not the user's to weaken
    }
    return p;
  }

  private Properties common() {
    Properties p = new Properties();
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    int requestTimeoutMs = (int) Math.min(Integer.MAX_VALUE, timeoutMs);
    p.put(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(requestTimeoutMs));
    p.put(CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG, Integer.toString(requestTimeoutMs));
    p.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "100");
    p.put(CommonClientConfigs.CLIENT_DNS_LOOKUP_CONFIG, "use_all_dns_ips");
    return p;
  }
}
