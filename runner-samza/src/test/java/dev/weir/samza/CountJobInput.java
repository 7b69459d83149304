// Role: the input of the multi-process count job's ITs (SamzaStandaloneKillIT,
// SamzaZooKeeperTakeoverIT): phases of records written to a 6-partition Kafka topic, and the
// per-key counts they must end in.
// Threading: write runs on the caller's thread; writeSlowly writes from a thread of its own and
// updates the expected counts on the caller's thread before it starts.
package dev.weir.samza;

import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/** Phases of {@value #PER_PHASE} records each: record i goes to partition i mod 6 with key k(i mod 20). */
final class CountJobInput {
  static final int PARTITIONS = 6;
  static final int KEYS = 20;
  static final int PER_PHASE = 600;
  /** {@link #writeSlowly} writes a phase in this many chunks... */
  static final int SLOW_CHUNKS = 20;
  /** ...this many ms apart, so that a process can be killed while input flows. */
  static final long SLOW_CHUNK_PAUSE_MS = 150;

  private CountJobInput() {}

  static KafkaProducer<String, String> producer(String bootstrap) {
    return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new StringSerializer());
  }

  /** Writes phase {@code phase}'s records and flushes; adds them to {@code expected}. */
  static void write(KafkaProducer<String, String> producer, String topic, int phase,
      Map<String, Long> expected) {
    for (int i = phase * PER_PHASE; i < (phase + 1) * PER_PHASE; i++) {
      String key = "k" + (i % KEYS);
      producer.send(new ProducerRecord<>(topic, i % PARTITIONS, key, "v" + i));
      expected.merge(key, 1L, Long::sum);
    }
    producer.flush();
  }

  /**
   * Writes phase {@code phase}'s records as {@link #write} does, but in {@value #SLOW_CHUNKS} chunks
   * {@value #SLOW_CHUNK_PAUSE_MS} ms apart, on a new thread named {@code threadName}; {@code
   * expected} is updated at once.
   */
  static Thread writeSlowly(KafkaProducer<String, String> producer, String topic, int phase,
      Map<String, Long> expected, String threadName) {
    for (int i = phase * PER_PHASE; i < (phase + 1) * PER_PHASE; i++) {
      expected.merge("k" + (i % KEYS), 1L, Long::sum);
    }
    Thread writer = new Thread(() -> {
      int chunk = PER_PHASE / SLOW_CHUNKS;
      try {
        for (int c = 0; c < SLOW_CHUNKS; c++) {
          for (int i = phase * PER_PHASE + c * chunk; i < phase * PER_PHASE + (c + 1) * chunk; i++) {
            producer.send(new ProducerRecord<>(topic, i % PARTITIONS, "k" + (i % KEYS), "v" + i));
          }
          producer.flush();
          Thread.sleep(SLOW_CHUNK_PAUSE_MS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, threadName);
    writer.start();
    return writer;
  }
}
