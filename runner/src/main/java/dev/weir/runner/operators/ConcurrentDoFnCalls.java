package dev.weir.runner.operators;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.util.WindowedValueMultiReceiver;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DoFn instances of one concurrent ParDo in one task, and the calls ({@code W}: an element, or
 * a stateful DoFn's element or timer) they run on the container's worker threads: what
 * {@link ConcurrentParDoOperator} and the stateful ParDo's concurrent mode share.
 *
 * <h2>Instances</h2>
 *
 * Up to {@code --taskMaxConcurrency} instances, created on demand by the operator's factory (its own
 * DoFn copy, set up, with its own runners-core runner writing to the instance's output buffer);
 * each runs one call at a time (Beam's one-thread-per-instance contract). Bundles are per instance:
 * {@code @StartBundle} on the container thread before its first call of a bundle,
 * {@code @FinishBundle} on the container thread when the task finishes its bundle (or, if the
 * instance is busy then, right after its call completed).
 *
 * <h2>Order</h2>
 *
 * Calls with an order key (a stateful DoFn's encoded key) run one at a time per key, in the order
 * they were submitted; calls of different keys, and calls without a key, run in any order. A call
 * whose key has one in flight waits behind it ({@link #waitingByKey}); one that finds no idle
 * instance waits in {@link #pending}, in arrival order.
 *
 * <h2>Completion</h2>
 *
 * A worker keeps the call's outputs with the instance, queues it as {@link #completed} (for calls
 * that post work to the container thread: by a letter of its own, behind that work) and puts one
 * letter in the container's mailbox per burst; the letter (on the container thread, in the
 * operator's step) emits the outputs through the operator's {@link OutputRouter}, finishes the
 * instance's bundle if asked, starts the next call of the same key or the next waiting one, then
 * tells the operator ({@code afterCompletions}). A call that threw rethrows its exception there,
 * which fails the job.
 *
 * <p>Threading: everything on the container thread, except {@link Instance#run()} (a worker:
 * touches only its instance and {@link #completed}). The pool's {@code execute} and
 * {@link #completed} order every write to an instance before its next reader.
 *
 * @param <W> what one call runs (an element, or an element or timer with its key)
 */
@Internal
public final class ConcurrentDoFnCalls<W> {
  private static final Logger LOG = LoggerFactory.getLogger(ConcurrentDoFnCalls.class);

  /** One DoFn instance as the operator builds it: its bundle calls and how it runs one call. */
  public interface InstanceRunner<W> {
    /** {@code @StartBundle} (container thread). */
    void startBundle();

    /**
     * {@code call} is about to go to a worker (container thread, just before the hand-off, which
     * publishes what this did to the worker); by default nothing.
     */
    default void handingOff(W call) {}

    /** Runs one call (a worker thread): {@code @ProcessElement} or {@code @OnTimer}. */
    void run(W call);

    /** {@code call} completed and its outputs went on (container thread); by default nothing. */
    default void completed(W call) {}

    /** {@code @FinishBundle} and the bundle's finalization hand-off (container thread). */
    void finishBundle();

    /** {@code @Teardown} (container thread); must not throw. */
    void tearDown();
  }

  private final ProcessElementWorkers workers;
  private final StepRunner step;
  private final String stepName;
  private final OutputRouter router;
  private final Function<WindowedValueMultiReceiver, InstanceRunner<W>> newInstance;
  /** The call's order key (equal keys run one at a time, in order), or null for none. */
  private final Function<W, Object> orderKey;
  private final Runnable afterCompletions;
  private final int maxConcurrency;
  private final List<Instance> instances = new ArrayList<>();
  private final ArrayDeque<Instance> idle = new ArrayDeque<>();
  /** Calls waiting for an instance, in arrival order. */
  private final ArrayDeque<W> pending = new ArrayDeque<>();
  /** Per order key with a call in flight: the calls of that key waiting behind it. */
  private final Map<Object, ArrayDeque<W>> waitingByKey = new HashMap<>();
  /** Calls in {@link #waitingByKey}'s queues. */
  private int waitingForKey;
  private final ConcurrentLinkedQueue<Instance> completed = new ConcurrentLinkedQueue<>();
  /** Whether calls post work to the container thread, so completions must queue behind it (see the constructor). */
  private final boolean callsPost;
  private final AtomicBoolean letterPosted = new AtomicBoolean();
  private final Runnable drainLetter;
  /** Calls handed to an instance and not yet completed on the container thread. */
  private int inFlight;

  /**
   * @param context the operator's context: its workers (not null), step and name
   * @param router where completed calls' outputs go
   * @param newInstance builds one instance whose runner writes its outputs to the given receiver
   * @param orderKey a call's order key, or null for calls that may run in any order
   * @param afterCompletions run on the container thread after each burst of completions was emitted
   */
  public ConcurrentDoFnCalls(OperatorContext context, OutputRouter router,
      Function<WindowedValueMultiReceiver, InstanceRunner<W>> newInstance, Function<W, Object> orderKey,
      Runnable afterCompletions) {
    this(context, router, newInstance, orderKey, afterCompletions, false);
  }

  /**
   * As above; with {@code callsPost}, calls may hand work to the container thread without waiting
   * ({@link OwnerCalls#post}, a stateful DoFn's state writes), and a call's completion is queued
   * behind that work: the worker puts its completion in the mailbox as a letter of its own, after
   * its posted ones, so the next call of the key is handed off only once the key's state holds
   * every write of the call before it. (Without it, a burst's letter put by another worker earlier
   * could take the completion before those writes ran.)
   */
  public ConcurrentDoFnCalls(OperatorContext context, OutputRouter router,
      Function<WindowedValueMultiReceiver, InstanceRunner<W>> newInstance, Function<W, Object> orderKey,
      Runnable afterCompletions, boolean callsPost) {
    this.callsPost = callsPost;
    this.workers = context.workers();
    this.step = context.step();
    this.stepName = context.stepName();
    this.router = router;
    this.newInstance = newInstance;
    this.orderKey = orderKey;
    this.afterCompletions = afterCompletions;
    this.maxConcurrency = workers.taskMaxConcurrency();
    this.drainLetter = () -> step.run(this::drainCompleted);
  }

  /** Runs {@code call} on a worker as soon as its key (if any) and an instance allow. Container thread. */
  public void submit(W call) {
    workers.started();
    Object key = orderKey.apply(call);
    if (key != null) {
      ArrayDeque<W> behind = waitingByKey.get(key);
      if (behind != null) {
        behind.add(call);
        waitingForKey++;
        return;
      }
    }
    Instance instance = idle.poll();
    if (instance == null && instances.size() < maxConcurrency) {
      instance = new Instance();
      instances.add(instance);
    }
    if (instance == null) {
      pending.add(call);
    } else {
      dispatch(instance, call, key);
    }
  }

  /**
   * Runs {@code call} on the calling (container) thread, now, if its order key has no call in
   * flight or waiting and an instance is idle (or may still be created); its outputs go downstream
   * at once and what it throws propagates. Returns false, running nothing, otherwise (then
   * {@link #submit} it). For calls that are cheap and must not each pay a worker round trip (a
   * stateful DoFn's timer firings).
   */
  public boolean runHereIfKeyIdle(W call) {
    Object key = orderKey.apply(call);
    if (key != null && waitingByKey.containsKey(key)) {
      return false;
    }
    Instance instance = idle.peek();
    if (instance == null) {
      if (instances.size() >= maxConcurrency) {
        return false;
      }
      instance = new Instance();
      instances.add(instance);
      idle.add(instance);
    }
    if (!instance.inBundle) {
      instance.inBundle = true;
      instance.runner.startBundle();
    }
    instance.runner.run(call); // buffering is off: outputs go to the router directly
    return true;
  }

  private void dispatch(Instance instance, W call, Object key) {
    if (key != null) {
      waitingByKey.putIfAbsent(key, new ArrayDeque<>());
    }
    if (!instance.inBundle) {
      instance.inBundle = true;
      instance.runner.startBundle();
    }
    instance.call = call;
    instance.key = key;
    instance.buffering = true;
    inFlight++;
    instance.runner.handingOff(call);
    workers.execute(step, instance);
  }

  /** The letter's work (container thread): see the class comment. */
  private void drainCompleted() {
    letterPosted.set(false);
    Instance instance;
    boolean any = false;
    while ((instance = completed.poll()) != null) {
      any = true;
      inFlight--;
      instance.buffering = false;
      Throwable failure = instance.failure;
      if (failure != null) {
        instance.failure = null;
        throw rethrow(failure);
      }
      List<Object> outputs = instance.outputs;
      for (int i = 0; i < outputs.size(); i += 2) {
        emit(outputs.get(i), outputs.get(i + 1));
      }
      outputs.clear();
      Object key = instance.key;
      W call = instance.call;
      instance.call = null;
      instance.key = null;
      instance.runner.completed(call);
      workers.completed();
      if (instance.finishWhenIdle) {
        instance.finishBundle();
      }
      next(instance, key);
    }
    if (any) {
      afterCompletions.run();
    }
  }

  /** Gives a freed instance the next call of its key, else the next pending one whose key is free. */
  private void next(Instance instance, Object key) {
    if (key != null) {
      ArrayDeque<W> behind = waitingByKey.get(key);
      W call = behind.poll();
      if (call != null) {
        waitingForKey--;
        dispatch(instance, call, key);
        return;
      }
      waitingByKey.remove(key);
    }
    W call;
    while ((call = pending.poll()) != null) {
      Object callKey = orderKey.apply(call);
      ArrayDeque<W> behind = callKey == null ? null : waitingByKey.get(callKey);
      if (behind == null) {
        dispatch(instance, call, callKey);
        return;
      }
      behind.add(call); // its key got a call in flight while it waited for an instance
      waitingForKey++;
    }
    idle.add(instance);
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

  /** Whether calls in flight and waiting reached {@code --taskMaxConcurrency}: the task takes no input. */
  public boolean saturated() {
    return inFlight + pending.size() + waitingForKey >= maxConcurrency;
  }

  /** Calls in flight or waiting. */
  public int size() {
    return inFlight + pending.size() + waitingForKey;
  }

  /** Whether a call is in flight or waiting. */
  public boolean busy() {
    return size() > 0;
  }

  /**
   * The least of {@code timestampMs} over the calls in flight and waiting; {@link Long#MAX_VALUE}
   * if none (the operator's watermark hold).
   */
  public long minOf(ToLongFunction<W> timestampMs) {
    long min = Long.MAX_VALUE;
    if (inFlight > 0) {
      for (Instance instance : instances) {
        W call = instance.call;
        if (call != null) {
          min = Math.min(min, timestampMs.applyAsLong(call));
        }
      }
    }
    for (W call : pending) {
      min = Math.min(min, timestampMs.applyAsLong(call));
    }
    if (waitingForKey > 0) {
      for (ArrayDeque<W> behind : waitingByKey.values()) {
        for (W call : behind) {
          min = Math.min(min, timestampMs.applyAsLong(call));
        }
      }
    }
    return min;
  }

  /** Idle instances finish their bundle now, busy ones once their call completed. */
  public void finishBundle() {
    for (Instance instance : instances) {
      if (instance.inBundle) {
        if (instance.call == null) {
          instance.finishBundle();
        } else {
          instance.finishWhenIdle = true;
        }
      }
    }
  }

  /** Whether an idle instance has a bundle open. */
  public boolean inBundle() {
    for (Instance instance : instances) {
      if (instance.inBundle && instance.call == null) {
        return true;
      }
    }
    return false;
  }

  /**
   * Tears down every instance no worker runs (the container shut its workers down first); one
   * still in user code is named and left alone.
   */
  public void close() {
    for (Instance instance : instances) {
      if (instance.running) {
        LOG.warn("A DoFn instance of {} is still running on a worker thread; it is not torn down", stepName);
      } else {
        instance.runner.tearDown();
      }
    }
  }

  /**
   * One DoFn instance. Its fields are the container thread's, except while its call runs
   * ({@link #buffering}): then only the worker touches {@link #outputs} and {@link #failure}.
   */
  private final class Instance implements Runnable, WindowedValueMultiReceiver {
    final InstanceRunner<W> runner;
    /** The call this instance runs or ran, until it completed on the container thread; null when idle. */
    W call;
    /** {@link #call}'s order key, or null. */
    Object key;
    boolean buffering;
    /** Outputs of {@link #call}: tag, value, tag, value, ... */
    final ArrayList<Object> outputs = new ArrayList<>();
    Throwable failure;
    boolean inBundle;
    boolean finishWhenIdle;
    /** Whether a worker is inside {@link #run()} (read by {@link #close()} after the workers stopped). */
    volatile boolean running;

    Instance() {
      this.runner = newInstance.apply(this);
    }

    void finishBundle() {
      inBundle = false;
      finishWhenIdle = false;
      runner.finishBundle();
    }

    @Override
    public void run() {
      running = true;
      try {
        runner.run(call);
      } catch (Throwable t) {
        failure = t;
      } finally {
        running = false;
      }
      if (callsPost) {
        workers.toLoop(queueCompletion); // behind the letters this call posted
      } else {
        queueCompletion.run();
      }
    }

    /** Queues this instance's completion and makes sure a letter will drain it (any thread). */
    private final Runnable queueCompletion = () -> {
      completed.add(this);
      if (letterPosted.compareAndSet(false, true)) {
        workers.toLoop(drainLetter);
      }
    };

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
