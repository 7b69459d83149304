package dev.weir.runner.stream;

import org.apache.beam.sdk.annotations.Internal;


import org.apache.samza.system.SystemStreamPartition;

/**
 * One input partition of a task, polled by the task's container: a partition of an in-process
 * stream, or a source split. Delivers messages in order: elements (a Beam {@code WindowedValue},
 * or a {@link KeyedElement} from a shuffle), {@link ProducerWatermark}s and
 * {@link ProducerEndOfStream}s. A message is returned as it is, not in a samza-api envelope: the
 * container knows which partition it polled (see {@link KeyedElement} for why).
 *
 * <p>Threading: {@link #poll()} is called only by the consuming container's thread.
 */
@Internal
public interface InputPartition {

  /** The samza-api identity of the partition, for hosts that wrap its messages in envelopes. */
  SystemStreamPartition ssp();

  /** Number of producers whose watermarks and end-of-stream this partition carries. */
  int producers();

  /** The next message, or null if none is available now. Never blocks. */
  Object poll();

  /** Releases resources on the consuming container's thread. Must not throw. */
  default void close() {}
}
