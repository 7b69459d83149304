package dev.weir.runner.checkpoint;

import dev.weir.runner.state.CellLayout;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.StagePlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.annotations.Internal;

/**
 * How a checkpoint's state maps onto the plan of the job restoring it, by PTransform full name: the
 * rules of an upgrade, decided once before any byte is restored.
 *
 * <p>A checkpoint addresses keyed state by key group and by an id derived from the PTransform's
 * full name ({@link CellLayout}; a ParDo's without its DoFn class, {@link CellLayout#stateIdentity}), and heap parts by task and node, which the checkpoint's plan
 * ({@link PlanFingerprint#shape()}) turns into PTransform names. So a job whose plan differs from
 * the checkpoint's takes the checkpoint's state wherever the names match:
 *
 * <ul>
 *   <li>steps added or removed that hold no state, stages cut differently, changed DoFn code and
 *       changed stateless parts restore (the steps' names are what matters, not their place);
 *   <li>a PTransform that held keyed state (it has a state schema in the checkpoint) must be in the
 *       job under the same name with the same schema ({@link NodeSpec#stateSchema()}: key, window
 *       and state coders), else the restore fails naming it, both schemas, and the way out;
 *   <li>a removed PTransform whose heap parts hold elements (pushed back for a side input, held for
 *       stable input), or a removed source, fails the same way ({@code task.RescaledTaskParts} and
 *       {@link RescaledRestore} name it when they meet its parts);
 *   <li>a source must keep its number of splits: its positions are per split;
 *   <li>with {@code --allowNonRestoredState}, the state of a removed or changed PTransform is
 *       dropped instead, each named in one WARN line, and everything else restores.
 * </ul>
 *
 * <p>A new stage's watermarks restore from the checkpoint's stage that read the same streams
 * ({@link PlanFingerprint#streamIdentity}); a stage with new inputs starts from its producers'
 * restored watermarks, which every restored task sends on when it opens.
 *
 * <p>Source: Flink matches savepoint state to operators by uid and refuses state it cannot place
 * unless {@code --allowNonRestoredState}; Beam's Flink runner derives the uid from the transform's
 * full name, as Weir does here.
 *
 * <p>Threading: immutable after construction; built and read on the thread that starts the job.
 */
@Internal
public final class PlanUpgrade {
  /** Where a PTransform's node is in the restored job's plan. */
  public record NodeAddress(int stage, int node) {}

  private final PlanFingerprint.Shape old;
  private final boolean allowNonRestoredState;
  /** The restored job's operator nodes by their PTransform's state identity ({@link CellLayout#stateIdentity}). */
  private final Map<String, NodeAddress> nodes = new HashMap<>();
  /** Per stage of the restored job: the checkpoint's stage it continues (same inputs), or null. */
  private final List<PlanFingerprint.Shape.Stage> continues = new ArrayList<>();
  /** PTransforms of the checkpoint whose state is dropped (--allowNonRestoredState), by state identity, with why. */
  private final Map<String, String> dropped = new LinkedHashMap<>();
  /** What refuses the restore, one sentence per PTransform; empty if it may go on. */
  private final List<String> refusals = new ArrayList<>();
  /** The checkpoint's PTransform names by the int ids of their key spaces. */
  private final Map<Integer, String> oldOperatorNames = new HashMap<>();
  private final Set<String> added = new LinkedHashSet<>();
  private final Set<String> removed = new LinkedHashSet<>();

  /**
   * Matches checkpoint plan {@code old} to {@code now}.
   *
   * @param allowNonRestoredState drop state that has no place in {@code now} instead of refusing
   */
  public PlanUpgrade(PlanFingerprint.Shape old, JobPlan now, boolean allowNonRestoredState) {
    this.old = old;
    this.allowNonRestoredState = allowNonRestoredState;
    Map<String, String> nowSchemas = new HashMap<>();
    Map<String, StagePlan> nowSources = new HashMap<>();
    for (StagePlan stage : now.stages()) {
      for (NodeSpec node : stage.nodes()) {
        if (!node.isWriter()) {
          nodes.put(id(node.stepName()), new NodeAddress(stage.id(), node.index()));
          if (node.stateSchema() != null) {
            nowSchemas.put(id(node.stepName()), node.stateSchema());
          }
        }
      }
      if (stage.source() != null) {
        nowSources.put(stage.nodes().get(0).stepName(), stage);
      }
      continues.add(continued(stage));
    }
    Set<String> oldNames = new LinkedHashSet<>();
    for (PlanFingerprint.Shape.Stage stage : old.stages()) {
      for (int n = 0; n < stage.nodes().size(); n++) {
        String name = stage.nodes().get(n);
        if (name == null) {
          continue; // a writer
        }
        oldNames.add(id(name));
        for (String space : CellLayout.OPERATOR_SPACES) {
          oldOperatorNames.put(CellLayout.operatorIdValue(name, space), name);
        }
        if (!nodes.containsKey(id(name))) {
          removed.add(name);
        }
      }
      if (stage.source()) {
        String source = stage.nodes().get(0);
        StagePlan restored = nowSources.get(source);
        if (restored == null) {
          refuse(source, "the checkpoint holds the positions of source '" + source + "', which the job does not have");
        } else if (restored.partitions() != stage.partitions()) {
          refusals.add("source '" + source + "' has " + restored.partitions() + " splits, the checkpoint's had "
              + stage.partitions() + " (positions are per split)");
        }
      }
    }
    for (Map.Entry<String, String> e : old.schemas().entrySet()) {
      String name = e.getKey();
      String nowSchema = nowSchemas.get(id(name));
      if (!nodes.containsKey(id(name))) {
        refuse(name, "the checkpoint holds keyed state of PTransform '" + name + "' (" + e.getValue()
            + "), which the job does not have");
      } else if (!e.getValue().equals(nowSchema)) {
        refuse(name, "PTransform '" + name + "' holds keyed state of another shape in the checkpoint: it has '"
            + e.getValue() + "' there and '" + (nowSchema == null ? "no keyed state" : nowSchema) + "' in the job");
      }
    }
    for (StagePlan stage : now.stages()) {
      for (NodeSpec node : stage.nodes()) {
        if (!node.isWriter() && !oldNames.contains(id(node.stepName()))) {
          added.add(node.stepName());
        }
      }
    }
  }

