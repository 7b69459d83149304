package dev.weir.runner.operators;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * arrival order ({@link #pending}); the task takes no input while the operator is
 * {@linkplain #saturated() saturated}, so what waits is bounded by what one input element fans
 * out to.
 *
 * <h2>Outputs go through the container thread</h2>
 *
 * The fused graph downstream is confined to the container thread. An instance's outputs during
 * {@code @ProcessElement} are kept with the element; the worker then queues the element as
 * completed and hands the container one letter through its mailbox (one per burst of completions,
 * {@link #letterPosted}). The letter runs on the container thread, in this PTransform's step,
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
 * <p>Not here: ParDos with side inputs, stateful or splittable DoFns and
 * {@code @RequiresStableInput} keep the sequential path.
 *
 * <p>Threading: everything on the task's container thread except {@link Instance#run()} (a worker
 * thread, touching only its instance and the completion queue). Hand-offs: the pool's
 * {@code execute} (container to worker) and {@link #completed} (worker to container) order every
 * write to an instance before its next reader.
 */
@Internal
public final class ConcurrentParDoOperator<InT, OutT> implements Operator {
  private static final Logger LOG = LoggerFactory.getLogger(ConcurrentParDoOperator.class);

  private final SerializedCopies<DoFn<InT, OutT>> fn;
  private final TupleTag<OutT> mainTag;
  private final List<TupleTag<?>> additionalTags;
  private final Coder<InT> inputCoder;
  private final Map<TupleTag<?>, Coder<?>> outputCoders;
  private final WindowingStrategy<?, ?> windowingStrategy;
  private final DoFnSchemaInformation schemaInformation;
  private final Map<String, PCollectionView<?>> sideInputMapping;

  private OperatorContext context;
  private ProcessElementWorkers workers;
  private OutputRouter router;
  private int maxConcurrency;
  /** Every instance created so far (at most {@link #maxConcurrency}). Container thread. */
  private final List<Instance> instances = new ArrayList<>();
  /** Instances with no element. Container thread. */
  private final ArrayDeque<Instance> idle = new ArrayDeque<>();
  /** Elements accepted while every instance was busy, in arrival order. Container thread. */
  private final ArrayDeque<WindowedValue<InT>> pending = new ArrayDeque<>();
  /** Instances whose element ran; written by workers, drained by the container's letter. */
  private final ConcurrentLinkedQueue<Instance> completed = new ConcurrentLinkedQueue<>();
  /** Whether a letter that drains {@link #completed} waits in the mailbox (one per burst). */
  private final AtomicBoolean letterPosted = new AtomicBoolean();
  /** The letter: drain {@link #completed} in this PTransform's step. */
  private Runnable drainLetter;
  /** Elements handed to an instance and not yet emitted. Container thread. */
  private int inFlight;

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
    this.context = context;
    this.workers = context.workers();
    this.maxConcurrency = workers.taskMaxConcurrency();
    this.router = new OutputRouter(context, mainTag, additionalTags, false);
    StepRunner step = context.step();
    this.drainLetter = () -> step.run(this::drainCompleted);
  }

  /** A new instance: its own DoFn copy, set up now, with its own runner and finalizer. */
  private Instance newInstance() {
    Instance instance = new Instance();
    instances.add(instance);
    return instance;
  }

  @Override
  @SuppressWarnings("unchecked")
  public void accept(WindowedValue<?> element) {
    workers.started();
    Instance instance = idle.poll();
    if (instance == null && instances.size() < maxConcurrency) {
      instance = newInstance();
    }
    if (instance == null) {
      pending.add((WindowedValue<InT>) element);
    } else {
      dispatch(instance, (WindowedValue<InT>) element);
    }
  }

  /** Starts {@code instance}'s bundle if needed and runs {@code element} on a worker. */
  private void dispatch(Instance instance, WindowedValue<InT> element) {
    if (!instance.inBundle) {
      instance.inBundle = true;
      instance.lifecycle.startBundle();
    }
    instance.element = element;
    instance.buffering = true;
    inFlight++;
    workers.execute(context.step(), instance);
  }

  /**
   * The letter's work: emits every completed element's outputs, finishes the bundles the task
   * asked to finish meanwhile, and hands freed instances the elements waiting for one.
   *
   * @throws RuntimeException or Error: what the DoFn threw on the worker (as runners-core wrapped it)
   */
  private void drainCompleted() {
    letterPosted.set(false); // completions queued from now on post a new letter
    Instance instance;
    while ((instance = completed.poll()) != null) {
      inFlight--;
      instance.buffering = false;
      Throwable failure = instance.failure;
      if (failure != null) {
        instance.failure = null;
        instance.element = null;
        throw rethrow(failure);
      }
      List<Object> outputs = instance.outputs;
      for (int i = 0; i < outputs.size(); i += 2) {
        emit(outputs.get(i), outputs.get(i + 1));
      }
      outputs.clear();
      instance.element = null;
      workers.completed();
      if (instance.finishWhenIdle) {
        instance.finishBundle();
      }
      WindowedValue<InT> next = pending.poll();
      if (next != null) {
        dispatch(instance, next);
      } else {
        idle.add(instance);
      }
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private void emit(Object tag, Object value) {
    router.output((TupleTag) tag, (WindowedValue) value);
  }

  private static RuntimeException rethrow(Throwable failure) {
    if (failure instanceof RuntimeException runtime) {
      throw runtime;
    }
    if (failure instanceof Error error) {
      throw error;
    }
    throw new RuntimeException(failure);
  }

  /**
   * Whether the elements in flight and waiting reached {@code --taskMaxConcurrency}: the task then
   * takes no input until one completes (back-pressure toward the task's inputs).
   */
  public boolean saturated() {
    return inFlight + pending.size() >= maxConcurrency;
  }

  /** Elements handed to an instance and not yet emitted, plus those waiting for one (for tests and monitoring). */
  public int inFlight() {
    return inFlight + pending.size();
  }

  /** Idle instances finish their bundle now, busy ones once their element completed. */
  @Override
  public void finishBundle() {
    for (Instance instance : instances) {
      if (instance.inBundle) {
        if (instance.element == null) {
          instance.finishBundle();
        } else {
          instance.finishWhenIdle = true;
        }
      }
    }
  }

  /** Whether an idle instance has a bundle open (one that is still running an element ends its own). */
  @Override
  public boolean inBundle() {
    for (Instance instance : instances) {
      if (instance.inBundle && instance.element == null) {
        return true;
      }
    }
    return false;
  }

  /** Elements in flight or waiting: the task keeps ticking at the end of input until they completed. */
  @Override
  public boolean hasPendingWork() {
    return inFlight > 0 || !pending.isEmpty();
  }

  /** A checkpoint waits until no element is in flight, so none is half in it. */
  @Override
  public boolean readyForCheckpoint() {
    return !hasPendingWork();
  }

  /** The earliest timestamp of an element in flight or waiting; the end of time if none. */
  @Override
  public Instant watermarkHold() {
    long hold = Long.MAX_VALUE;
    if (inFlight > 0) {
      for (Instance instance : instances) {
        WindowedValue<InT> element = instance.element;
        if (element != null) {
          hold = Math.min(hold, element.getTimestamp().getMillis());
        }
      }
    }
    for (WindowedValue<InT> element : pending) {
      hold = Math.min(hold, element.getTimestamp().getMillis());
    }
    return hold == Long.MAX_VALUE ? BoundedWindow.TIMESTAMP_MAX_VALUE : new Instant(hold);
  }

  /**
   * Tears down every instance no worker runs (the container shut its workers down first: on a
   * normal end none does); an instance still in {@code @ProcessElement} is named and left alone.
   */
  @Override
  public void close() {
    for (Instance instance : instances) {
      if (instance.running) {
        LOG.warn("A DoFn instance of {} is still in @ProcessElement on a worker thread; it is not torn down",
            context.stepName());
      } else {
        instance.lifecycle.tearDown();
      }
    }
  }

  /**
   * One DoFn instance with its runner. Its fields are the container thread's, except while its
   * element runs ({@link #buffering}): then only the worker touches {@link #outputs} and
   * {@link #failure}.
   */
  private final class Instance implements Runnable, WindowedValueMultiReceiver {
    final DoFnLifecycle lifecycle;
    final DoFnRunner<InT, OutT> runner;
    /** The element this instance runs or ran, until its outputs were emitted; null when idle. */
    WindowedValue<InT> element;
    /** Whether outputs are kept for the container thread (during {@code @ProcessElement} on a worker). */
    boolean buffering;
    /** Outputs of {@link #element}: tag, value, tag, value, ... */
    final ArrayList<Object> outputs = new ArrayList<>();
    /** What {@code @ProcessElement} threw, or null. */
    Throwable failure;
    /** Whether this instance's bundle is open. */
    boolean inBundle;
    /** Whether the task finished its bundle while this instance ran: finish this one's when the element completed. */
    boolean finishWhenIdle;
    /** Whether a worker is inside {@link #run()} (read by {@link #close()} after the workers stopped). */
    volatile boolean running;

    Instance() {
      this.lifecycle = new DoFnLifecycle(context);
      DoFn<InT, OutT> copy = lifecycle.setUp(fn.newCopy(), context.options());
      this.runner = DoFnRunners.simpleRunner(context.options(), copy, NullSideInputReader.empty(), this, mainTag,
          additionalTags, new StatelessStepContext(lifecycle.finalizer()), inputCoder, outputCoders, windowingStrategy,
          schemaInformation, sideInputMapping);
      lifecycle.runners(runner, null);
    }

    /** {@code @FinishBundle} on the container thread; its outputs go downstream at once. */
    void finishBundle() {
      inBundle = false;
      finishWhenIdle = false;
      lifecycle.finishBundle();
    }

    /** On a worker: {@code @ProcessElement}, then the completion goes back to the container. */
    @Override
    public void run() {
      running = true;
      try {
        runner.processElement(element);
      } catch (Throwable t) {
        failure = t;
      } finally {
        running = false;
      }
      completed.add(this);
      if (letterPosted.compareAndSet(false, true)) {
        workers.toLoop(drainLetter);
      }
    }

    @Override
    public <T> void output(TupleTag<T> tag, WindowedValue<T> output) {
      if (buffering) {
        outputs.add(tag);
        outputs.add(output);
      } else {
        router.output(tag, output);
      }
    }
  }
}
