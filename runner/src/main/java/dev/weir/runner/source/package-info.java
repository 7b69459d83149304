/**
 * Source splits as a task's input partitions: {@link dev.weir.runner.source.SourcePartition}
 * (bounded and unbounded Beam readers, Impulse, TestStream) with its read phases, positions for
 * checkpoints and watermarks, and {@link dev.weir.runner.source.SourceCheckpoints}, the checkpoint
 * marks of a task's unbounded splits between commits.
 *
 * <p>Threading: a split is read on its task's thread.
 */
package dev.weir.runner.source;
