/**
 * In-process streams between stages and what travels on them: bounded
 * {@link dev.weir.runner.stream.InProcessStream} partitions (back-pressure, never unbounded
 * buffering), the {@link dev.weir.runner.stream.StreamWriter} at a stage's tail that encodes the
 * key and picks the partition, a task's {@link dev.weir.runner.stream.TaskOutbox} for what does
 * not fit yet, and the messages: elements (keyed or not), {@link dev.weir.runner.stream.ProducerWatermark}
 * and {@link dev.weir.runner.stream.ProducerEndOfStream}. {@link dev.weir.runner.stream.InputPartition}
 * is what a task polls, a stream partition or a source split.
 *
 * <p>Threading: a stream partition has one consumer thread and any number of producer threads.
 */
package dev.weir.runner.stream;
