package dev.weir.samza;

import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.samza.system.OutgoingMessageEnvelope;
import org.apache.samza.system.SystemProducer;

/**
 * The samza-api producer of Weir's Kafka system: one {@link KafkaProducer} (idempotent, acks=all,
 * so records of one partition keep their order, which Weir's watermarks and end-of-stream
 * messages rely on) sends each envelope to partition {@link OutgoingMessageEnvelope#getPartitionKey()}
 * (an {@code Integer}: Weir's writers pick partitions themselves) of the topic named by its stream,
 * with the envelope's key and message as raw bytes (after Samza's serde manager applied
 * {@link WeirMessageSerde}).
 *
 * <p>Errors: a failed send is kept and thrown by the next {@link #send} or {@link #flush} (Samza
 * then fails the container), naming the broker addresses; a send blocked longer than the system's
 * time-out (no metadata, full buffer) fails the same way.
 *
 * <p>Threading: thread-safe ({@link KafkaProducer} is).
 */
final class WeirKafkaProducer implements SystemProducer {
  private final String system;
  private final KafkaSettings settings;
  private final AtomicReference<Exception> failure = new AtomicReference<>();
  private volatile KafkaProducer<byte[], byte[]> producer;

  WeirKafkaProducer(String system, KafkaSettings settings) {
    this.system = system;
    this.settings = settings;
  }

  @Override
  public synchronized void start() {
    if (producer == null) {
      producer = new KafkaProducer<>(settings.producer());
    }
  }

  @Override
  public synchronized void stop() {
    if (producer != null) {
      producer.close(java.time.Duration.ofMillis(settings.timeoutMs()));
      producer = null;
    }
  }

  @Override
  public void register(String source) {}

  /**
   * Sends one envelope.
   *
   * @throws IllegalArgumentException if the partition key is not an {@code Integer} or the key or
   *     message not bytes
   * @throws IllegalStateException naming the broker if an earlier send failed or this one cannot be queued
   */
  @Override
  public void send(String source, OutgoingMessageEnvelope envelope) {
    rethrow();
    int partition;
    if (envelope.getPartitionKey() instanceof Integer index) {
      partition = index;
    } else if (envelope.getPartitionKey() instanceof org.apache.samza.Partition p) {
      partition = p.getPartitionId(); // samza-core's changelog trim during a restore
    } else {
      throw new IllegalArgumentException("the partition key of an envelope to " + envelope.getSystemStream()
          + " must be the partition index (an Integer or a samza-api Partition), not " + envelope.getPartitionKey());
    }
    Object message = envelope.getMessage(); // null: a delete in a store's changelog (a tombstone)
    if ((message != null && !(message instanceof byte[]))
        || (envelope.getKey() != null && !(envelope.getKey() instanceof byte[]))) {
      throw new IllegalArgumentException("system " + system + " sends bytes; the stream " + envelope.getSystemStream()
          + " needs a serde (Weir configures WeirMessageSerde)");
    }
    KafkaProducer<byte[], byte[]> p = producer;
    if (p == null) {
      throw new IllegalStateException("the " + system + " producer is not started");
    }
    try {
      p.send(new ProducerRecord<>(envelope.getSystemStream().getStream(), partition, (byte[]) envelope.getKey(),
          (byte[]) message), (metadata, exception) -> {
            if (exception != null) {
              failure.compareAndSet(null, exception);
            }
          });
    } catch (RuntimeException e) {
      throw new IllegalStateException("sending to Kafka at " + settings.bootstrapServers() + " (topic "
          + envelope.getSystemStream().getStream() + ") failed: " + e, e);
    }
  }

  /** Waits until every record sent so far is acknowledged; throws an earlier send's failure. */
  @Override
  public void flush(String source) {
    KafkaProducer<byte[], byte[]> p = producer;
    if (p != null) {
      p.flush();
    }
    rethrow();
  }

  private void rethrow() {
    Exception e = failure.get();
    if (e != null) {
      throw new IllegalStateException("sending to Kafka at " + settings.bootstrapServers() + " (system " + system
          + ") failed: " + e, e);
    }
  }
}
