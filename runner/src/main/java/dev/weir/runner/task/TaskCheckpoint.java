package dev.weir.runner.task;

import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.source.SourcePartition;
import dev.weir.runner.stream.StreamWriter;

import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.operators.Operator;
import dev.weir.runner.operators.OperatorSnapshot;
import dev.weir.runner.state.KeyGroups;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One task's part of a checkpoint: what it writes into its container's checkpoint commit, and
 * what it reads back from a restored one, under keys {@code task/<task name>/<part>}:
 *
 * <ul>
 *   <li>{@code watermarks}: each producer's watermark and end of stream ({@link StageWatermarks#snapshot()});
 *   <li>{@code metrics}: the task's step metrics ({@link StepMetrics.Task#snapshot()});
 *   <li>{@code input/<i>}: source input {@code i}'s position ({@link SourcePartition#position()});
 *   <li>{@code node/<n>/<name>}: operator {@code n}'s heap state, part by part ({@link Operator#snapshot}).
 * </ul>
 *
 * <p>After a restore at another number of partitions, or into an upgraded pipeline whose stage
 * differs ({@code checkpoint.RescaledRestore}), the task's metadata holds
 * {@value OperatorSnapshot#RESCALED} and, for its metrics and operator parts, those of every old
 * task they came from, suffixed {@code @<old partition>} (metrics {@code @<old stage>.<old
 * partition>}): metrics are added up, and operators keep what they own
 * ({@link OperatorSnapshot#rescaled}).
 *
 * <p>The task decides when (it must be quiet, see {@code StageTask#quietForCheckpoint()}); this
 * class only knows the keys and walks the task's inputs and operators, each operator call in its
 * own step (metrics and profiling span), as every call into an operator is.
 *
 * <p>Threading: the task's container thread only.
 */
final class TaskCheckpoint {
  private final String taskName;
  private final String prefix;
  private final Map<String, byte[]> restored;
  private final TaskInput[] inputs;
  private final Operator[] operators;
  private final StreamWriter[] writerAt;
  private final StepScope scope;
  private final StepScope.Step[] steps;
  private final int partition;
  private final int partitions;
  private final KeyGroups keyGroups;

  /**
   * @param taskName the task's samza-api name
   * @param restored the container's restored checkpoint metadata (all tasks'), empty on a fresh start
   * @param writerAt per node, its stream writer or null (writers have no state of their own)
   */
  TaskCheckpoint(String taskName, Map<String, byte[]> restored, TaskInput[] inputs, Operator[] operators,
      StreamWriter[] writerAt, StepScope scope, StepScope.Step[] steps, int partition, int partitions,
      KeyGroups keyGroups) {
    this.partition = partition;
    this.partitions = partitions;
    this.keyGroups = keyGroups;
    this.taskName = taskName;
    this.prefix = "task/" + taskName + "/";
    this.restored = restored;
    this.inputs = inputs;
    this.operators = operators;
    this.writerAt = writerAt;
    this.scope = scope;
    this.steps = steps;
  }

  /** The restored bytes of the task's {@code part}, or null (fresh start, or nothing written). */
  byte[] restored(String part) {
    return restored.get(prefix + part);
  }

  /**
   * The restored bytes of the task's {@code part}: the one it wrote, or after a rescaled restore
   * those of every old task it took over ({@code part@<old partition>}); empty on a fresh start.
   */
  List<byte[]> restoredAll(String part) {
    byte[] own = restored(part);
    if (own != null || restored(OperatorSnapshot.RESCALED) == null) {
      return own == null ? List.of() : List.of(own);
    }
    List<byte[]> all = new ArrayList<>();
    String from = prefix + part + OperatorSnapshot.FROM;
    for (Map.Entry<String, byte[]> e : new java.util.TreeMap<>(restored).entrySet()) {
      if (e.getKey().startsWith(from)) {
        all.add(e.getValue());
      }
    }
    return all;
  }

  /** The parts node {@code node} wrote into the restored checkpoint, or {@link OperatorSnapshot#EMPTY}. */
  OperatorSnapshot restoredParts(int node) {
    if (restored.isEmpty()) {
      return OperatorSnapshot.EMPTY;
    }
    String nodePrefix = prefix + "node/" + node + "/";
    Map<String, byte[]> parts = new HashMap<>();
    for (Map.Entry<String, byte[]> e : restored.entrySet()) {
      if (e.getKey().startsWith(nodePrefix)) {
        parts.put(e.getKey().substring(nodePrefix.length()), e.getValue());
      }
    }
    if (restored(OperatorSnapshot.RESCALED) != null) {
      return OperatorSnapshot.rescaled(parts, partition, partitions, keyGroups);
    }
    return parts.isEmpty() ? OperatorSnapshot.EMPTY : new OperatorSnapshot(parts);
  }

  /**
   * Restores the task's watermarks, if the checkpoint holds them: each producer's watermark and end
   * of stream into {@code watermarks}, each side input's watermark into its consuming operator
   * (in that operator's step), and the task's input watermark recomputed. The caller then delivers
   * it through the stage in one watermark pass.
   *
   * @return whether watermarks were restored (false on a fresh start)
   * @throws IllegalStateException naming the task if the restored bytes do not fit its inputs
   */
  boolean restoreWatermarks(StageWatermarks watermarks) {
    byte[] bytes = restored("watermarks");
    if (bytes == null) {
      return false;
    }
    try {
      watermarks.restore(bytes);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("cannot restore the watermarks of task " + taskName
          + ": " + e.getMessage(), e);
    }
    for (TaskInput input : inputs) {
      if (input.sideConsumer != null) {
        StepScope.Step previous = scope.enter(steps[input.entryNode]);
        try {
          input.sideConsumer.advanceSideInputWatermark(input.sideIndex, watermarks.inputWatermarkMs(input.index));
        } finally {
          scope.exit(previous);
        }
      }
    }
    watermarks.advanceInputWatermark();
    return true;
  }

  /** Hands each source input its restored position; before the readers open. */
  void restoreSourcePositions() {
    for (int i = 0; i < inputs.length; i++) {
      byte[] position = restored("input/" + i);
      if (position != null && inputs[i].partition instanceof SourcePartition source) {
        source.restorePosition(position);
      }
    }
  }

  /** Writes the task's part of a checkpoint into {@code metadata} (the job is quiescent). */
  void write(Map<String, byte[]> metadata, StageWatermarks watermarks, StepMetrics.Task metrics) {
    metadata.put(prefix + "watermarks", watermarks.snapshot());
    byte[] metricValues = metrics.snapshot();
    if (metricValues != null) {
      metadata.put(prefix + "metrics", metricValues);
    }
    for (int i = 0; i < inputs.length; i++) {
      if (inputs[i].partition instanceof SourcePartition source) {
        metadata.put(prefix + "input/" + i, source.position());
      }
    }
    for (int i = 0; i < operators.length; i++) {
      if (writerAt[i] != null) {
        continue;
      }
      OperatorSnapshot parts = OperatorSnapshot.writable();
      StepScope.Step previous = scope.enter(steps[i]);
      try {
        operators[i].snapshot(parts);
      } finally {
        scope.exit(previous);
      }
      for (Map.Entry<String, byte[]> e : parts.parts().entrySet()) {
        metadata.put(prefix + "node/" + i + "/" + e.getKey(), e.getValue());
      }
    }
  }

  /**
   * The checkpoint is complete: each source finalizes the mark it held, then each operator hears
   * of it ({@link Operator#checkpointCompleted()}).
   */
  void completed() {
    for (TaskInput input : inputs) {
      if (input.partition instanceof SourcePartition source) {
        source.checkpointCompleted();
      }
    }
    for (int i = 0; i < operators.length; i++) {
      StepScope.Step previous = scope.enter(steps[i]);
      try {
        operators[i].checkpointCompleted();
      } finally {
        scope.exit(previous);
      }
    }
  }
}
