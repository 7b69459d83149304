package dev.weir.runner.stream;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.samza.system.EndOfStreamMessage;

/**
 * A samza-api end-of-stream message carrying the producer task's index within its stage. A
 * consumer partition ends when every producer has sent one. Immutable.
 */
@Internal
public final class ProducerEndOfStream extends EndOfStreamMessage {
  private final int producer;

  /**
   * @param producer the producing task's partition index
   * @param producerTaskName the producing task's name
   */
  public ProducerEndOfStream(int producer, String producerTaskName) {
    super(producerTaskName);
    this.producer = producer;
  }

  /** The producing task's partition index. */
  public int producer() {
    return producer;
  }
}
