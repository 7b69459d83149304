package dev.weir.runner.stream;

import dev.weir.runner.translation.StreamPlan;
import java.util.concurrent.ArrayBlockingQueue;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.samza.system.SystemStreamPartition;

/**
 * An intermediate stream held in memory: one bounded queue per partition, written by every
 * producer task of the upstream stage, read by the single consumer task of that partition.
 *
 * <p>Back-pressure: {@link #offer} never blocks and never grows a queue past its capacity; a
 * producer whose offer fails parks the message in its task's {@link TaskOutbox} and stops taking
 * input until the outbox drains. Messages (see {@link InputPartition}) are passed by reference, with
 * no envelope and no serialization in process.
 *
 * <p>Threading: any number of producer threads, one consumer thread per partition
 * ({@link ArrayBlockingQueue} is the MPMC queue used; it allocates nothing per element).
 */
@Internal
public final class InProcessStream {
  /** The samza-api system name of Weir's in-process streams. */
  public static final String SYSTEM = "weir";

  private final StreamPlan plan;
  private final Partition[] partitions;

  /**
   * @param plan the stream's plan
   * @param capacity messages each partition's queue holds (at least 1)
   */
  public InProcessStream(StreamPlan plan, int capacity) {
    this.plan = plan;
    this.partitions = new Partition[plan.partitions()];
    for (int i = 0; i < partitions.length; i++) {
      partitions[i] = new Partition(new SystemStreamPartition(SYSTEM, plan.name(),
          new org.apache.samza.Partition(i)), capacity, plan.producers());
    }
  }

  /** The stream's plan. */
  public StreamPlan plan() {
    return plan;
  }

  /** Number of partitions. */
  public int partitionCount() {
    return partitions.length;
  }

  /** The consumer side of partition {@code i}. */
  public Partition partition(int i) {
    return partitions[i];
  }

  /**
   * Appends to partition {@code i} if it has room.
   *
   * @param message a Beam {@code WindowedValue}, a {@link KeyedElement}, a {@link ProducerWatermark} or a
   *     {@link ProducerEndOfStream}
   * @return false if the partition is full (the caller keeps the message and retries later)
   */
  public boolean offer(int i, Object message) {
    return partitions[i].queue.offer(message);
  }

  /** One partition of the stream, as an {@link InputPartition} of its consumer task. */
  public static final class Partition implements InputPartition {
    private final SystemStreamPartition ssp;
    private final ArrayBlockingQueue<Object> queue;
    private final int producers;

    Partition(SystemStreamPartition ssp, int capacity, int producers) {
      this.ssp = ssp;
      this.queue = new ArrayBlockingQueue<>(Math.max(1, capacity));
      this.producers = producers;
    }

    @Override
    public SystemStreamPartition ssp() {
      return ssp;
    }

    @Override
    public int producers() {
      return producers;
    }

    @Override
    public Object poll() {
      return queue.poll();
    }

    /** Messages currently queued (racy; for tests and metrics). */
    public int size() {
      return queue.size();
    }
  }
}
