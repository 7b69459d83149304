package dev.weir.runner.operators;

import java.util.List;
import java.util.Map;
import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.runners.core.DoFnRunners;
import org.apache.beam.runners.core.NullSideInputReader;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.DoFnSchemaInformation;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.util.WindowedValueMultiReceiver;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.joda.time.Instant;

/**
 * A stateless ParDo whose {@code @ProcessElement} runs on the container's worker threads, up to
 * {@code --taskMaxConcurrency} elements at a time per task, so that a DoFn that waits on a service
 * (an HTTP call, a database lookup) does not stall every task of its container. The second gear of
 * {@link ParDoOperator}: same translation, same runners-core runner per DoFn instance; chosen by
 * the translator only when {@code --containerThreadPoolSize} is above 0 (and the ParDo is named
 * by {@code --concurrentParDos}, if given). Anchors: Samza's {@code AsyncStreamTask} with
 * {@code task.max.concurrency}, and Beam's Samza runner's {@code numThreadsForProcessElement}
 * (apache/beam PR #23313).
 *
 * <h2>One thread per DoFn instance at a time</h2>
 *
 * Beam lets a runner call a DoFn instance from one thread at a time only. So concurrency comes
 * from instances, not threads: the operator keeps up to {@code taskMaxConcurrency} instances, each
 * deserialized from the pipeline's DoFn, set up ({@code @Setup}) when first needed and torn down
 * ({@code @Teardown}) at close, each with its own runners-core runner and bundle finalizer. An
 * element goes to an idle instance, which runs it on a worker thread; until the element completed
 * nothing else calls that instance. Elements that arrive while every instance is busy wait in
 * arrival order; the task takes no input while the operator is
 * {@linkplain #saturated() saturated}, so what waits is bounded by what one input element fans
 * out to.
 *
 * <h2>Outputs go through the container thread</h2>
 *
 * The fused graph downstream is confined to the container thread. An instance's outputs during
 * {@code @ProcessElement} are kept with the element; the worker then queues the element as
 * completed and hands the container one letter through its mailbox (one per burst of completions).
 * The letter runs on the container thread, in this PTransform's step,
 * and emits each completed element's outputs downstream, then gives the freed instance the next
 * waiting element. Outputs of different elements leave in completion order (a stateless ParDo
 * promises no order); an element's own outputs keep theirs.
 *
 * <h2>Bundles are per instance</h2>
 *
 * {@code @StartBundle} runs on the container thread before an instance's first element of a
 * bundle; {@code @FinishBundle} runs on the container thread after the instance's last element of
 * it completed. When the task finishes its bundle ({@link #finishBundle}), idle instances finish
 * theirs at once and busy ones right after their element completes. The task never waits for a
 * worker: it goes on with other input while elements are in flight.
 *
 * <h2>Watermarks, checkpoints, end of input</h2>
 *
 * An element in flight (running, completed but not yet emitted, or waiting for an instance) holds
 * the output watermark at its timestamp ({@link #watermarkHold()}): a DoFn outputs at or after its
 * input's timestamp, so the output watermark never passes an output still to come. A checkpoint
 * waits until nothing is in flight ({@link #readyForCheckpoint()}), so no element's effect is
 * half in it; at the end of input the task keeps ticking until nothing is in flight
 * ({@link #hasPendingWork()}) before it ends its output stream.
 *
 * <h2>Failures</h2>
 *
 * An exception thrown on a worker by the DoFn (wrapped by runners-core as on the sequential path)
 * is rethrown on the container thread by the letter that completes its element, which fails the
 * job with it as the cause. The container then shuts its workers down (interrupting calls in
 * flight) before it closes the tasks; {@link #close()} tears down every instance no worker still
 * runs and names the ones that do.
 *
 * <p>Not here: ParDos with side inputs, splittable DoFns and {@code @RequiresStableInput} keep the
 * sequential path; stateful DoFns have a concurrent mode of their own, in key order
 * ({@code StatefulParDoOperator}).
 *
 * <p>The instances, the waiting elements and the completions are {@link ConcurrentDoFnCalls}'s,
 * shared with the stateful ParDo's concurrent mode.
 *
 * <p>Threading: everything on the task's container thread except the call itself (a worker
 * thread; see {@link ConcurrentDoFnCalls}).
 */
@Internal
public final class ConcurrentParDoOperator<InT, OutT> implements Operator, ConcurrentOperator {

  private final SerializedCopies<DoFn<InT, OutT>> fn;
  private final TupleTag<OutT> mainTag;
  private final List<TupleTag<?>> additionalTags;
  private final Coder<InT> inputCoder;
  private final Map<TupleTag<?>, Coder<?>> outputCoders;
  private final WindowingStrategy<?, ?> windowingStrategy;
  private final DoFnSchemaInformation schemaInformation;
  private final Map<String, PCollectionView<?>> sideInputMapping;

