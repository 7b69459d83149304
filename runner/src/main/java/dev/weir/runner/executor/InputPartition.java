package dev.weir.runner.executor;

import org.apache.samza.system.IncomingMessageEnvelope;
import org.apache.samza.system.SystemStreamPartition;

/**
 * One input partition of a task, polled by the task's container: a partition of an in-process
 * stream, or a source split. Delivers elements, {@link ProducerWatermark}s and
 * {@link ProducerEndOfStream}s in order.
 *
 * <p>Threading: {@link #poll()} is called only by the consuming container's thread.
 */
interface InputPartition {

  /** The samza-api identity of the partition; every envelope it returns carries this instance. */
  SystemStreamPartition ssp();

  /** Number of producers whose watermarks and end-of-stream this partition carries. */
  int producers();

  /** The next envelope, or null if none is available now. Never blocks. */
  IncomingMessageEnvelope poll();

  /** Prepares the partition on the consuming container's thread (e.g. opens a reader). */
  default void open(SourceContext context) {}

  /** Releases resources on the consuming container's thread. Must not throw. */
  default void close() {}
}
