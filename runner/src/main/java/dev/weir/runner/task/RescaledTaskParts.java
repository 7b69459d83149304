package dev.weir.runner.task;

import dev.weir.runner.checkpoint.RescaledRestore;
import dev.weir.runner.operators.OperatorSnapshot;
import dev.weir.runner.operators.SideInputPushback;
import dev.weir.runner.state.WatermarkHolds;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntBinaryOperator;
import org.apache.beam.sdk.annotations.Internal;

/**
 * The task layer's half of a rescaled restore ({@link RescaledRestore}, which re-addresses the
 * stores' entries): deals the checkpoint's task parts ({@code task/<task>/...} commit metadata,
 * {@link TaskCheckpoint}) out to the tasks of the restored job.
 *
 * <ul>
 *   <li>Container-wide entries go to every container.
 *   <li>A stage that kept its partitions: each task's parts go, whole, to the container that now
 *       runs it (with its watermarks rebuilt if an input's producers changed in number).
 *   <li>A stage restored at another number of partitions (never a source stage: its positions are
 *       per split, and sources keep their splits) gets its parts rebuilt per new task, marked with
 *       {@value OperatorSnapshot#RESCALED}:
 *       <ul>
 *         <li>watermarks from all old tasks' ({@link StageWatermarks#rescale});
 *         <li>keyed state's watermark holds from the stores' hold cells of the task's key groups
 *             (the restore's rebuilt holds; the timers' holds are rebuilt from the timer index when
 *             the task opens);
 *         <li>side-input contents from one old task (every task of a stage receives the same broadcast);
 *         <li>every other operator part (processing-time timers, elements waiting for a side input
 *             or a checkpoint) from every old task, suffixed {@code @<old partition>}: the operator
 *             keeps the keys it owns ({@link OperatorSnapshot#rescaled});
 *         <li>metrics of old partition {@code q} to new partition {@code q mod n}, where they add up.
 *       </ul>
 * </ul>
 *
 * <p>Threading: used once, on the thread that starts the job, before any container runs.
 */
@Internal
public final class RescaledTaskParts implements RescaledRestore.TaskParts {
  private static final String TASK_PREFIX = "task/";
  private static final String WATERMARKS = "watermarks";
  private static final String METRICS = "metrics";
  private static final String NODE = "node/";

  private final List<StagePlan> stages;
  private final int[] partitions;
  /** Stage index by stage name. */
  private final Map<String, Integer> stageByName = new HashMap<>();
  /** Per stage index, per input: the producer stage's index. */
  private final int[][] producerStage;

  /** @param plan the restored job's plan */
  public RescaledTaskParts(JobPlan plan) {
    this.stages = plan.stages();
    this.partitions = new int[stages.size()];
    this.producerStage = new int[stages.size()][];
    for (int s = 0; s < stages.size(); s++) {
      partitions[s] = stages.get(s).partitions();
      stageByName.put(stages.get(s).name(), s);
    }
    for (int s = 0; s < stages.size(); s++) {
      List<StagePlan.Input> inputs = stages.get(s).inputs();
      producerStage[s] = new int[inputs.size()];
      for (int i = 0; i < inputs.size(); i++) {
        producerStage[s][i] = stageByName.get(inputs.get(i).stream().producer().name());
      }
    }
  }

