package dev.weir.samza;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;

/**
 * One Samza task's Kafka transactions, for {@code weir.processing.guarantee=exactly_once}: every
 * record the task sends (elements and watermarks to intermediate topics, its store's changelog
 * writes) and, last, its checkpoint record (input offsets and changelog offset, on the job's
 * checkpoint topic) go through one transactional producer ({@code transactional.id} = the job's
 * prefix and the task name), and the transaction commits right after the checkpoint record. What a
 * task sent becomes visible to {@code read_committed} readers (the next stages, a changelog
 * restore, the checkpoint reader) together with the checkpoint that covers it, or never. This is
 * Kafka Streams' first exactly-once design (KIP-98/KIP-129: a producer per task, the consumed
 * offsets committed in the producer's transaction); the checkpoint record plays the part of
 * {@code sendOffsetsToTransaction}, since Samza keeps input offsets in its checkpoint, not in a
 * consumer group.
 *
 * <p>Fencing: {@link TaskTransactions#acquire} calls {@code initTransactions()}, which aborts any
 * transaction a previous owner of the task left open (a killed process) and fences that owner: a
 * zombie's next send or commit fails, so its container fails instead of writing beside the new
 * owner. Weir's checkpoint manager acquires its tasks' transactions when it starts, before it reads
 * checkpoints and before samza-core restores stores, so neither reads past a dead owner's open
 * transaction.
 *
 * <p>The cut. samza-core 1.8 commits in two stages: a synchronous one on the task's run-loop turn
 * (last processed input offsets, {@code collector.flush}, store snapshot with the changelog's newest
 * offset), then an asynchronous one on its commit thread pool that writes the checkpoint while the
 * task already processes the next envelopes. Records of those envelopes must not join the
 * transaction the checkpoint commits. So the task announces its commit ({@link #requestCommit}, just
 * before it asks samza-core for one), the first {@link #flush} after that (the synchronous stage's)
 * seals the transaction, and records sent while it is sealed wait in memory until
 * {@link #commit} has committed it, then open the next transaction. A commit nobody announced (a
 * task's last one before it shuts down) seals at its start. At most {@value #MAX_PENDING_BYTES}
 * bytes wait; a task that sends more blocks until the commit ends (at most the Kafka time-out).
 *
 * <p>Threading: {@link #send}, {@link #flush} and {@link #requestCommit} on the task's thread;
 * {@link #commit} on samza-core's commit thread; the methods synchronize on this object, except
 * that the commit waits for Kafka without the lock (the task meanwhile only adds to the pending
 * records).
 */
final class TaskTransaction {
  /** Most bytes (keys and values) of records held while a transaction is sealed: 64 MiB. */
  static final long MAX_PENDING_BYTES = 64L << 20;

  private final String transactionalId;
  private final KafkaSettings settings;
  private final KafkaProducer<byte[], byte[]> producer;
  private final AtomicReference<Exception> failure = new AtomicReference<>();
  /** Guarded by this: a transaction is open (begun, not committed). */
  private boolean inTransaction;
  /** The task announced a commit; the next flush seals. Written by the task thread only. */
  private volatile boolean commitRequested;
  /** Guarded by this: the open transaction waits for its checkpoint; sends go to {@link #pending}. */
  private boolean sealed;
  /** Guarded by this: records sent while sealed, in order. */
  private final List<ProducerRecord<byte[], byte[]>> pending = new ArrayList<>();
  private long pendingBytes;
  /** Guarded by this: the last checkpoint value committed per checkpoint key (an unchanged one is not written again). */
  private final Map<String, byte[]> lastCheckpoint = new HashMap<>();
  /** Guarded by {@link TaskTransactions}: how many holders (the producer, the checkpoint manager) use it. */
  int references;

  /**
   * Creates the producer and initializes its transactions, fencing any earlier owner of the id.
   *
   * @throws IllegalStateException naming the transactional id and the broker if Kafka refuses or
   *     does not answer within the settings' time-out
   */
  TaskTransaction(String transactionalId, KafkaSettings settings) {
    this.transactionalId = transactionalId;
    this.settings = settings;
    java.util.Properties props = settings.producer();
    props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(props);
    try {
      p.initTransactions();
    } catch (KafkaException e) {
      p.close(Duration.ZERO);
      throw new IllegalStateException("cannot initialize the Kafka transactions of " + transactionalId + " on Kafka at "
          + settings.bootstrapServers() + ": " + e, e);
    }
    this.producer = p;
  }

  /** The producer's {@code transactional.id}. */
  String transactionalId() {
    return transactionalId;
  }