  private static String id(String transform) {
    return CellLayout.stateIdentity(transform);
  }

  private void refuse(String transform, String why) {
    if (allowNonRestoredState) {
      dropped.putIfAbsent(id(transform), why);
    } else {
      refusals.add(why);
    }
  }

  /** The checkpoint's stage with the same inputs (by stream identity) or source as {@code stage}, or null. */
  private PlanFingerprint.Shape.Stage continued(StagePlan stage) {
    List<String> inputs = new ArrayList<>();
    for (StagePlan.Input input : stage.inputs()) {
      inputs.add(PlanFingerprint.streamIdentity(input.stream().name()));
    }
    for (PlanFingerprint.Shape.Stage candidate : old.stages()) {
      if (candidate.source() != (stage.source() != null)) {
        continue;
      }
      if (candidate.source()) {
        if (candidate.nodes().get(0).equals(stage.nodes().get(0).stepName())) {
          return candidate;
        }
        continue;
      }
      if (candidate.inputs().stream().map(PlanFingerprint::streamIdentity).toList().equals(inputs)
          && !inputs.isEmpty()) {
        return candidate;
      }
    }
    return null;
  }

  /**
   * Fails if the checkpoint's state cannot be placed in the job and {@code --allowNonRestoredState}
   * is off; else logs nothing and returns.
   *
   * @throws IllegalStateException naming checkpoint {@code checkpoint}, every PTransform whose state
   *     has no place, and the ways out
   */
  public void check(java.nio.file.Path checkpoint) {
    if (!refusals.isEmpty()) {
      throw new IllegalStateException("Cannot restore checkpoint " + checkpoint + " into this pipeline: "
          + String.join("; ", refusals) + ". Restore it into the pipeline that wrote it, start with "
          + "--allowNonRestoredState=true to drop the state of "
          + (refusals.size() == 1 ? "that PTransform" : "those PTransforms")
          + " and restore the rest, or with --restoreMode=NONE to discard every checkpoint and start fresh");
    }
  }

  /** The checkpoint's plan. */
  public PlanFingerprint.Shape old() {
    return old;
  }

  /**
   * Where the checkpoint's PTransform {@code name} is in the restored job (the node of the same
   * {@linkplain CellLayout#stateIdentity state identity}), or null if the job does not have it.
   */
  public NodeAddress nodeOf(String name) {
    return nodes.get(id(name));
  }

  /**
   * The checkpoint's stage that restored stage {@code stage} (its index) continues: the one that
   * read the same streams, or read the same source; null if none did.
   */
  public PlanFingerprint.Shape.Stage continues(int stage) {
    return continues.get(stage);
  }

  /** Whether the state of the checkpoint's PTransform {@code name} is dropped ({@code --allowNonRestoredState}). */
  public boolean drops(String name) {
    return dropped.containsKey(id(name));
  }

  /** Whether state with no place in the job is dropped rather than refused. */
  public boolean allowNonRestoredState() {
    return allowNonRestoredState;
  }

  /**
   * The checkpoint's PTransform whose key space has id {@code operatorId}
   * ({@link CellLayout#operatorIdValue}), or null if none of its nodes has it.
   */
  public String oldOperatorName(int operatorId) {
    return oldOperatorNames.get(operatorId);
  }

  /** Why each dropped PTransform's state is dropped, by state identity. */
  public Map<String, String> dropped() {
    return java.util.Collections.unmodifiableMap(dropped);
  }

  /**
   * The differences a log line should name: PTransforms added and removed by name, and state dropped;
   * empty if the plans have the same PTransforms.
   */
  public String summary() {
    List<String> parts = new ArrayList<>();
    if (!added.isEmpty()) {
      parts.add("PTransforms added: " + String.join(", ", added));
    }
    if (!removed.isEmpty()) {
      parts.add("PTransforms removed: " + String.join(", ", removed));
    }
    if (!dropped.isEmpty()) {
      parts.add("state dropped (--allowNonRestoredState) of: " + String.join(", ", dropped.keySet()));
    }
    return String.join("; ", parts);
  }

  @Override
  public String toString() {
    return "PlanUpgrade[" + summary() + "]";
  }
}
