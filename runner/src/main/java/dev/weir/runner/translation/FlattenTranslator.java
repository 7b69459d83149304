package dev.weir.runner.translation;

import dev.weir.runner.operators.PassThroughOperator;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.values.PCollection;

/**
 * {@code Flatten.PCollections}: with no input, a source stage that is empty at once; with all
 * inputs from one stage, a pass-through node fused into it; otherwise a new stage (as many
 * partitions as the widest input stage) whose pass-through node reads one FORWARD stream per
 * input.
 */
final class FlattenTranslator implements TransformTranslator {
  @Override
  public void translate(TransformHierarchy.Node node, TranslationContext context) {
    List<TranslationContext.Producer> inputs = new ArrayList<>();
    for (PCollection<?> pc : node.getInputs().values()) {
      inputs.add(context.producerOf(pc, node));
    }
    if (inputs.isEmpty()) {
      context.sourceStage(node, new SourceSpec.Empty(), "Flatten");
      return;
    }
    StagePlan common = inputs.get(0).stage();
    int partitions = 1;
    for (TranslationContext.Producer p : inputs) {
      if (p.stage() != common) {
        common = null;
      }
      partitions = Math.max(partitions, p.stage().partitions());
    }
    if (common != null) {
      NodeSpec spec = common.addOperator(node.getFullName(), "Flatten", PassThroughOperator::new);
      for (TranslationContext.Producer p : inputs) {
        TranslationContext.connect(p, spec);
      }
      context.registerOutputs(node, common, spec);
      return;
    }
    StagePlan stage = context.newStage(partitions, null);
    NodeSpec spec = stage.addOperator(node.getFullName(), "Flatten", PassThroughOperator::new);
    for (TranslationContext.Producer p : inputs) {
      stage.addInput(context.feed(p, StreamPlan.Kind.FORWARD, stage, null, node), spec.index());
    }
    context.registerOutputs(node, stage, spec);
  }
}