  /**
   * Sends one record in the task's open transaction (beginning one if none is open), or holds it
   * while the transaction is sealed.
   *
   * @throws IllegalStateException naming the task and the broker if an earlier send failed, the
   *     producer was fenced, or the held records stay above the bound for longer than the time-out
   */
  synchronized void send(ProducerRecord<byte[], byte[]> record) {
    rethrow();
    if (sealed) {
      long deadlineNs = System.nanoTime() + settings.timeoutMs() * 1_000_000L;
      while (sealed && pendingBytes >= MAX_PENDING_BYTES) {
        long leftMs = (deadlineNs - System.nanoTime()) / 1_000_000L;
        if (leftMs <= 0) {
          throw new IllegalStateException(transactionalId + ": the checkpoint commit on Kafka at "
              + settings.bootstrapServers() + " took longer than " + settings.timeoutMs() + " ms while "
              + pendingBytes + " bytes waited for the next transaction");
        }
        try {
          wait(leftMs);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(transactionalId + ": interrupted while waiting for a commit", e);
        }
      }
      if (sealed) {
        pending.add(record);
        pendingBytes += size(record);
        return;
      }
    }
    sendNow(record);
  }

  /** The task is about to ask samza-core for a commit: the next {@link #flush} seals the transaction. */
  void requestCommit() {
    commitRequested = true;
  }

  /**
   * Waits until every record sent so far reached the broker (still uncommitted); the first flush after
   * {@link #requestCommit} seals the transaction.
   *
   * @throws IllegalStateException naming the task and the broker if a send failed
   */
  void flush() {
    synchronized (this) {
      if (commitRequested) {
        commitRequested = false;
        sealed = true;
      }
    }
    try {
      producer.flush();
    } catch (KafkaException e) {
      throw failed("flushing", e);
    }
    rethrow();
  }

  /**
   * Sends the checkpoint record {@code value} under {@code key} to {@code topic} in the open
   * transaction and commits it (a commit with nothing sent since the last one and an unchanged
   * checkpoint writes nothing); then the records held while sealed open the next transaction.
   * Blocks until Kafka committed.
   *
   * @throws IllegalStateException naming the task and the broker if the commit fails (the producer
   *     was fenced by a newer owner of the task, the broker is unreachable for the time-out): the
   *     transaction is then aborted by Kafka and the checkpoint did not happen
   */
  void commit(String topic, byte[] key, byte[] value) {
    String checkpointKey = topic + "/" + new String(key, java.nio.charset.StandardCharsets.UTF_8);
    synchronized (this) {
      rethrow();
      sealed = true; // a commit nobody announced seals here: nothing the task sends from now on joins it
      if (!inTransaction && Arrays.equals(value, lastCheckpoint.get(checkpointKey))) {
        unseal();
        return;
      }
      sendNow(new ProducerRecord<>(topic, 0, key, value));
    }
    try {
      producer.commitTransaction();
    } catch (KafkaException e) {
      throw failed("committing the transaction with the checkpoint", e);
    }
    synchronized (this) {
      inTransaction = false;
      lastCheckpoint.put(checkpointKey, value);
      unseal();
    }
  }

  /** Whether records were sent that no commit covered yet (an open or sealed transaction, or held records). */
  synchronized boolean hasUncommitted() {
    return inTransaction || sealed || !pending.isEmpty();
  }

  /** Closes the producer; an open transaction is aborted by the broker or by the next owner's fencing. */
  void close() {
    producer.close(Duration.ofMillis(settings.timeoutMs()));
  }

  private void unseal() {
    sealed = false;
    for (ProducerRecord<byte[], byte[]> r : pending) {
      sendNow(r);
    }
    pending.clear();
    pendingBytes = 0;
    notifyAll();
  }

  private void sendNow(ProducerRecord<byte[], byte[]> record) {
    try {
      if (!inTransaction) {
        producer.beginTransaction();
        inTransaction = true;
      }
      producer.send(record, (metadata, exception) -> {
        if (exception != null) {
          failure.compareAndSet(null, exception);
        }
      });
    } catch (KafkaException | IllegalStateException e) {
      throw failed("sending to topic " + record.topic(), e);
    }
  }

  private void rethrow() {
    Exception e = failure.get();
    if (e != null) {
      throw failed("sending", e);
    }
  }

  private IllegalStateException failed(String what, Exception e) {
    return new IllegalStateException(transactionalId + ": " + what + " on Kafka at " + settings.bootstrapServers()
        + " failed: " + e, e);
  }

  private static long size(ProducerRecord<byte[], byte[]> r) {
    return (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
  }
}
