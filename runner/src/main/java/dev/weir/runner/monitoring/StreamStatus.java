package dev.weir.runner.monitoring;

import org.apache.beam.sdk.annotations.Internal;

/**
 * What monitoring reads of one intermediate stream between two stages: how full its partitions'
 * queues are, the job's back-pressure signal (a producer whose queue is full parks its output and
 * stops taking input until the queue drains, so a stream that stays full marks the stage after it
 * as the bottleneck, as Flink's back-pressure view does with output buffer usage). Implemented by
 * the executor over its in-process streams.
 *
 * <p>Threading: any thread, while the job runs and after. {@link #queued} is a racy read of a
 * queue's size: it may take the queue's lock for one read, never waits for a run loop's work.
 */
@Internal
public interface StreamStatus {
  /** The stream's name in the plan, e.g. {@code stream-1}. */
  String name();

  /** How elements are routed to its partitions: {@code SHUFFLE}, {@code FORWARD} or {@code BROADCAST}. */
  String kind();

  /** The name of the stage that writes the stream. */
  String producerStage();

  /** The name of the stage that reads it. */
  String consumerStage();

  /** Its partitions (one per task of the consuming stage). */
  int partitions();

  /** Messages queued in {@code partition} now. */
  int queued(int partition);

  /** The most messages one partition holds before producers are back-pressured. */
  int capacity();
}
