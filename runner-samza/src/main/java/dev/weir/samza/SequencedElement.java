package dev.weir.samza;

import java.util.Objects;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * An element on a Weir intermediate topic with its producer's sequence number: the
 * {@code sequence}-th element (from 1) that producer task {@code producer} (its partition index
 * in its stage) sent to this topic partition since the job instance started, counted across its
 * restarts (the count is checkpointed with the producer's state, {@link MessageSequences}). The
 * consuming task drops an element whose sequence is not above the highest it has taken from that
 * producer: a replay after the producer restarted from its last checkpoint. What
 * {@link WeirMessageSerde} decodes an element of kind {@value WeirMessageSerde#SEQUENCED_ELEMENT}
 * to, and what the hosted task's output wraps an element in before samza-core's collector.
 *
 * @param producer the producing task's partition index in its stage (0 .. producers - 1)
 * @param sequence the element's number, from 1
 * @param element the Beam element
 */
public record SequencedElement(int producer, long sequence, WindowedValue<?> element) {
  /**
   * @throws IllegalArgumentException if {@code producer} is negative or {@code sequence} is below 1
   */
  public SequencedElement {
    if (producer < 0 || sequence < 1) {
      throw new IllegalArgumentException("a sequenced element needs producer >= 0 and sequence >= 1, was producer "
          + producer + ", sequence " + sequence);
    }
    Objects.requireNonNull(element, "element");
  }
}
