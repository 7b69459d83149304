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

/**
 * What a checkpoint must agree with to be restored into a job: the version of the byte format of
 * its state ({@link ContainerState#CELL_LAYOUT_VERSION}; checkpoints written before the line
 * existed are version 1, and differ in their first line), the number of key groups
 * ({@code --maxParallelism}), one line per stage (name,
 * partitions, inputs), per fused node (kind, PTransform name, consumers; then, for a node with
 * keyed state, a line with its {@linkplain NodeSpec#stateSchema() state schema}) and per stream
 * (kind, producers, partitions, key coder). The number of containers is not part of it: a checkpoint
 * restores into any number of containers ({@link RescaledRestore}). Two
 * plans restore into each other file for file when their lines are equal ({@link #firstDifference}
 * names the first line that is not); plans of other parallelism or shape restore through
 * {@link RescaledRestore}, matching state to PTransforms by name ({@link PlanUpgrade}), which reads
 * the checkpoint's plan back from its lines ({@link #shape()}).
 *
 * <p>Coders are described by {@link NodeSpec#describeCoder} (their {@code toString()} without
 * identity hashes).
 *
 * <p>Threading: immutable.
 *
 * @param lines the plan's description, in plan order
 */
@Internal
public record PlanFingerprint(List<String> lines) {
  /** The first line's start, before the layout version. */
  private static final String LAYOUT_LINE = "state cell layout ";
  /** The start of the line after a node line that gives the node's state schema. */
  private static final String STATE_LINE = "    state ";

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
    lines.add(MAX_PARALLELISM_LINE + keyGroups.maxParallelism());
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
        if (node.stateSchema() != null) {
          lines.add(STATE_LINE + node.stateSchema());
        }
      }
    }
    for (StreamPlan stream : plan.streams()) {
      lines.add("stream " + stream.name() + " " + stream.kind() + " " + stream.producers() + " -> "
          + stream.partitions() + " key coder " + NodeSpec.describeCoder(stream.keyCoder()));
    }
    return new PlanFingerprint(List.copyOf(lines));
  }

  /**
   * The first difference between the plan a checkpoint was written by ({@code this}) and the plan of
   * the job being started ({@code now}), as a sentence; null if they are equal.
   */
  public String firstDifference(PlanFingerprint now) {
    int n = Math.min(lines.size(), now.lines.size());
    for (int i = 0; i < n; i++) {
      if (!lines.get(i).equals(now.lines.get(i))) {
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

  /** The key groups line's value ({@code --maxParallelism}), or 0 if the fingerprint has none. */
  public int maxParallelism() {
    for (String line : lines) {
      if (line.startsWith(MAX_PARALLELISM_LINE)) {
        return Integer.parseInt(line.substring(MAX_PARALLELISM_LINE.length()).strip());
      }
    }
    return 0;
  }

  /**
   * The plan these lines describe, read back: its stages, their nodes and inputs, and the state
   * schemas of nodes with keyed state.
   *
   * @throws IllegalStateException naming the line if a stage, node or stream line cannot be read
   */
  public Shape shape() {
    List<Shape.Stage> stages = new ArrayList<>();
    Map<String, String> schemas = new java.util.LinkedHashMap<>();
    Map<String, Integer> producers = new java.util.HashMap<>();
    String lastNode = null;
    List<String> nodes = null;
    for (String line : lines) {
      java.util.regex.Matcher m;
      if ((m = STAGE.matcher(line)).matches()) {
        List<String> inputs = new ArrayList<>();
        java.util.regex.Matcher r = READS.matcher(m.group(5));
        while (r.find()) {
          inputs.add(r.group(1));
        }
        nodes = new ArrayList<>();
        stages.add(new Shape.Stage(m.group(1), Integer.parseInt(m.group(2)), m.group(3) != null, inputs, nodes));
      } else if ((m = NODE.matcher(line)).matches() && nodes != null) {
        String kind = m.group(2);
        boolean writer = java.util.Arrays.stream(StreamPlan.Kind.values()).anyMatch(k -> k.writerKind().equals(kind));
        lastNode = writer ? null : m.group(3);
        nodes.add(lastNode);
      } else if (line.startsWith(STATE_LINE) && lastNode != null) {
        schemas.put(lastNode, line.substring(STATE_LINE.length()));
      } else if ((m = STREAM.matcher(line)).matches()) {
        producers.put(m.group(1), Integer.parseInt(m.group(2)));
      } else if (line.startsWith("stage ") || line.startsWith("  node ") || line.startsWith("stream ")) {
        throw new IllegalStateException("cannot read the plan line '" + line.strip() + "'");
      }
    }
    return new Shape(List.copyOf(stages), schemas, producers);
  }

  /**
   * A plan as its fingerprint describes it: what a restore needs to match the checkpoint's state to
   * the PTransforms of another plan. Immutable.
   *
   * @param stages the stages, in plan order
   * @param schemas per PTransform full name, the state schema of its node, for nodes with keyed state
   * @param producers per stream name, the number of tasks writing it
   */
  public record Shape(List<Stage> stages, Map<String, String> schemas, Map<String, Integer> producers) {
    /**
     * A stage.
     *
     * @param name e.g. {@code stage-3}
     * @param partitions its tasks
     * @param source whether it reads a source (its node 0 is the source's PTransform)
     * @param inputs the names of the streams it reads, in input order
     * @param nodes per node index, its PTransform's full name; null for a writer node (into a stream)
     */
    public record Stage(String name, int partitions, boolean source, List<String> inputs, List<String> nodes) {}

    /** The stage named {@code name}, or null. */
    public Stage stage(String name) {
      for (Stage stage : stages) {
        if (stage.name().equals(name)) {
          return stage;
        }
      }
      return null;
    }
  }

  /**
   * A stream's name without its plan-order prefix ({@code s<N>-}): what names it across two plans
   * of one pipeline, where a stream added before it shifts its number.
   */
  public static String streamIdentity(String streamName) {
    return streamName.replaceFirst("^s\\d+-", "");
  }

  private static final String MAX_PARALLELISM_LINE = "max parallelism ";
  private static final java.util.regex.Pattern STAGE =
      java.util.regex.Pattern.compile("stage (\\S+) x (\\d+)( source (\\S*))?((?: reads \\S+ -> node \\d+)*)");
  private static final java.util.regex.Pattern READS = java.util.regex.Pattern.compile(" reads (\\S+) -> node \\d+");
  private static final java.util.regex.Pattern NODE =
      java.util.regex.Pattern.compile("  node (\\d+) (\\S+) '(.*)'((?: -> \\[[\\d, ]*\\])*)");
  private static final java.util.regex.Pattern STREAM = java.util.regex.Pattern.compile("stream (\\S+) \\S+ (\\d+) -> .*");

}
