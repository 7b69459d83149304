package dev.weir.runner.translation;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.annotations.Internal;

/**
 * The translated job: stages of fused operators cut at shuffles, and the intermediate streams
 * between them. Built once per run on the submitting thread; immutable afterwards and read by the
 * executor's threads.
 *
 * <p>Names: the plan is also where the job's samza-api names are made, once, for the executor,
 * the samza-api application and the Samza systems alike: a task is {@code stage-N-pP}
 * ({@link #taskName}), a source stage's input stream is {@code stage-N-source}
 * ({@link #sourceStreamName}) on system {@value #SOURCE_SYSTEM}, and an intermediate stream is
 * {@link StreamPlan#name()}.
 */
@Internal
public final class JobPlan {
  /** samza-api system name of source splits (one partition per split). */
  public static final String SOURCE_SYSTEM = "weir-source";


  private final List<StagePlan> stages;
  private final List<StreamPlan> streams;
  private final Map<String, MetricsContainerImpl> translationMetrics;

  JobPlan(List<StagePlan> stages, List<StreamPlan> streams, Map<String, MetricsContainerImpl> translationMetrics) {
    this.stages = List.copyOf(stages);
    this.streams = List.copyOf(streams);
    this.translationMetrics = Map.copyOf(translationMetrics);
  }

  /** The samza-api task name of partition {@code partition} of {@code stage}: {@code stage-N-pP}. */
  public static String taskName(StagePlan stage, int partition) {
    return stage.name() + "-p" + partition;
  }

  /** The samza-api stream name of a source stage's input: {@code stage-N-source}. */
  public static String sourceStreamName(StagePlan stage) {
    return stage.name() + "-source";
  }

  /** Metrics reported by user code during translation (source splitting), per step name. */
  public Map<String, MetricsContainerImpl> translationMetrics() {
    return translationMetrics;
  }

  /** Stages in topological order (a stage only reads streams of earlier stages). */
  public List<StagePlan> stages() {
    return stages;
  }

  /** Intermediate streams. */
  public List<StreamPlan> streams() {
    return Collections.unmodifiableList(streams);
  }

  /**
   * Whether the job reads a {@code TestStream}: it then runs on a manual processing-time clock
   * and tracks quiescence (see {@code time.Quiescence}).
   */
  public boolean hasTestStream() {
    for (StagePlan stage : stages) {
      if (stage.source() instanceof SourceSpec.Test) {
        return true;
      }
    }
    return false;
  }

  /** Whether the job reads an unbounded source (a streaming job, whatever {@code --streaming} says). */
  public boolean readsUnboundedSource() {
    for (StagePlan stage : stages) {
      if (stage.source() instanceof SourceSpec.Unbounded) {
        return true;
      }
    }
    return false;
  }

  /** Total number of tasks over all stages. */
  public int taskCount() {
    int n = 0;
    for (StagePlan stage : stages) {
      n += stage.partitions();
    }
    return n;
  }

  /** A human-readable description, one line per stage, node and stream. */
  public String describe() {
    StringBuilder b = new StringBuilder();
    b.append("Weir job plan: ").append(stages.size()).append(" stage(s), ")
        .append(streams.size()).append(" stream(s), ").append(taskCount()).append(" task(s)\n");
    for (StagePlan stage : stages) {
      b.append("  ").append(stage.name()).append(" [").append(stage.partitions()).append(" partition(s)]");
      if (stage.source() != null) {
        b.append(" source: ").append(stage.source().describe());
      }
      for (StagePlan.Input input : stage.inputs()) {
        b.append(" reads ").append(input.stream().name()).append(" -> node ").append(input.entryNode());
      }
      b.append('\n');
      for (NodeSpec node : stage.nodes()) {
        b.append("    ").append(node.index()).append(": ").append(node.kind()).append(" '")
            .append(node.stepName()).append("'");
        for (Map.Entry<?, List<Integer>> e : node.consumers().entrySet()) {
          if (!e.getValue().isEmpty()) {
            b.append(" -> ").append(e.getValue());
          }
        }
        b.append('\n');
      }
    }
    for (StreamPlan stream : streams) {
      b.append("  stream ").append(stream.name()).append(": ").append(stream.kind()).append(' ')
          .append(stream.producer().name()).append(" (").append(stream.producers()).append(" producer(s)) -> ")
          .append(stream.consumer().name()).append(" (").append(stream.partitions()).append(" partition(s))\n");
    }
    return b.toString();
  }

  /** The plan as a Graphviz DOT digraph: one cluster per stage, dashed edges for streams. */
  public String toDot() {
    StringBuilder b = new StringBuilder("digraph weir {\n  rankdir=LR;\n  node [shape=box];\n");
    for (StagePlan stage : stages) {
      b.append("  subgraph cluster_").append(stage.id()).append(" {\n    label=\"")
          .append(stage.name()).append(" x").append(stage.partitions()).append("\";\n");
      for (NodeSpec node : stage.nodes()) {
        b.append("    n").append(stage.id()).append('_').append(node.index()).append(" [label=\"")
            .append(node.kind()).append("\\n").append(escape(node.stepName())).append("\"];\n");
      }
      b.append("  }\n");
      for (NodeSpec node : stage.nodes()) {
        for (List<Integer> targets : node.consumers().values()) {
          for (int t : targets) {
            b.append("  n").append(stage.id()).append('_').append(node.index()).append(" -> n")
                .append(stage.id()).append('_').append(t).append(";\n");
          }
        }
      }
    }
    for (StreamPlan stream : streams) {
      StagePlan producer = stream.producer();
      for (NodeSpec node : producer.nodes()) {
        if (node.writesTo() == stream) {
          for (StagePlan.Input input : stream.consumer().inputs()) {
            if (input.stream() == stream) {
              b.append("  n").append(producer.id()).append('_').append(node.index()).append(" -> n")
                  .append(stream.consumer().id()).append('_').append(input.entryNode())
                  .append(" [style=dashed,label=\"").append(stream.kind()).append("\"];\n");
            }
          }
        }
      }
    }
    return b.append("}\n").toString();
  }

  private static String escape(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }
}