  @Override
  public List<String> route(Map<String, byte[]> committed, Map<List<Integer>, WatermarkHolds> holds,
      IntBinaryOperator containerOf, List<Map<String, byte[]>> metadata) {
    List<String> rescaledStages = new ArrayList<>();
    // old tasks' parts: by stage index, old partition, then part name (after "task/<task>/")
    List<Map<Integer, Map<String, byte[]>>> oldTasks = new ArrayList<>();
    for (int s = 0; s < stages.size(); s++) {
      oldTasks.add(new TreeMap<>());
    }
    for (Map.Entry<String, byte[]> e : committed.entrySet()) {
      String key = e.getKey();
      if (!key.startsWith(TASK_PREFIX)) {
        for (Map<String, byte[]> m : metadata) {
          m.putIfAbsent(key, e.getValue());
        }
        continue;
      }
      int end = key.indexOf('/', TASK_PREFIX.length());
      String task = key.substring(TASK_PREFIX.length(), end);
      int at = task.lastIndexOf("-p");
      Integer stage = at < 0 ? null : stageByName.get(task.substring(0, at));
      if (stage == null) {
        throw new IllegalStateException("Cannot restore the checkpoint: it holds task " + task
            + ", of a stage the job does not have");
      }
      oldTasks.get(stage).computeIfAbsent(Integer.parseInt(task.substring(at + 2)), p -> new LinkedHashMap<>())
          .put(key.substring(end + 1), e.getValue());
    }
    for (int s = 0; s < stages.size(); s++) {
      StagePlan stage = stages.get(s);
      Map<Integer, Map<String, byte[]>> old = oldTasks.get(s);
      boolean rescaled = !old.isEmpty() && old.size() != partitions[s];
      if (rescaled && stage.source() != null) {
        throw new IllegalStateException("Cannot restore the checkpoint: source stage " + stage.name()
            + " had " + old.size() + " splits and has " + partitions[s] + " now");
      }
      if (rescaled) {
        rescaledStages.add(stage.name() + " " + old.size() + " -> " + partitions[s]);
      }
      int[] producers = new int[producerStage[s].length];
      boolean producersChanged = false;
      for (int i = 0; i < producers.length; i++) {
        producers[i] = partitions[producerStage[s][i]];
        int before = oldTasks.get(producerStage[s][i]).size();
        producersChanged |= before != 0 && before != producers[i];
      }
      List<byte[]> oldWatermarks = new ArrayList<>();
      for (Map<String, byte[]> parts : old.values()) {
        if (parts.get(WATERMARKS) != null) {
          oldWatermarks.add(parts.get(WATERMARKS));
        }
      }
      for (int p = 0; p < partitions[s]; p++) {
        String prefix = TASK_PREFIX + JobPlan.taskName(stage, p) + "/";
        Map<String, byte[]> into = metadata.get(containerOf.applyAsInt(s, p));
        if (!rescaled) {
          Map<String, byte[]> own = old.getOrDefault(p, Map.of());
          own.forEach((part, bytes) -> into.put(prefix + part, bytes));
          if (producersChanged && own.get(WATERMARKS) != null) {
            into.put(prefix + WATERMARKS, StageWatermarks.rescale(List.of(own.get(WATERMARKS)), producers));
          }
          continue;
        }
        into.put(prefix + OperatorSnapshot.RESCALED, Integer.toString(old.size()).getBytes(StandardCharsets.UTF_8));
        if (!oldWatermarks.isEmpty()) {
          into.put(prefix + WATERMARKS, StageWatermarks.rescale(oldWatermarks, producers));
        }
        for (Map.Entry<Integer, Map<String, byte[]>> task : old.entrySet()) {
          int from = task.getKey();
          for (Map.Entry<String, byte[]> part : task.getValue().entrySet()) {
            String name = part.getKey();
            if (name.equals(WATERMARKS) || name.endsWith("/" + WatermarkHolds.SNAPSHOT_PART)) {
              continue; // rebuilt
            }
            if (name.equals(METRICS)) {
              if (from % partitions[s] == p) {
                into.put(prefix + METRICS + OperatorSnapshot.FROM + from, part.getValue());
              }
            } else if (name.startsWith(NODE) && name.endsWith("/" + SideInputPushback.PART)) {
              into.putIfAbsent(prefix + name, part.getValue()); // alike in every task
            } else {
              into.put(prefix + name + OperatorSnapshot.FROM + from, part.getValue());
            }
          }
        }
        for (Map.Entry<List<Integer>, WatermarkHolds> h : holds.entrySet()) {
          if (h.getKey().get(0) == s && h.getKey().get(1) == p) {
            into.put(prefix + NODE + h.getKey().get(2) + "/" + WatermarkHolds.SNAPSHOT_PART, h.getValue().snapshot());
          }
        }
      }
    }
    return rescaledStages;
  }
}
