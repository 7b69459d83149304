package dev.weir.samza;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.samza.Partition;
import org.apache.samza.system.IncomingMessageEnvelope;
import org.apache.samza.system.SystemStreamPartition;
import org.apache.samza.util.BlockingEnvelopeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The samza-api consumer of Weir's Kafka system: the partitions Samza registers are assigned to one
 * {@link KafkaConsumer} (no consumer group: Samza decides who reads what), each from the offset
 * Samza gives (the oldest, for a new job), and read by one fetch thread into samza-api's
 * {@link BlockingEnvelopeMap}, whose queues Samza's run loop polls. Records arrive as raw bytes
 * (key: a shuffle's encoded key or null; message: {@link WeirMessageSerde}'s bytes, which Samza's
 * serde manager decodes; null for a store changelog's tombstone).
 *
 * <p>Head: after every fetch a partition whose lag (from the fetch response) is 0 is marked at
 * its head ({@code setIsAtHead}), so that samza-core's blocking reads up to the head (restoring a
 * store from its changelog, which may be empty) end instead of waiting for more records.
 *
 * <p>Back-pressure: a partition whose queue holds more than {@value #PAUSE_AT} envelopes is paused
 * until it falls below {@value #RESUME_AT}. A fetch failure stops the fetch thread and fails the
 * next poll (and with it the job), naming the addresses; so does a broker that stays unreachable
 * (no open connection, nothing fetched) for the system's time-out, which Kafka's consumer alone
 * would retry forever.
 *
 * <p>Threading: {@link #register} and {@link #start} on Samza's thread before polling; the
 * {@link KafkaConsumer} is used only by the fetch thread; {@link #stop} wakes and joins it.
 */
final class WeirKafkaConsumer extends BlockingEnvelopeMap {
  private static final Logger LOG = LoggerFactory.getLogger(WeirKafkaConsumer.class);
  static final int PAUSE_AT = 10_000;
  static final int RESUME_AT = 2_000;

  private final String system;
  private final KafkaSettings settings;
  private final Map<TopicPartition, Long> startOffsets = new HashMap<>();
  private final Map<TopicPartition, SystemStreamPartition> ssps = new HashMap<>();
  private volatile boolean running;
  private volatile KafkaConsumer<byte[], byte[]> consumer;
  private Thread fetcher;

  WeirKafkaConsumer(String system, KafkaSettings settings) {
    this.system = system;
    this.settings = settings;
  }

  /** Registers a partition to read from {@code offset} (a Kafka offset; null: the oldest). */
  @Override
  public void register(SystemStreamPartition ssp, String offset) {
    super.register(ssp, offset);
    TopicPartition tp = new TopicPartition(ssp.getStream(), ssp.getPartition().getPartitionId());
    ssps.put(tp, new SystemStreamPartition(ssp.getSystem(), ssp.getStream(), new Partition(tp.partition())));
    startOffsets.put(tp, offset == null || offset.isEmpty() ? null : Long.parseLong(offset));
  }

  @Override
  public void start() {
    if (ssps.isEmpty()) {
      return;
    }
    running = true;
    fetcher = new Thread(this::fetch, "weir-kafka-fetch-" + system);
    fetcher.setDaemon(true);
    fetcher.start();
  }

  @Override
  public void stop() {
    running = false;
    KafkaConsumer<byte[], byte[]> c = consumer;
    if (c != null) {
      c.wakeup();
    }
    if (fetcher != null) {
      try {
        fetcher.join(10_000L);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The consumer's open broker connections (Kafka's {@code consumer-metrics/connection-count}). */
  private static double connections(KafkaConsumer<byte[], byte[]> consumer) {
    for (var e : consumer.metrics().entrySet()) {
      if (e.getKey().name().equals("connection-count") && e.getKey().group().equals("consumer-metrics")
          && e.getValue().metricValue() instanceof Double count) {
        return count;
      }
    }
    return 1; // no such metric: assume connected rather than fail a healthy job
  }

  private void fetch() {
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(settings.consumer())) {
      consumer = c;
      c.assign(ssps.keySet());
      List<TopicPartition> fromStart = new ArrayList<>();
      startOffsets.forEach((tp, offset) -> {
        if (offset == null) {
          fromStart.add(tp);
        } else {
          c.seek(tp, offset);
        }
      });
      if (!fromStart.isEmpty()) {
        c.seekToBeginning(fromStart);
      }
      Set<TopicPartition> paused = new HashSet<>();
      long connectedNs = System.nanoTime();
      while (running) {
        ConsumerRecords<byte[], byte[]> records = c.poll(Duration.ofMillis(100));
        long nowNs = System.nanoTime();
        if (!records.isEmpty() || connections(c) > 0) {
          connectedNs = nowNs;
        } else if (nowNs - connectedNs > settings.timeoutMs() * 1_000_000L) {
          throw new IllegalStateException("no connection to Kafka at " + settings.bootstrapServers() + " for "
              + settings.timeoutMs() + " ms (" + KafkaSettings.TIMEOUT_MS + "); is the broker reachable?");
        }
        for (TopicPartition tp : records.partitions()) {
          SystemStreamPartition ssp = ssps.get(tp);
          List<ConsumerRecord<byte[], byte[]>> batch = records.records(tp);
          List<IncomingMessageEnvelope> envelopes = new ArrayList<>(batch.size());
          for (ConsumerRecord<byte[], byte[]> r : batch) {
            int size = (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
            envelopes.add(new IncomingMessageEnvelope(ssp, Long.toString(r.offset()), r.key(), r.value(), size));
          }
          putAll(ssp, envelopes);
        }
        for (Map.Entry<TopicPartition, SystemStreamPartition> e : ssps.entrySet()) {
          // at the head: samza-core's blocking reads (a store's changelog restore) end there
          java.util.OptionalLong lag = c.currentLag(e.getKey());
          setIsAtHead(e.getValue(), lag.isPresent() && lag.getAsLong() == 0);
          int queued = getNumMessagesInQueue(e.getValue());
          if (queued > PAUSE_AT && paused.add(e.getKey())) {
            c.pause(List.of(e.getKey()));
          } else if (queued < RESUME_AT && paused.remove(e.getKey())) {
            c.resume(List.of(e.getKey()));
          }
        }
      }
    } catch (WakeupException e) {
      // stop() woke the consumer
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Throwable t) {
      if (running) {
        LOG.error("Reading Kafka at {} (system {}) failed", settings.bootstrapServers(), system, t);
        setFailureCause(new IllegalStateException("reading Kafka at " + settings.bootstrapServers() + " (system "
            + system + ") failed: " + t, t));
      }
    } finally {
      consumer = null;
    }
  }
}
