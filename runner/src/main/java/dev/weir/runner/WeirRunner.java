package dev.weir.runner;

import dev.weir.runner.checkpoint.JobRestore;
import dev.weir.runner.executor.JobExecutor;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.PipelineTranslator;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsValidator;
import org.apache.beam.sdk.runners.AppliedPTransform;
import org.apache.beam.sdk.runners.PTransformOverride;
import org.apache.beam.runners.core.SplittableParDoViaKeyedWorkItems;
import org.apache.beam.sdk.transforms.reflect.DoFnSignature;
import org.apache.beam.sdk.transforms.reflect.DoFnSignatures;
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
 * <p>{@link #run} (0) checks that the classpath's Beam release is the one this Weir build is for
 * ({@link BeamVersionCheck}) and the options once into {@link WeirSettings} (a value out of range
 * fails here, naming the option), (1) replaces SDF-wrapped reads by primitive reads and applies runners-core's
 * overrides (bounded splittable DoFns expanded naively, unbounded ones, and bounded ones taking a
 * {@code BundleFinalizer}, into keyed work items with checkpoints; duplicate Flatten inputs made
 * distinct),
 * (2) translates the pipeline into a {@link JobPlan} of fused stages, logging it as text (INFO)
 * and DOT (DEBUG), failing with {@link UnsupportedOperationException} on a transform it cannot run,
 * and (3) starts the executor and returns at once; use
 * {@link WeirPipelineResult#waitUntilFinish()} to wait. With a Samza {@code --executionEnvironment},
 * step (3) goes to the {@link ExecutionEnvironmentProvider} found on the classpath (looked up
 * before translating, so a missing artifact fails first), which checks the plan and runs it.
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

  /**
   * Checks the options ({@link WeirSettings#from}), translates {@code pipeline} and starts it.
   *
   * @throws IllegalStateException naming both versions when the pipeline's Beam release is not
   *     the one this Weir build is for
   * @throws IllegalArgumentException naming an option whose value is out of range
   * @throws UnsupportedOperationException naming the first transform Weir cannot run
   */
  @Override
  public WeirPipelineResult run(Pipeline pipeline) {
    BeamVersionCheck.check();
    WeirSettings checked = WeirSettings.from(options);
    LOG.debug("Weir settings: {}", checked.describe());
    ExecutionEnvironmentProvider environment = checked.executionEnvironment().isSamza()
        ? ExecutionEnvironmentProvider.find(checked.executionEnvironment(), WeirRunner.class.getClassLoader())
        : null;
    // A job resuming a checkpoint taken at another parallelism splits its sources as that job did.
    WeirSettings settings = environment == null ? JobRestore.withResumedSourceParallelism(checked) : checked;
    JobPlan plan = translate(pipeline, settings);
    LOG.info("{}", plan.describe());
    if (LOG.isDebugEnabled()) {
      LOG.debug("Weir job plan (DOT):\n{}", plan.toDot());
    }
    MetricsEnvironment.setMetricsSupported(settings.metricsEnabled());
    if (environment != null) {
      environment.check(plan, settings);
      return environment.run(plan, settings, planned -> PipelineTranslator.translate(pipeline, settings, planned));
    }
    JobExecutor executor = new JobExecutor(plan, settings);
    executor.start();
    return new WeirPipelineResult(executor);
  }

  /**
   * Checks {@code options}, applies Weir's overrides to {@code pipeline} (mutating it) and
   * translates it.
   *
   * @throws IllegalArgumentException naming an option whose value is out of range
   * @throws UnsupportedOperationException naming the first transform Weir cannot run
   */
  public static JobPlan translate(Pipeline pipeline, WeirPipelineOptions options) {
    return translate(pipeline, WeirSettings.from(options));
  }

  /**
   * Applies Weir's overrides to {@code pipeline} (mutating it) and translates it with
   * {@code settings}.
   *
   * @throws UnsupportedOperationException naming the first transform Weir cannot run
   */
  public static JobPlan translate(Pipeline pipeline, WeirSettings settings) {
    SplittableParDo.convertReadBasedSplittableDoFnsToPrimitiveReadsIfNecessary(pipeline);
    pipeline.replaceAll(overrides());
    return PipelineTranslator.translate(pipeline, settings);
  }

  /**
   * Matches the {@code ProcessKeyedElements} of a bounded splittable DoFn that takes a
   * {@code BundleFinalizer} (in {@code @ProcessElement}, {@code @StartBundle} or
   * {@code @FinishBundle}). Such a DoFn expects its callbacks to run while it still works (it may
   * checkpoint until one has run), so it must not go through {@link SplittableParDoNaiveBounded},
   * which processes a whole restriction in one call and has no finalizer; it takes the keyed-work-
   * items path instead, whose operator checkpoints, commits and finalizes between calls.
   */
  static boolean isBoundedSplittableTakingABundleFinalizer(AppliedPTransform<?, ?, ?> application) {
    if (!(application.getTransform() instanceof SplittableParDo.ProcessKeyedElements<?, ?, ?, ?> keyed)) {
      return false;
    }
    DoFnSignature signature = DoFnSignatures.getSignature(keyed.getFn().getClass());
    return signature.isBoundedPerElement() == PCollection.IsBounded.BOUNDED && takesBundleFinalizer(signature);
  }

  /** Whether any of the DoFn's process or bundle methods takes a {@code BundleFinalizer}. */
  private static boolean takesBundleFinalizer(DoFnSignature signature) {
    return hasBundleFinalizer(signature.processElement())
        || (signature.startBundle() != null && hasBundleFinalizer(signature.startBundle()))
        || (signature.finishBundle() != null && hasBundleFinalizer(signature.finishBundle()));
  }

  private static boolean hasBundleFinalizer(DoFnSignature.MethodWithExtraParameters method) {
    return method.extraParameters().stream()
        .anyMatch(p -> p instanceof DoFnSignature.Parameter.BundleFinalizerParameter);
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  private static List<PTransformOverride> overrides() {
    return List.of(
        PTransformOverride.of(PTransformMatchers.splittableParDo(), new SplittableParDo.OverrideFactory()),
        // before the naive expansion, which would otherwise take these bounded SDFs too
        PTransformOverride.of(WeirRunner::isBoundedSplittableTakingABundleFinalizer,
            new SplittableParDoViaKeyedWorkItems.OverrideFactory()),
        PTransformOverride.of(PTransformMatchers.splittableProcessKeyedBounded(),
            new SplittableParDoNaiveBounded.OverrideFactory()),
        PTransformOverride.of(PTransformMatchers.splittableProcessKeyedUnbounded(),
            new SplittableParDoViaKeyedWorkItems.OverrideFactory()),
        PTransformOverride.of(PTransformMatchers.flattenWithDuplicateInputs(), DeduplicatedFlattenFactory.create()));
  }
}
