package dev.weir.runner.operators;

import org.apache.beam.sdk.annotations.Internal;

import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.runners.core.PushbackSideInputDoFnRunner;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.reflect.DoFnInvoker;
import org.apache.beam.sdk.transforms.reflect.DoFnInvokers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The life of one task's instance of a user DoFn, shared by the stateless, stateful and splittable
 * ParDo operators: {@code @Setup} at open ({@link #setUp}), bundles ({@link #startBundle},
 * {@link #finishBundle}: the runner's {@code @StartBundle/@FinishBundle}, then the bundle's
 * finalization callbacks handed to {@link BundleFinalizers}), and {@code @Teardown} at close
 * ({@link #tearDown}).
 *
 * <p>Bundles go through runners-core's pushback runner when the DoFn has side inputs (it must see
 * each bundle start to forget which windows were not ready), else through the plain runner; the
 * operator registers both with {@link #runners} and keeps calling the right one per element itself
 * (no extra call layer per element).
 *
 * <p>Teardown: a failing {@code @Teardown} is logged, not thrown: by then the DoFn's output is
 * complete, and Beam allows runners to skip teardown altogether.
 *
 * <p>Steps: every method runs inside the executor's bracket around the operator's call, so the
 * DoFn's step (metrics container, span) is current; nothing here scopes anything.
 *
 * <p>Threading: the operator's container thread only; set-up and teardown on the same thread.
 */
@Internal
public final class DoFnLifecycle {
  private static final Logger LOG = LoggerFactory.getLogger(DoFnLifecycle.class);

  private final String stepName;
  private final BundleFinalizers.Finalizer finalizer;
  private DoFnInvoker<?, ?> invoker;
  private DoFnRunner<?, ?> runner;
  /** The runner's pushback wrapper when the DoFn has side inputs, else null. */
  private PushbackSideInputDoFnRunner<?, ?> pushbackRunner;

  /** Takes the operator's step name and a bundle finalizer of its own from {@code context}. */
  public DoFnLifecycle(OperatorContext context) {
    this.stepName = context.stepName();
    this.finalizer = context.newFinalizer();
  }

  /** The finalizer to hand runners-core as the DoFn's {@code BundleFinalizer}. */
  public BundleFinalizers.Finalizer finalizer() {
    return finalizer;
  }

  /** Runs {@code @Setup} of {@code fn} (this task's own copy) and returns it. */
  @SuppressWarnings("unchecked")
  public <FnT extends DoFn<?, ?>> FnT setUp(FnT fn, PipelineOptions options) {
    invoker = DoFnInvokers.tryInvokeSetupFor((DoFn<Object, Object>) fn, options);
    return fn;
  }

  /**
   * The runners that bundles start and finish through: {@code pushbackRunner} if not null, else
   * {@code runner}.
   *
   * @param runner the DoFn's runner (may be null if {@code pushbackRunner} is not)
   * @param pushbackRunner the pushback wrapper of the runner, or null without side inputs
   */
  public void runners(DoFnRunner<?, ?> runner, PushbackSideInputDoFnRunner<?, ?> pushbackRunner) {
    this.runner = runner;
    this.pushbackRunner = pushbackRunner;
  }

  /** {@code @StartBundle}. */
  public void startBundle() {
    if (pushbackRunner != null) {
      pushbackRunner.startBundle();
    } else {
      runner.startBundle();
    }
  }

  /** {@code @FinishBundle}; then the bundle's finalization callbacks wait for the next commit. */
  public void finishBundle() {
    if (pushbackRunner != null) {
      pushbackRunner.finishBundle();
    } else {
      runner.finishBundle();
    }
    finalizer.bundleFinished();
  }

  /** {@code @Teardown}, once, if set up; a failure is logged. Must not throw. */
  public void tearDown() {
    DoFnInvoker<?, ?> setUp = invoker;
    invoker = null;
    if (setUp == null) {
      return;
    }
    try {
      setUp.invokeTeardown();
    } catch (RuntimeException e) {
      LOG.warn("Teardown of the DoFn of {} failed", stepName, e);
    }
  }
}
