package dev.weir.runner;

import dev.weir.runner.executor.JobExecutor;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.PipelineTranslator;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsValidator;
import org.apache.beam.sdk.runners.PTransformOverride;
import org.apache.beam.runners.core.SplittableParDoViaKeyedWorkItems;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.reflect.DoFnSignature;
import org.apache.beam.sdk.transforms.reflect.DoFnSignatures;
import org.apache.beam.sdk.util.construction.PTransformTranslation;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.util.construction.DeduplicatedFlattenFactory;
import org.apache.beam.sdk.util.construction.PTransformMatchers;
import org.apache.beam.sdk.util.construction.SplittableParDo;
import org.apache.beam.sdk.util.construction.SplittableParDoNaiveBounded;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a Beam pipeline on Weir's embedded Samza-style executor.
 *
 * <p>{@link #run} (1) replaces SDF-wrapped reads by primitive reads and applies runners-core's
 * overrides (bounded splittable DoFns expanded naively, unbounded ones into keyed work items with
 * checkpoints, duplicate Flatten inputs made distinct),
 * (2) translates the pipeline into a {@link JobPlan} of fused stages, logging it as text (INFO)
 * and DOT (DEBUG), failing with {@link UnsupportedOperationException} on a transform it cannot run,
 * and (3) starts the executor and returns at once; use
 * {@link WeirPipelineResult#waitUntilFinish()} to wait.
 *
 * <p>Threading: {@code run} may be called from any thread; each call runs an independent job.
 */
public final class WeirRunner extends PipelineRunner<WeirPipelineResult> {
  private static final Logger LOG = LoggerFactory.getLogger(WeirRunner.class);

  private final WeirPipelineOptions options;

  private WeirRunner(WeirPipelineOptions options) {
    this.options = options;
  }

  /** Creates a runner from options; called by Beam for {@code --runner=WeirRunner}. */
  public static WeirRunner fromOptions(PipelineOptions options) {
    return new WeirRunner(PipelineOptionsValidator.validate(WeirPipelineOptions.class, options));
  }

  /** The options this runner runs with. */
  public WeirPipelineOptions options() {
    return options;
  }

  @Override
  public WeirPipelineResult run(Pipeline pipeline) {
    JobPlan plan = translate(pipeline, options);
    LOG.info("{}", plan.describe());
    if (LOG.isDebugEnabled()) {
      LOG.debug("Weir job plan (DOT):\n{}", plan.toDot());
    }
    MetricsEnvironment.setMetricsSupported(options.getMetricsEnabled());
    JobExecutor executor = new JobExecutor(plan, options);
    executor.start();
    return new WeirPipelineResult(executor);
  }

  /**
   * Applies Weir's overrides to {@code pipeline} (mutating it) and translates it.
   *
   * @throws UnsupportedOperationException naming the first transform Weir cannot run
   */
  public static JobPlan translate(Pipeline pipeline, WeirPipelineOptions options) {
    SplittableParDo.convertReadBasedSplittableDoFnsToPrimitiveReadsIfNecessary(pipeline);
    rejectBoundedSplittableBundleFinalization(pipeline);
    pipeline.replaceAll(overrides());
    return PipelineTranslator.translate(pipeline, options);
  }

  /**
   * Bounded splittable DoFns run through {@link SplittableParDoNaiveBounded}, which processes a
   * whole restriction within one call and gives the DoFn no {@code BundleFinalizer} (it throws);
   * fail at translation with the transform's name instead of at run time.
   */
  private static void rejectBoundedSplittableBundleFinalization(Pipeline pipeline) {
    pipeline.traverseTopologically(new Pipeline.PipelineVisitor.Defaults() {
      @Override
      public void visitPrimitiveTransform(TransformHierarchy.Node node) {
        if (node.getTransform() instanceof ParDo.MultiOutput<?, ?> parDo) {
          DoFnSignature signature = DoFnSignatures.getSignature(parDo.getFn().getClass());
          if (signature.processElement().isSplittable()
              && signature.isBoundedPerElement() == PCollection.IsBounded.BOUNDED
              && signature.processElement().extraParameters().stream()
                  .anyMatch(p -> p instanceof DoFnSignature.Parameter.BundleFinalizerParameter)) {
            throw new UnsupportedOperationException("WeirRunner cannot run transform '" + node.getFullName()
                + "' (URN " + PTransformTranslation.PAR_DO_TRANSFORM_URN + "): a bounded splittable DoFn that takes a "
                + "BundleFinalizer is not supported (bounded splittable DoFns run through SplittableParDoNaiveBounded, "
                + "which has no bundle finalizer)");
          }
        }
      }
    });
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  private static List<PTransformOverride> overrides() {
    return List.of(
        PTransformOverride.of(PTransformMatchers.splittableParDo(), new SplittableParDo.OverrideFactory()),
        PTransformOverride.of(PTransformMatchers.splittableProcessKeyedBounded(),
            new SplittableParDoNaiveBounded.OverrideFactory()),
        PTransformOverride.of(PTransformMatchers.splittableProcessKeyedUnbounded(),
            new SplittableParDoViaKeyedWorkItems.OverrideFactory()),
        PTransformOverride.of(PTransformMatchers.flattenWithDuplicateInputs(), DeduplicatedFlattenFactory.create()));
  }
}
