package dev.weir.runner.translation;

import dev.weir.runner.WeirSettings;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.util.construction.PTransformTranslation;
import org.apache.beam.sdk.util.construction.SplittableParDo;

/**
 * Walks a (already overridden) Beam pipeline in topological order and builds the {@link JobPlan}:
 * each primitive transform is translated by the {@link TransformTranslator} registered for its
 * URN ({@link #TRANSLATORS}), over one {@link TranslationContext} that keeps the stages, streams
 * and producers built so far. One composite is translated whole: a {@code Combine.perKey} that may
 * be lifted ({@link CombineLiftingTranslator}).
 *
 * <p>Fusion rule: a transform joins the stage that produces its input, except where data must be
 * redistributed. A GroupByKey ({@link GroupByKeyTranslator}), a stateful ParDo
 * ({@link StatefulParDoTranslator}), a lifted Combine.perKey's merge and a splittable DoFn's
 * {@code ProcessElements} ({@link SplittableProcessTranslator}) start a stage of
 * {@code --parallelism} partitions behind a SHUFFLE (key-hash partitioned); a Flatten whose inputs
 * come from different stages starts a stage fed by one FORWARD stream per input
 * ({@link FlattenTranslator}); a ParDo with side inputs starts a stage fed by a FORWARD stream and
 * one BROADCAST stream per view ({@link ParDoTranslator}, {@link ViewBroadcasts}). Sources
 * (Impulse, Read, TestStream) start stages with one partition per split.
 *
 * <p>Anything else fails here, at {@code run()}, with an {@link UnsupportedOperationException}
 * naming the transform's full name and URN.
 *
 * <p>Threading: used once per run, on the thread that called {@code run()}; the registry is
 * immutable and its translators stateless.
 */
@Internal
public final class PipelineTranslator extends Pipeline.PipelineVisitor.Defaults {

  /**
   * The translator of each primitive transform Weir runs, by URN. Two of them are runners-core's
   * (the keyed-work-items expansion of splittable DoFns); the others are Beam's standard URNs.
   */
  static final Map<String, TransformTranslator> TRANSLATORS = Map.of(
      PTransformTranslation.IMPULSE_TRANSFORM_URN, new ImpulseTranslator(),
      PTransformTranslation.READ_TRANSFORM_URN, new ReadTranslator(),
      PTransformTranslation.TEST_STREAM_TRANSFORM_URN, new TestStreamTranslator(),
      PTransformTranslation.PAR_DO_TRANSFORM_URN, new ParDoTranslator(),
      PTransformTranslation.GROUP_BY_KEY_TRANSFORM_URN, new GroupByKeyTranslator(),
      PTransformTranslation.FLATTEN_TRANSFORM_URN, new FlattenTranslator(),
      PTransformTranslation.ASSIGN_WINDOWS_TRANSFORM_URN, new WindowAssignTranslator(),
      PTransformTranslation.CREATE_VIEW_TRANSFORM_URN, new CreateViewTranslator(),
      SplittableParDo.SPLITTABLE_GBKIKWI_URN, new KeyedWorkItemsTranslator(),
      SplittableParDo.SPLITTABLE_PROCESS_URN, new SplittableProcessTranslator());

  private final TranslationContext context;

  private PipelineTranslator(WeirSettings settings, PlannedSplits planned) {
    this.context = new TranslationContext(settings, planned);
  }

  /**
   * Translates {@code pipeline} with {@code settings} ({@code --parallelism}, bundle limits, and
   * the options handed to sources while they split).
   *
   * @throws UnsupportedOperationException naming the first transform Weir cannot run and its URN
   */
  public static JobPlan translate(Pipeline pipeline, WeirSettings settings) {
    return translate(pipeline, settings, PlannedSplits.NONE);
  }

  /**
   * Translates {@code pipeline} as {@link #translate(Pipeline, WeirSettings)} does, but each Read
   * that {@code planned} gives splits for gets those splits (one partition per split) instead of
   * splitting its source. The pipeline must already be overridden (a second translation of a
   * pipeline that {@code WeirRunner.translate} translated once).
   *
   * @throws IllegalStateException naming the step if {@code planned} gives a bounded read unbounded
   *     splits or the other way round
   * @throws UnsupportedOperationException naming the first transform Weir cannot run and its URN
   */
  public static JobPlan translate(Pipeline pipeline, WeirSettings settings, PlannedSplits planned) {
    PipelineTranslator translator = new PipelineTranslator(settings, planned);
    pipeline.traverseTopologically(translator);
    return translator.context.plan();
  }

  @Override
  public CompositeBehavior enterCompositeTransform(TransformHierarchy.Node node) {
    if (node.getTransform() != null
        && PTransformTranslation.COMBINE_PER_KEY_TRANSFORM_URN.equals(urnOf(node.getTransform()))
        && CombineLiftingTranslator.tryTranslate(node, context)) {
      return CompositeBehavior.DO_NOT_ENTER_TRANSFORM;
    }
    return CompositeBehavior.ENTER_TRANSFORM;
  }

  @Override
  public void visitPrimitiveTransform(TransformHierarchy.Node node) {
    PTransform<?, ?> transform = node.getTransform();
    String urn = urnOf(transform);
    TransformTranslator translator = urn == null ? null : TRANSLATORS.get(urn);
    if (translator == null) {
      throw TranslationContext.unsupported(node, "no translation for " + transform.getClass().getName());
    }
    translator.translate(node, context);
  }

  /**
   * The URN of {@code transform}: Beam's registered one, or for the two reads Beam registers none
   * for ({@code Read.Bounded}, {@code Read.Unbounded}, normally replaced by primitive reads before
   * translation) the read URN; null if it has none.
   */
  static String urnOf(PTransform<?, ?> transform) {
    String urn = null;
    try {
      urn = PTransformTranslation.urnForTransformOrNull(transform);
    } catch (RuntimeException ignored) {
      // no URN known for this class
    }
    if (urn == null && (transform instanceof Read.Bounded<?> || transform instanceof Read.Unbounded<?>)) {
      return PTransformTranslation.READ_TRANSFORM_URN;
    }
    return urn;
  }
}
