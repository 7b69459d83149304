package dev.weir.runner.stream;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.samza.system.WatermarkMessage;

/**
 * A samza-api watermark message that also carries the producer task's index within its stage, so
 * that a consumer partition can keep one watermark per producer without a name lookup. Immutable.
 */
@Internal
public final class ProducerWatermark extends WatermarkMessage {
  private final int producer;

  /**
   * @param timestampMs the watermark, epoch milliseconds
   * @param producer the producing task's partition index
   * @param producerTaskName the producing task's name (samza-api's identification)
   */
  public ProducerWatermark(long timestampMs, int producer, String producerTaskName) {
    super(timestampMs, producerTaskName);
    this.producer = producer;
  }

  /** The producing task's partition index. */
  public int producer() {
    return producer;
  }
}
