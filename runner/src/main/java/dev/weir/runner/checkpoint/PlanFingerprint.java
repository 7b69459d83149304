package dev.weir.runner.checkpoint;

import dev.weir.runner.state.ContainerState;
import dev.weir.runner.state.KeyGroups;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;

/**
 * What a checkpoint must agree with to be restored into a job: the version of the byte format of
 * its state ({@link ContainerState#CELL_LAYOUT_VERSION}; checkpoints written before the line
 * existed are version 1, and differ in their first line), the number of key groups
 * ({@code --maxParallelism}), one line per stage (name,
 * partitions, inputs), per fused node (kind, PTransform name, consumers) and per stream (kind,
 * producers, partitions, key coder). The number of containers is not part of it: a checkpoint
 * restores into any number of containers ({@link RescaledRestore}). Two
 * plans restore into each other exactly when their lines are equal; {@link #firstDifference}
 * names the first line that is not, for the start-up error.
 *
 * <p>Coders are described by {@code toString()} unless that is Java's default identity form
 * ({@code Class@hash}, different in every JVM), then by class name.
 *
 * <p>Threading: immutable.
 *
 * @param lines the plan's description, in plan order
 */
@Internal
public record PlanFingerprint(List<String> lines) {
  /** The first line's start, before the layout version. */
  private static final String LAYOUT_LINE = "state cell layout ";

  /**
   * The state cell layout version of the state this fingerprint's checkpoint holds: from its first
   * line, or 1 if it has none (written before the line existed).
   */
  public int layoutVersion() {
    if (lines.isEmpty() || !lines.get(0).startsWith(LAYOUT_LINE)) {
      return 1;
    }
    return Integer.parseInt(lines.get(0).substring(LAYOUT_LINE.length()).strip());
  }

  /** The fingerprint of {@code plan} with {@code keyGroups}. */
  public static PlanFingerprint of(JobPlan plan, KeyGroups keyGroups) {
    List<String> lines = new ArrayList<>();
    lines.add(LAYOUT_LINE + ContainerState.CELL_LAYOUT_VERSION);
    lines.add("max parallelism " + keyGroups.maxParallelism());
    for (StagePlan stage : plan.stages()) {
      StringBuilder b = new StringBuilder("stage ").append(stage.name()).append(" x ").append(stage.partitions());
      if (stage.source() != null) {
        b.append(" source ").append(stage.source().getClass().getSimpleName());
      }
      for (StagePlan.Input input : stage.inputs()) {
        b.append(" reads ").append(input.stream().name()).append(" -> node ").append(input.entryNode());
      }
      lines.add(b.toString());
      for (NodeSpec node : stage.nodes()) {
        StringBuilder n = new StringBuilder("  node ").append(node.index()).append(' ').append(node.kind())
            .append(" '").append(node.stepName()).append('\'');
        for (Map.Entry<?, List<Integer>> e : node.consumers().entrySet()) {
          n.append(" -> ").append(e.getValue());
        }
        lines.add(n.toString());
      }
    }
    for (StreamPlan stream : plan.streams()) {
      lines.add("stream " + stream.name() + " " + stream.kind() + " " + stream.producers() + " -> "
          + stream.partitions() + " key coder " + describe(stream.keyCoder()));
    }
    return new PlanFingerprint(List.copyOf(lines));
  }

  /**
   * The first difference between the plan a checkpoint was written by ({@code this}) and the plan of
   * the job being started ({@code now}), as a sentence; null if they are equal.
   */
  public String firstDifference(PlanFingerprint now) {
    return firstDifference(now, false);
  }

  /**
   * As {@link #firstDifference(PlanFingerprint)}, but blind to the partitions of stages without a
   * source and of streams (producers and partitions): the differences a restore at another
   * {@code --parallelism} may have ({@link RescaledRestore}). Source stages must keep their
   * splits: their positions are per split.
   */
  public String firstDifferenceBesidesParallelism(PlanFingerprint now) {
    return firstDifference(now, true);
  }

  /** A line with the partition counts a rescale may change masked. */
  private static String masked(String line) {
    if (line.startsWith("stage ") && !line.contains(" source ")) {
      return line.replaceFirst("^(stage \\S+ x )\\d+", "$1*");
    }
    if (line.startsWith("stream ")) {
      return line.replaceFirst("^(stream \\S+ \\S+ )\\d+ -> \\d+", "$1* -> *");
    }
    return line;
  }

  private String firstDifference(PlanFingerprint now, boolean maskParallelism) {
    int n = Math.min(lines.size(), now.lines.size());
    for (int i = 0; i < n; i++) {
      boolean equal = maskParallelism ? masked(lines.get(i)).equals(masked(now.lines.get(i)))
          : lines.get(i).equals(now.lines.get(i));
      if (!equal) {
        return "the checkpoint has '" + lines.get(i).strip() + "' where the job has '" + now.lines.get(i).strip() + "'";
      }
    }
    if (lines.size() > n) {
      return "the checkpoint has '" + lines.get(n).strip() + "', which the job does not have";
    }
    if (now.lines.size() > n) {
      return "the job has '" + now.lines.get(n).strip() + "', which the checkpoint does not have";
    }
    return null;
  }

  private static String describe(Coder<?> coder) {
    if (coder == null) {
      return "none";
    }
    String text = coder.toString();
    return text.matches(".*@[0-9a-f]+$") ? coder.getClass().getName() : text;
  }
}
