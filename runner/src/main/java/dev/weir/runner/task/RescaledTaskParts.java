package dev.weir.runner.task;

import dev.weir.runner.checkpoint.PlanFingerprint;
import dev.weir.runner.checkpoint.PlanUpgrade;
import dev.weir.runner.checkpoint.RescaledRestore;
import dev.weir.runner.operators.OperatorSnapshot;
import dev.weir.runner.operators.SideInputPushback;
import dev.weir.runner.state.WatermarkHolds;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The task layer's half of a restore into another shape ({@link RescaledRestore}, which re-addresses
 * the stores' entries): deals the checkpoint's task parts ({@code task/<task>/...} commit metadata,
 * {@link TaskCheckpoint}) out to the tasks of the restored job, whose plan may differ from the
 * checkpoint's in parallelism, in containers, or in its steps ({@link PlanUpgrade} matches the two
 * plans by PTransform name).
 *
 * <ul>
 *   <li>Container-wide entries go to every container.
 *   <li>A stage the checkpoint has unchanged (same inputs, same nodes at the same places, same
 *       partitions): each task's parts go, whole, to the container that now runs it (with its
 *       watermarks rebuilt if an input's producers changed in number).
 *   <li>Any other stage gets its parts rebuilt per new task, marked with
 *       {@value OperatorSnapshot#RESCALED}:
 *       <ul>
 *         <li>watermarks from all tasks of the checkpoint's stage that read the same streams
 *             ({@link StageWatermarks#rescale}); a stage with new inputs has none and learns its
 *             producers' watermarks from them when they open;
 *         <li>a source stage's positions and watermarks from the task of the same split (sources keep
 *             their splits);
 *         <li>keyed state's watermark holds from the stores' hold cells of the task's key groups
 *             (the restore's rebuilt holds; the timers' holds are rebuilt from the timer index when
 *             the task opens);
 *         <li>each operator's parts from the checkpoint's node of the same PTransform name:
 *             side-input contents from one old task (every task of a stage receives the same
 *             broadcast), every other part (processing-time timers, elements waiting for a side
 *             input or a checkpoint) from every old task, suffixed {@code @<old partition>}: the
 *             operator keeps the keys it owns ({@link OperatorSnapshot#rescaled});
 *         <li>metrics of every old task whose stage had a node of this stage, old partition
 *             {@code q} to new partition {@code q mod n}, where they add up (each task restores the
 *             steps it has).
 *       </ul>
 *   <li>Parts of a PTransform the job does not have: side-input contents and holds are dropped
 *       (nothing is lost: they are rebuilt or re-sent); any other part fails the restore naming the
 *       PTransform, unless {@code --allowNonRestoredState} drops it ({@link PlanUpgrade}).
 * </ul>
 *
 * <p>Threading: used once, on the thread that starts the job, before any container runs.
 */
@Internal
public final class RescaledTaskParts implements RescaledRestore.TaskParts {
  private static final Logger LOG = LoggerFactory.getLogger(RescaledTaskParts.class);
  private static final String TASK_PREFIX = "task/";
  private static final String WATERMARKS = "watermarks";
  private static final String METRICS = "metrics";
  private static final String NODE = "node/";
  private static final String INPUT = "input/";

  private final List<StagePlan> stages;
  private final int[] partitions;
  /** Per stage index, per node index: its PTransform's name, null for a writer. */
  private final List<List<String>> nodeNames = new ArrayList<>();
  /** Per stage index, per input: the producer stage's index. */
  private final int[][] producerStage;

  /** @param plan the restored job's plan */
  public RescaledTaskParts(JobPlan plan) {
    this.stages = plan.stages();
    this.partitions = new int[stages.size()];
    this.producerStage = new int[stages.size()][];
    Map<String, Integer> stageByName = new HashMap<>();
    for (int s = 0; s < stages.size(); s++) {
      partitions[s] = stages.get(s).partitions();
      stageByName.put(stages.get(s).name(), s);
      List<String> names = new ArrayList<>();
      for (NodeSpec node : stages.get(s).nodes()) {
        names.add(node.isWriter() ? null : node.stepName());
      }
      nodeNames.add(names);
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
  public List<String> route(Map<String, byte[]> committed, PlanUpgrade upgrade,
      Map<List<Integer>, WatermarkHolds> holds, IntBinaryOperator containerOf, List<Map<String, byte[]>> metadata) {
    PlanFingerprint.Shape old = upgrade.old();
    // the checkpoint's tasks' parts: by old stage name, old partition, then part name (after "task/<task>/")
    Map<String, Map<Integer, Map<String, byte[]>>> oldTasks = new HashMap<>();
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
      if (at < 0 || old.stage(task.substring(0, at)) == null) {
        throw new IllegalStateException("Cannot restore the checkpoint: it holds task " + task
            + ", of a stage its own plan does not have");
      }
      oldTasks.computeIfAbsent(task.substring(0, at), k -> new TreeMap<>())
          .computeIfAbsent(Integer.parseInt(task.substring(at + 2)), q -> new LinkedHashMap<>())
          .put(key.substring(end + 1), e.getValue());
    }
    checkRemovedParts(old, oldTasks, upgrade);
    List<String> rescaledStages = new ArrayList<>();
    for (int s = 0; s < stages.size(); s++) {
      PlanFingerprint.Shape.Stage from = upgrade.continues(s);
      Map<Integer, Map<String, byte[]>> fromTasks = from == null ? Map.of()
          : oldTasks.getOrDefault(from.name(), Map.of());
      int[] producers = new int[producerStage[s].length];
      boolean producersChanged = false;
      for (int i = 0; i < producers.length; i++) {
        producers[i] = partitions[producerStage[s][i]];
        Integer before = from == null ? null : old.producers().get(from.inputs().get(i));
        producersChanged |= before != null && before != producers[i];
      }
      boolean unchanged = from != null && from.partitions() == partitions[s] && from.nodes().equals(nodeNames.get(s));
      if (unchanged) {
        for (int p = 0; p < partitions[s]; p++) {
          String prefix = TASK_PREFIX + JobPlan.taskName(stages.get(s), p) + "/";
          Map<String, byte[]> into = metadata.get(containerOf.applyAsInt(s, p));
          Map<String, byte[]> own = fromTasks.getOrDefault(p, Map.of());
          own.forEach((part, bytes) -> {
            if (!droppedNodePart(from, part, upgrade)) {
              into.put(prefix + part, bytes);
            }
          });
          if (producersChanged && own.get(WATERMARKS) != null) {
            into.put(prefix + WATERMARKS, StageWatermarks.rescale(List.of(own.get(WATERMARKS)), producers));
          }
        }
        continue;
      }
      if (from != null && from.partitions() != partitions[s]) {
        rescaledStages.add(stages.get(s).name() + " " + from.partitions() + " -> " + partitions[s]);
      }
      List<byte[]> oldWatermarks = new ArrayList<>();
      for (Map<String, byte[]> parts : fromTasks.values()) {
        if (parts.get(WATERMARKS) != null) {
          oldWatermarks.add(parts.get(WATERMARKS));
        }
      }
      for (int p = 0; p < partitions[s]; p++) {
        String prefix = TASK_PREFIX + JobPlan.taskName(stages.get(s), p) + "/";
        Map<String, byte[]> into = metadata.get(containerOf.applyAsInt(s, p));
        into.put(prefix + OperatorSnapshot.RESCALED,
            Integer.toString(from == null ? 0 : from.partitions()).getBytes(StandardCharsets.UTF_8));
        if (stages.get(s).source() != null) {
          fromTasks.getOrDefault(p, Map.of()).forEach((part, bytes) -> {
            if (part.startsWith(INPUT) || part.equals(WATERMARKS)) {
              into.put(prefix + part, bytes); // a source keeps its splits (PlanUpgrade checked)
            }
          });
        } else if (!oldWatermarks.isEmpty()) {
          into.put(prefix + WATERMARKS, StageWatermarks.rescale(oldWatermarks, producers));
        }
        for (PlanFingerprint.Shape.Stage oldStage : old.stages()) {
          if (oldStage != from && !feeds(oldStage, s, upgrade)) {
            continue;
          }
          for (Map.Entry<Integer, Map<String, byte[]>> task : oldTasks.getOrDefault(oldStage.name(), Map.of())
              .entrySet()) {
            dealOut(oldStage, task.getKey(), task.getValue(), s, p, prefix, into, upgrade);
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

  /** Whether a node of {@code oldStage} is in stage {@code s} now. */
  private static boolean feeds(PlanFingerprint.Shape.Stage oldStage, int s, PlanUpgrade upgrade) {
    for (String name : oldStage.nodes()) {
      PlanUpgrade.NodeAddress at = name == null ? null : upgrade.nodeOf(name);
      if (at != null && at.stage() == s) {
        return true;
      }
    }
    return false;
  }

  /**
   * Puts old task {@code q} of {@code oldStage}'s metrics and the parts of its nodes now in stage
   * {@code s} into new task {@code p}'s metadata {@code into} (under {@code prefix}).
   */
  private void dealOut(PlanFingerprint.Shape.Stage oldStage, int q, Map<String, byte[]> parts, int s, int p,
      String prefix, Map<String, byte[]> into, PlanUpgrade upgrade) {
    for (Map.Entry<String, byte[]> part : parts.entrySet()) {
      String name = part.getKey();
      if (name.equals(METRICS)) {
        if (q % partitions[s] == p) {
          into.put(prefix + METRICS + OperatorSnapshot.FROM + oldStage.name() + "." + q, part.getValue());
        }
        continue;
      }
      if (!name.startsWith(NODE) || name.endsWith("/" + WatermarkHolds.SNAPSHOT_PART)) {
        continue; // watermarks, positions and holds are rebuilt above
      }
      String transform = transformOf(oldStage, name);
      PlanUpgrade.NodeAddress at = transform == null ? null : upgrade.nodeOf(transform);
      if (at == null || at.stage() != s || upgrade.drops(transform)) {
        continue;
      }
      String moved = NODE + at.node() + name.substring(name.indexOf('/', NODE.length()));
      if (name.endsWith("/" + SideInputPushback.PART)) {
        into.putIfAbsent(prefix + moved, part.getValue()); // alike in every task
      } else {
        into.put(prefix + moved + OperatorSnapshot.FROM + q, part.getValue());
      }
    }
  }

  /** Whether {@code part} of a task of {@code stage} is a node part of a PTransform whose state is dropped. */
  private static boolean droppedNodePart(PlanFingerprint.Shape.Stage stage, String part, PlanUpgrade upgrade) {
    if (!part.startsWith(NODE)) {
      return false;
    }
    String transform = transformOf(stage, part);
    return transform != null && upgrade.drops(transform);
  }

  /**
   * The PTransform whose node wrote node part {@code part} ({@code node/<n>/<name>}) in a task of
   * the checkpoint's {@code stage}; null for a writer node.
   */
  private static String transformOf(PlanFingerprint.Shape.Stage stage, String part) {
    return stage.nodes().get(Integer.parseInt(part.substring(NODE.length(), part.indexOf('/', NODE.length()))));
  }

  /**
   * Fails, naming the PTransform, if a node the job does not have left parts that hold elements or
   * timers (anything but side-input contents and watermark holds), unless
   * {@code --allowNonRestoredState}, which drops them with one WARN line per PTransform.
   */
  private static void checkRemovedParts(PlanFingerprint.Shape old, Map<String, Map<Integer, Map<String, byte[]>>> oldTasks,
      PlanUpgrade upgrade) {
    Map<String, String> lost = new TreeMap<>();
    for (Map.Entry<String, Map<Integer, Map<String, byte[]>>> stage : oldTasks.entrySet()) {
      PlanFingerprint.Shape.Stage oldStage = old.stage(stage.getKey());
      for (Map<String, byte[]> parts : stage.getValue().values()) {
        for (String part : parts.keySet()) {
          if (!part.startsWith(NODE) || part.endsWith("/" + WatermarkHolds.SNAPSHOT_PART)
              || part.endsWith("/" + SideInputPushback.PART)) {
            continue;
          }
          String transform = transformOf(oldStage, part);
          if (transform != null && upgrade.nodeOf(transform) == null && !upgrade.drops(transform)) {
            lost.putIfAbsent(transform, part.substring(part.indexOf('/', NODE.length()) + 1));
          }
        }
      }
    }
    if (lost.isEmpty()) {
      return;
    }
    if (!upgrade.allowNonRestoredState()) {
      throw new IllegalStateException("Cannot restore the checkpoint into this pipeline: "
          + String.join("; ", lost.entrySet().stream().map(e -> "PTransform '" + e.getKey() + "' holds state in it ("
              + e.getValue() + ": elements or timers it had not finished), and the job does not have it").toList())
          + ". Restore it into the pipeline that wrote it, start with --allowNonRestoredState=true to drop that state "
          + "and restore the rest, or with --restoreMode=NONE to discard every checkpoint and start fresh");
    }
    lost.forEach((transform, part) -> LOG.warn("Dropped the '{}' state of PTransform '{}', which the job does not "
        + "have (--allowNonRestoredState=true)", part, transform));
  }
}
