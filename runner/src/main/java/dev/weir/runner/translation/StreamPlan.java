package dev.weir.runner.translation;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;

/**
 * An intermediate stream between two stages: written by every task of {@link #producer()}, read
 * by every task of {@link #consumer()}, with one partition per consumer task. Immutable.
 *
 * @param id the stream's index in the plan
 * @param name a stable name, also the samza-api stream name
 * @param kind how producers pick the partition of an element
 * @param producer the writing stage
 * @param consumer the reading stage
 * @param keyCoder for {@link Kind#SHUFFLE}: the coder whose encoding routes and groups keys
 * @param elementCoder the coder of the stream's elements as Beam {@code WindowedValue}s (value,
 *     timestamp, windows, pane), for environments that carry the stream across processes; null if
 *     the translation does not know it (then only the embedded executor, which passes elements by
 *     reference, can run the stream)
 */
@Internal
public record StreamPlan(int id, String name, Kind kind, StagePlan producer, StagePlan consumer,
    Coder<?> keyCoder, Coder<?> elementCoder) {

  /** How elements are routed to partitions. */
  public enum Kind {
    /** By a hash of the encoded key, so that all values of a key meet in one task. */
    SHUFFLE("ShuffleWrite"),
    /** Producer partition p writes to consumer partition p mod n: no repartitioning. */
    FORWARD("ForwardWrite"),
    /** Every element goes to every partition (side inputs). */
    BROADCAST("BroadcastWrite");

    private final String writerKind;

    Kind(String writerKind) {
      this.writerKind = writerKind;
    }

    /** The plan-log kind of the node writing a stream of this kind, e.g. {@code ShuffleWrite}. */
    public String writerKind() {
      return writerKind;
    }
  }

  /** Number of partitions, i.e. of consumer tasks. */
  public int partitions() {
    return consumer.partitions();
  }

  /** Number of producer tasks; a partition's watermark is the minimum over all of them. */
  public int producers() {
    return producer.partitions();
  }
}
