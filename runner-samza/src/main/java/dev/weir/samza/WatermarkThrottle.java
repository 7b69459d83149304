package dev.weir.samza;

import dev.weir.runner.stream.ProducerWatermark;
import java.util.HashMap;
import java.util.Map;

/**
 * Coalesces the {@link ProducerWatermark}s a hosted task sends to the partitions of its output
 * topics: per (stream, partition) at most one watermark every {@code intervalNs}; a watermark that
 * comes sooner replaces the pending one of its partition and is sent at the next
 * {@link #flushDue} (the task's tick) once the interval has passed, or right before the partition's
 * end of stream ({@link #flush}). The final watermark ({@code Long.MAX_VALUE} or above Beam's max
 * timestamp) is never held.
 *
 * <p>Why: the embedded executor moves watermarks through in-process queues, but on samza-core
 * every watermark is a Kafka message that every consuming task reads through samza-core's run
 * loop. An unbounded source whose watermark follows processing time (KafkaIO's default policy)
 * advances on every poll that finds no data, i.e. hundreds of times a second; each advance went to
 * every partition of the stage's output topics. In {@code SamzaStandaloneKillIT} (6 source tasks,
 * 6 shuffle partitions) that was about 1,500 watermark messages per second per partition against
 * 2,400 elements in the whole run: the counting tasks fell further behind the topic's end the
 * longer the job ran (measured: 9,000 messages behind after 15 s), so after the last restart
 * nothing, or only part, of the last input was counted within the test's 90 s. Sending a
 * watermark later is always allowed (a consumer's input watermark is the minimum over its
 * producers' last watermarks, so it only advances later; no element becomes late because of it),
 * and only the latest matters. The same idea as Flink's periodic watermark emission
 * ({@code pipeline.auto-watermark-interval}) and Kafka Streams' stream-time punctuation.
 *
 * <p>Threading: the owning task's thread (samza-core calls a task serially).
 */
final class WatermarkThrottle {
  /** Where watermarks go once released: the task's collector. */
  @FunctionalInterface
  interface Sink {
    void send(String stream, int partition, ProducerWatermark watermark);
  }

  /** One output partition's last send time and the watermark held back, if any. */
  private static final class Slot {
    long lastSentNs;
    boolean sentOnce;
    ProducerWatermark pending;
  }

  private final long intervalNs;
  private final Sink sink;
  /** Output streams by name; each with one slot per partition, created on first use. */
  private final Map<String, Slot[]> slots = new HashMap<>();
  private int pendingCount;

  /**
   * @param intervalMs the least time between two watermarks sent to one partition, ms (0: no throttling)
   * @param sink where released watermarks go
   */
  WatermarkThrottle(long intervalMs, Sink sink) {
    if (intervalMs < 0) {
      throw new IllegalArgumentException("watermark interval must be >= 0 ms, was " + intervalMs);
    }
    this.intervalNs = intervalMs * 1_000_000L;
    this.sink = sink;
  }

  /**
   * A watermark the task sends to {@code partition} of stream {@code stream} (its Weir name) at
   * {@code nowNs} ({@link System#nanoTime}): sent now or held.
   */
  void offer(String stream, int partition, ProducerWatermark watermark, long nowNs) {
    Slot slot = slot(stream, partition);
    boolean last = watermark.getTimestamp() >= BEAM_MAX_MS;
    if (last || !slot.sentOnce || nowNs - slot.lastSentNs >= intervalNs) {
      if (slot.pending != null) {
        slot.pending = null;
        pendingCount--;
      }
      release(stream, partition, slot, watermark, nowNs);
    } else {
      if (slot.pending == null) {
        pendingCount++;
      }
      slot.pending = watermark;
    }
  }

  /** Sends every held watermark whose partition's interval has passed at {@code nowNs} (the tick). */
  void flushDue(long nowNs) {
    if (pendingCount == 0) {
      return;
    }
    for (Map.Entry<String, Slot[]> e : slots.entrySet()) {
      String stream = e.getKey();
      Slot[] partitions = e.getValue();
      for (int p = 0; p < partitions.length; p++) {
        Slot slot = partitions[p];
        if (slot != null && slot.pending != null && nowNs - slot.lastSentNs >= intervalNs) {
          ProducerWatermark watermark = slot.pending;
          slot.pending = null;
          pendingCount--;
          release(stream, p, slot, watermark, nowNs);
        }
      }
    }
  }

  /** Sends the watermark held for {@code partition} of {@code stream}, if any (before its end of stream). */
  void flush(String stream, int partition, long nowNs) {
    Slot slot = slot(stream, partition);
    if (slot.pending != null) {
      ProducerWatermark watermark = slot.pending;
      slot.pending = null;
      pendingCount--;
      release(stream, partition, slot, watermark, nowNs);
    }
  }

  /** Watermarks held back now (for tests and monitoring). */
  int pending() {
    return pendingCount;
  }

  private void release(String stream, int partition, Slot slot, ProducerWatermark watermark, long nowNs) {
    slot.lastSentNs = nowNs;
    slot.sentOnce = true;
    sink.send(stream, partition, watermark);
  }

  private Slot slot(String stream, int partition) {
    Slot[] partitions = slots.get(stream);
    if (partitions == null || partition >= partitions.length) {
      partitions = partitions == null ? new Slot[partition + 1] : java.util.Arrays.copyOf(partitions, partition + 1);
      slots.put(stream, partitions);
    }
    Slot slot = partitions[partition];
    if (slot == null) {
      slot = new Slot();
      partitions[partition] = slot;
    }
    return slot;
  }

  /** Beam's max timestamp, ms: a watermark at or above it is the final one. */
  private static final long BEAM_MAX_MS =
      org.apache.beam.sdk.transforms.windowing.BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis();
}
