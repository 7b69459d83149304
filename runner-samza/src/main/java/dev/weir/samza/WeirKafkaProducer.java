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
 * <p>Exactly-once ({@link KafkaSettings#exactlyOnce()}): a task's records (source
 * {@value #TASK_SOURCE_PREFIX}{@code <task>}, samza-core's name for the task's collector, which
 * also sends its store's changelog writes) go through the task's {@link TaskTransaction} instead,
 * acquired at {@link #start} and released at {@link #stop}; other sources (samza-core's coordinator
 * stream writes) use the plain producer.
 *
 * <p>Errors: a failed send is kept and thrown by the next {@link #send} or {@link #flush} (Samza
 * then fails the container), naming the broker addresses; a send blocked longer than the system's
 * time-out (no metadata, full buffer) fails the same way.
 *
 * <p>Threading: thread-safe ({@link KafkaProducer} is).
 */
final class WeirKafkaProducer implements SystemProducer {
  /** samza-core's source name of a task's collector: this prefix and the task name. */
  static final String TASK_SOURCE_PREFIX = "TaskName-";

  private final String system;
  private final KafkaSettings settings;
  /** Exactly-once: the registered task sources; their transactions once started. */
  private final java.util.Set<String> taskSources = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final java.util.Map<String, TaskTransaction> transactions = new java.util.concurrent.ConcurrentHashMap<>();
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
    for (String source : taskSources) {
      transactions.computeIfAbsent(source,
          s -> TaskTransactions.acquire(settings, s.substring(TASK_SOURCE_PREFIX.length()), false));
    }
  }

  @Override
  public synchronized void stop() {
    transactions.values().forEach(TaskTransactions::release);
    transactions.clear();
    if (producer != null) {
      producer.close(java.time.Duration.ofMillis(settings.timeoutMs()));
      producer = null;
    }
  }

  /** With exactly-once, remembers a task's source ({@value #TASK_SOURCE_PREFIX}{@code <task>}) to open its transaction at start. */
  @Override
  public void register(String source) {
    if (settings.exactlyOnce() && source.startsWith(TASK_SOURCE_PREFIX)) {
      taskSources.add(source);
    }
  }

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
    ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(envelope.getSystemStream().getStream(), partition,
        (byte[]) envelope.getKey(), (byte[]) message);
    TaskTransaction transaction = transactions.get(source);
    if (transaction != null) {
      transaction.send(record);
      return;
    }
    try {
      p.send(record, (metadata, exception) -> {
            if (exception != null) {
              failure.compareAndSet(null, exception);
            }
          });
    } catch (RuntimeException e) {
      throw new IllegalStateException("sending to Kafka at " + settings.bootstrapServers() + " (topic "
          + envelope.getSystemStream().getStream() + ") failed: " + e, e);
    }
  }

  /**
   * Waits until every record sent so far is acknowledged; throws an earlier send's failure. A task
   * source's flush is its transaction's ({@link TaskTransaction#flush}: it may seal it for a commit).
   */
  @Override
  public void flush(String source) {
    TaskTransaction transaction = transactions.get(source);
    if (transaction != null) {
      transaction.flush();
      return;
    }
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