  /** The task's instances of the DoFn and the elements they run; set at {@link #open}. */
  private ConcurrentDoFnCalls<WindowedValue<InT>> calls;

  /** Describes the ParDo as {@link ParDoOperator} does (without side inputs); nothing is instantiated until {@link #open}. */
  public ConcurrentParDoOperator(
      SerializedCopies<DoFn<InT, OutT>> fn,
      TupleTag<OutT> mainTag,
      List<TupleTag<?>> additionalTags,
      Coder<InT> inputCoder,
      Map<TupleTag<?>, Coder<?>> outputCoders,
      WindowingStrategy<?, ?> windowingStrategy,
      DoFnSchemaInformation schemaInformation,
      Map<String, PCollectionView<?>> sideInputMapping) {
    this.fn = fn;
    this.mainTag = mainTag;
    this.additionalTags = additionalTags;
    this.inputCoder = inputCoder;
    this.outputCoders = outputCoders;
    this.windowingStrategy = windowingStrategy;
    this.schemaInformation = schemaInformation;
    this.sideInputMapping = sideInputMapping;
  }

  /**
   * Takes the container's workers from {@code context}; instances are created on demand.
   *
   * @throws IllegalStateException if the context has no workers (the host runs no worker pool)
   */
  @Override
  public void open(OperatorContext context) {
    if (context.workers() == null) {
      throw new IllegalStateException(context.stepName() + " was translated for concurrent @ProcessElement, but its "
          + "container has no worker threads (--containerThreadPoolSize)");
    }
    OutputRouter router = new OutputRouter(context, mainTag, additionalTags, false);
    this.calls = new ConcurrentDoFnCalls<>(context, router, out -> newInstance(context, out), element -> null,
        () -> { });
  }

  /** One instance: its own DoFn copy, set up now, with its own runner writing to {@code out}. */
  private ConcurrentDoFnCalls.InstanceRunner<WindowedValue<InT>> newInstance(OperatorContext context,
      WindowedValueMultiReceiver out) {
    DoFnLifecycle lifecycle = new DoFnLifecycle(context);
    DoFn<InT, OutT> copy = lifecycle.setUp(fn.newCopy(), context.options());
    DoFnRunner<InT, OutT> runner = DoFnRunners.simpleRunner(context.options(), copy, NullSideInputReader.empty(), out,
        mainTag, additionalTags, new StatelessStepContext(lifecycle.finalizer()), inputCoder, outputCoders,
        windowingStrategy, schemaInformation, sideInputMapping);
    lifecycle.runners(runner, null);
    return new ConcurrentDoFnCalls.InstanceRunner<>() {
      @Override
      public void startBundle() {
        lifecycle.startBundle();
      }

      @Override
      public void run(WindowedValue<InT> element) {
        runner.processElement(element);
      }

      @Override
      public void finishBundle() {
        lifecycle.finishBundle();
      }

      @Override
      public void tearDown() {
        lifecycle.tearDown();
      }
    };
  }

  @Override
  @SuppressWarnings("unchecked")
  public void accept(WindowedValue<?> element) {
    calls.submit((WindowedValue<InT>) element);
  }

  @Override
  public boolean concurrent() {
    return true;
  }

  /**
   * Whether the elements in flight and waiting reached {@code --taskMaxConcurrency}: the task then
   * takes no input until one completes (back-pressure toward the task's inputs).
   */
  @Override
  public boolean saturated() {
    return calls.saturated();
  }

  /** Idle instances finish their bundle now, busy ones once their element completed. */
  @Override
  public void finishBundle() {
    calls.finishBundle();
  }

  /** Whether an idle instance has a bundle open (one that is still running an element ends its own). */
  @Override
  public boolean inBundle() {
    return calls.inBundle();
  }

  /** Elements in flight or waiting: the task keeps ticking at the end of input until they completed. */
  @Override
  public boolean hasPendingWork() {
    return calls.busy();
  }

  /** A checkpoint waits until no element is in flight, so none is half in it. */
  @Override
  public boolean readyForCheckpoint() {
    return !calls.busy();
  }

  /** The earliest timestamp of an element in flight or waiting; the end of time if none. */
  @Override
  public Instant watermarkHold() {
    long hold = calls.minOf(element -> element.getTimestamp().getMillis());
    return hold == Long.MAX_VALUE ? BoundedWindow.TIMESTAMP_MAX_VALUE : new Instant(hold);
  }

  /** Tears down every instance no worker runs (see {@link ConcurrentDoFnCalls#close()}). */
  @Override
  public void close() {
    if (calls != null) {
      calls.close();
    }
  }
}
