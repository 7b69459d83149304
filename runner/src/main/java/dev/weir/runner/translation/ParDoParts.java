package dev.weir.runner.translation;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.DoFnSchemaInformation;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.PValue;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowingStrategy;

/**
 * What a ParDo's operator is built from, read once from its transform node: the DoFn (the
 * prototype each task deserializes a copy of), its output tags and coders, its main input's coder
 * and windowing, its schema information and its side inputs.
 *
 * @param input the main input PCollection
 * @param fn the DoFn as the user wrote it
 * @param mainTag the main output's tag
 * @param additionalTags the other outputs' tags
 * @param inputCoder the main input's coder
 * @param outputCoders the coder of every output, by tag
 * @param windowing the main input's windowing strategy
 * @param schema the DoFn's schema information (Beam's {@code @FieldAccess} and row conversions)
 * @param sideInputMapping side inputs by the name a {@code @SideInput} parameter uses
 * @param views the side inputs, in the order their BROADCAST streams are numbered
 */
@SuppressWarnings("rawtypes")
record ParDoParts(PCollection<?> input, DoFn fn, TupleTag mainTag, List<TupleTag<?>> additionalTags,
    Coder inputCoder, Map<TupleTag<?>, Coder<?>> outputCoders, WindowingStrategy<?, ?> windowing,
    DoFnSchemaInformation schema, Map<String, PCollectionView<?>> sideInputMapping, List<PCollectionView<?>> views) {

  /**
   * Reads the parts of the {@code ParDo.MultiOutput} at {@code node}: the schema information and the
   * side inputs by name as Beam's {@code ParDoTranslation} puts them into the transform's proto
   * form, read from the transform itself (asking {@code ParDoTranslation} for them builds that
   * proto, serializing the DoFn and every coder, twice per ParDo at every job start).
   *
   * @throws UnsupportedOperationException naming the transform if it has no or several main inputs
   */
  static ParDoParts of(TransformHierarchy.Node node, ParDo.MultiOutput<?, ?> parDo) {
    PCollection<?> input = mainInput(node, parDo);
    Map<TupleTag<?>, Coder<?>> outputCoders = new HashMap<>();
    for (Map.Entry<TupleTag<?>, PCollection<?>> e : node.getOutputs().entrySet()) {
      outputCoders.put(e.getKey(), e.getValue().getCoder());
    }
    return new ParDoParts(input, parDo.getFn(), parDo.getMainOutputTag(),
        new ArrayList<>(parDo.getAdditionalOutputTags().getAll()), input.getCoder(), outputCoders,
        input.getWindowingStrategy(), ParDo.getDoFnSchemaInformation(parDo.getFn(), input),
        parDo.getSideInputs(), new ArrayList<>(parDo.getSideInputs().values()));
  }

  /** The one input of a ParDo that is not a side input. */
  private static PCollection<?> mainInput(TransformHierarchy.Node node, ParDo.MultiOutput<?, ?> parDo) {
    Map<TupleTag<?>, PValue> additional = parDo.getAdditionalInputs();
    PCollection<?> main = null;
    for (Map.Entry<TupleTag<?>, PCollection<?>> e : node.getInputs().entrySet()) {
      if (!additional.containsKey(e.getKey())) {
        if (main != null) {
          throw TranslationContext.unsupported(node, "more than one main input");
        }
        main = e.getValue();
      }
    }
    if (main == null) {
      throw TranslationContext.unsupported(node, "no main input");
    }
    return main;
  }
}
