package dev.weir.runner.stream;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.samza.system.WatermarkMessage;

/**
 * A samza-api watermark message that also carries the producer task's index within its stage, so
 * that a consumer partition can keep one watermark per producer without a name lookup, and whether
 * the producer's watermark moved because the job is draining (Beam's drain: sources stop and
 * watermarks go to the end of time; the timers that then fire are caused by the drain, which Beam
 * 2.73 tells a DoFn). The drain cause travels with the watermark it caused, not beside it, so no
 * consumer fires a drain's timers before it knows why. Immutable.
 */
@Internal
public final class ProducerWatermark extends WatermarkMessage {
  private final int producer;
  private final boolean drained;

  /**
   * @param timestampMs the watermark, epoch milliseconds
   * @param producer the producing task's partition index
   * @param producerTaskName the producing task's name (samza-api's identification)
   */
  public ProducerWatermark(long timestampMs, int producer, String producerTaskName) {
    this(timestampMs, producer, producerTaskName, false);
  }

  /**
   * @param timestampMs the watermark, epoch milliseconds
   * @param producer the producing task's partition index
   * @param producerTaskName the producing task's name (samza-api's identification)
   * @param drained whether the watermark moved because the job is draining
   */
  public ProducerWatermark(long timestampMs, int producer, String producerTaskName, boolean drained) {
    super(timestampMs, producerTaskName);
    this.producer = producer;
    this.drained = drained;
  }

  /** Whether the watermark moved because the job is draining (see the class comment). */
  public boolean drained() {
    return drained;
  }

  /** The producing task's partition index. */
  public int producer() {
    return producer;
  }
}
