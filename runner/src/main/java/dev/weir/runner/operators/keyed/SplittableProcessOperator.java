package dev.weir.runner.operators.keyed;

import dev.weir.runner.operators.BundleFinalizers;
import dev.weir.runner.operators.DoFnLifecycle;
import dev.weir.runner.operators.Operator;
import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.OperatorSnapshot;
import dev.weir.runner.operators.OutputRouter;
import dev.weir.runner.operators.SerializedCopies;
import dev.weir.runner.operators.SideInputConsumer;
import dev.weir.runner.operators.SideInputPushback;
import dev.weir.runner.state.KeyContext;
import dev.weir.runner.time.ManualJobClock;
import dev.weir.runner.timers.KeyedTimers;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.beam.runners.core.DoFnRunners;
import org.apache.beam.runners.core.KeyedWorkItem;
import org.apache.beam.runners.core.KeyedWorkItems;
import org.apache.beam.runners.core.NullSideInputReader;
import org.apache.beam.runners.core.OutputAndTimeBoundedSplittableProcessElementInvoker;
import org.apache.beam.runners.core.PushbackSideInputDoFnRunner;
import org.apache.beam.runners.core.ReadyCheckingSideInputReader;
import org.apache.beam.runners.core.SplittableParDoViaKeyedWorkItems.ProcessElements;
import org.apache.beam.runners.core.SplittableParDoViaKeyedWorkItems.ProcessFn;
import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.runners.core.StepContext;
import org.apache.beam.runners.core.TimerInternals;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.ByteArrayCoder;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.DoFnSchemaInformation;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * Runs a splittable DoFn with checkpoints: the {@link ProcessElements} primitive that runners-core's
 * {@code SplittableParDoViaKeyedWorkItems} override produces for unbounded SDFs, and for bounded
 * ones that take a {@code BundleFinalizer} (WeirRunner keeps other bounded SDFs on the naive
 * expansion), on a keyed stage fed by a SHUFFLE
 * stream (the translation of {@code GBKIntoKeyedWorkItems}) keyed by the unique random key that
 * the SDF expansion gives every (element, restriction) pair.
 *
 * <h2>Execution</h2>
 *
 * Each input {@code KV<key, KV<element, restriction>>} becomes a one-element
 * {@link KeyedWorkItem} and runs through runners-core's {@link ProcessFn} (via
 * {@link DoFnRunners#newProcessFnRunner}) with an {@link OutputAndTimeBoundedSplittableProcessElementInvoker}:
 * a call claims work until the DoFn stops, or checkpoints after {@code maxOutputsPerCall} outputs
 * or {@code maxCallDuration} (split on a shared daemon scheduler thread). On a checkpoint the
 * ProcessFn keeps the element, the residual restriction and the watermark estimator state in the
 * key's {@link dev.weir.runner.state.CachedStateInternals}, holds the output watermark at the estimator's watermark
 * (a {@code WatermarkHoldState}, reported to the holds of this operator's {@link OperatorKeys}) and sets a
 * processing-time timer at now + the DoFn's resume delay ({@link KeyedTimers#forResumes}); when the run
 * loop's clock reaches it ({@link #onProcessingTime}), the timer's key work item resumes the
 * residual. When the DoFn stops, the state and the hold are cleared and no timer is set.
 * {@code maxOutputsPerCall} and {@code maxCallDuration} come from {@code --maxBundleSize} and
 * {@code --maxBundleTimeMs}: one call's outputs are what one input element may produce, which
 * bounds what a task's outbox may hold.
 *
 * <h2>Watermark and end of input</h2>
 *
 * {@link #watermarkHold()} is the earliest hold of a live restriction (or of an element waiting
 * for side inputs), so the stage's output watermark follows the SDFs' watermark estimators.
 * {@link #hasPendingWork()} is true while any restriction is checkpointed or any element waits, so
 * the task keeps ticking after its input ended and ends its stream only when every restriction is
 * done (a truly unbounded SDF never ends the job, as on every runner). On a job with a manual
 * clock (a {@code TestStream}), the clock no longer moves once the input ended, so from then on
 * every pending resume fires at the next tick, whatever its time.
 *
 * <h2>Side inputs and bundles</h2>
 *
 * Side inputs arrive through {@link SideInputConsumer} into {@link SideInputPushback}; a seed element
 * whose window's side inputs are not ready is pushed back (with its key) and retried whenever a
 * side-input watermark advances. A bundle opens at the first element or resume and is finished by
 * the task, or by this operator after the resumes of a processing-time tick (the task only closes
 * bundles that counted input elements); finishing a bundle requests a state commit.
 *
 * <h2>Bundle finalization</h2>
 *
 * A DoFn's {@code BundleFinalizer} is this operator's {@link BundleFinalizers.Finalizer}: the
 * callbacks a call registers belong to the open bundle and run after the container's commit that
 * follows the bundle's end ({@link #finishBundle}), i.e. once the bundle's outputs were handed on
 * (to the fused operators downstream or the task's streams) and its state, including the
 * checkpointed residuals, is committed. A processing-time tick ends the bundle once a call
 * registered callbacks, before resuming anything more ({@link #onProcessingTime}), so checkpoints,
 * commits and callbacks interleave: a DoFn that checkpoints until one of its callbacks has run (as
 * readers acknowledging messages do) sees it run before its next resume, without waiting for the
 * task's bundle limits. The callbacks of a bundle the job never finishes do not run.
 *
 * <h2>Shared parts</h2>
 *
 * Keys and their state are the keyed operators' {@link OperatorKeys} (key contexts by encoded key,
 * the current key, a state commit requested at each bundle end); the DoFn's set-up, bundles and
 * teardown are {@link DoFnLifecycle}; outputs go through an {@link OutputRouter}, which also counts
 * them; side inputs and waiting seeds are a {@link SideInputPushback}. Only the timers differ from
 * {@link KeyedOperator}: resumes are processing-time only and due at (not after) their time
 * ({@link KeyedTimers} in resume mode). The executor makes this operator's step current around every call.
 *
 * <p>Threading: confined to the task's container thread, except the invoker's checkpoint, which
 * runs on the shared scheduler thread and only splits the (synchronized) restriction tracker.
 */
@Internal
public final class SplittableProcessOperator<InputT, OutputT, RestrictionT> implements Operator, SideInputConsumer {

  /** Wall time one processing-time tick may spend in rounds of resumes (about one run-loop tick). */
  static final long RESUME_BUDGET_NANOS = 5_000_000L;

  /**
   * One daemon thread for the checkpoint timeouts of every SDF call in the JVM: it only runs
   * {@code trySplit} on a tracker at the call's deadline, so one thread is plenty.
   */
  private static final class Scheduler {
    static final ScheduledExecutorService INSTANCE = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "weir-sdf-checkpoint");
      t.setDaemon(true);
      return t;
    });
  }

  /** A seed element waiting for side inputs, with its encoded key. */
  private record Waiting<T>(byte[] keyBytes, byte[] key, WindowedValue<T> item, long timestampMs) {}

  private final ProcessElements<InputT, OutputT, RestrictionT, ?, ?> transform;
  /** The user's SDF, a copy per task (shared by the tasks of the transform). */
  private final SerializedCopies<DoFn<InputT, OutputT>> fn;
  private final Coder<KeyedWorkItem<byte[], KV<InputT, RestrictionT>>> inputCoder;
  private final Map<TupleTag<?>, Coder<?>> outputCoders;
  private final WindowingStrategy<?, ?> windowingStrategy;
  private final List<PCollectionView<?>> sideInputViews;
  private final int maxOutputsPerCall;
  private final Duration maxCallDuration;

  /** The SDF expansion's random keys (encoded with {@link ByteArrayCoder}) and their state. */
  private final OperatorKeys<byte[]> keys = new OperatorKeys<>(ByteArrayCoder.of());
  /** Resume mode: processing-time timers only, due at their time, on the heap. */
  private KeyedTimers timers;
  private OperatorContext context;
  private DoFnLifecycle lifecycle;
  private BundleFinalizers.Finalizer finalizer;
  private PushbackSideInputDoFnRunner<KeyedWorkItem<byte[], KV<InputT, RestrictionT>>, OutputT> runner;
  /** Null without side inputs. */
  private SideInputPushback<Waiting<KeyedWorkItem<byte[], KV<InputT, RestrictionT>>>> pushback;
  /** Counts the outputs (all tags), which bound the resumes of one tick. */
  private OutputRouter router;
  private boolean manualClock;
  private boolean inputEnded;
  /** The last input watermark {@link #advanceWatermark} delivered, epoch ms. */
  private long deliveredMs = BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis();
  private boolean inBundle;

  /**
   * Describes the operator; nothing is instantiated until {@link #open}.
   *
   * @param transform the primitive
   * @param fn copies of the primitive's DoFn (the user's SDF), one per task, from one serialized form
   *     per transform (the translator's)
   * @param inputCoder the coder of the key work items (for runners-core's runner)
   * @param outputCoders the coder of each output
   * @param windowingStrategy the windowing of the SDF's input elements (and of its outputs)
   * @param maxOutputsPerCall outputs of one call before it checkpoints (at least 1)
   * @param maxCallDuration wall time of one call before it checkpoints
   */
  public SplittableProcessOperator(ProcessElements<InputT, OutputT, RestrictionT, ?, ?> transform,
      SerializedCopies<DoFn<InputT, OutputT>> fn, Coder<KeyedWorkItem<byte[], KV<InputT, RestrictionT>>> inputCoder,
      Map<TupleTag<?>, Coder<?>> outputCoders, WindowingStrategy<?, ?> windowingStrategy, int maxOutputsPerCall,
      Duration maxCallDuration) {
    this.transform = transform;
    this.fn = fn;
    this.inputCoder = inputCoder;
    this.outputCoders = outputCoders;
    this.windowingStrategy = windowingStrategy;
    this.sideInputViews = transform.getSideInputs();
    this.maxOutputsPerCall = Math.max(1, maxOutputsPerCall);
    this.maxCallDuration = maxCallDuration;
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public void open(OperatorContext context) {
    this.context = context;
    keys.open(context.state(), context.stepName(), windowingStrategy.getWindowFn().windowCoder());
    this.manualClock = context.clock() instanceof ManualJobClock;
    this.timers = KeyedTimers.forResumes(context.stepName());
    this.lifecycle = new DoFnLifecycle(context);
    this.finalizer = lifecycle.finalizer();
    timers.advanceProcessingTime(new Instant(context.clock().millis()));
    keys.holds().restore(context.restored().get(KeyedOperator.HOLDS_PART));
    for (OperatorSnapshot.Part part : context.restored().all(KeyedOperator.PROCESSING_TIMERS_PART)) {
      timers.restoreProcessingTimers(part.bytes(), windowingStrategy.getWindowFn().windowCoder(), keys::decode,
          context.stepName(), context.restored()::owns);
    }
    TupleTag<OutputT> mainTag = transform.getMainOutputTag();
    List<TupleTag<?>> additionalTags = transform.getAdditionalOutputTags().getAll();
    this.router = new OutputRouter(context, mainTag, additionalTags, false);
    ReadyCheckingSideInputReader reader;
    if (sideInputViews.isEmpty()) {
      reader = EmptyReader.INSTANCE;
    } else {
      pushback = new SideInputPushback<>(sideInputViews);
      reader = pushback.sideInputs();
      pushback.restore(context.restored());
    }
    ProcessFn<InputT, OutputT, RestrictionT, ?, ?> processFn =
        lifecycle.setUp(transform.newProcessFn(fn.newCopy()), context.options());
    processFn.setStateInternalsFactory(key -> keys.current().state());
    processFn.setTimerInternalsFactory(key -> timers);
    processFn.setSideInputReader(reader);
    processFn.setProcessElementInvoker(new OutputAndTimeBoundedSplittableProcessElementInvoker(
        processFn.getFn(), context.options(), router, mainTag, reader, Scheduler.INSTANCE, maxOutputsPerCall,
        maxCallDuration, (Supplier<DoFn.BundleFinalizer>) () -> finalizer));
    StateInternals currentState = keys.currentState();
    StepContext stepContext = new StepContext() {
      @Override
      public StateInternals stateInternals() {
        return currentState;
      }

      @Override
      public TimerInternals timerInternals() {
        return timers;
      }
    };
    runner = (PushbackSideInputDoFnRunner) DoFnRunners.newProcessFnRunner((ProcessFn) processFn, context.options(),
        sideInputViews, reader, router, mainTag, additionalTags, stepContext, (Coder) inputCoder, outputCoders,
        windowingStrategy, DoFnSchemaInformation.create(), transform.getSideInputMapping());
    lifecycle.runners(null, runner);
  }

  @Override
  public void accept(WindowedValue<?> element) {
    byte[] key = (byte[]) ((KV<?, ?>) element.getValue()).getKey();
    acceptKeyed(keys.encode(key), element);
  }

  @Override
  @SuppressWarnings("unchecked")
  public void acceptKeyed(byte[] keyBytes, WindowedValue<?> element) {
    WindowedValue<KV<byte[], KV<InputT, RestrictionT>>> kv = (WindowedValue<KV<byte[], KV<InputT, RestrictionT>>>) element;
    byte[] key = kv.getValue().getKey();
    WindowedValue<KV<InputT, RestrictionT>> seed = kv.withValue(kv.getValue().getValue());
    WindowedValue<KeyedWorkItem<byte[], KV<InputT, RestrictionT>>> item =
        WindowedValues.valueInGlobalWindow(KeyedWorkItems.elementsWorkItem(key, List.of(seed)));
    run(keyBytes, key, item, seed.getTimestamp().getMillis());
  }

  /** Runs one work item of {@code key} (inside the executor's bracket: the step is current). */
  private void run(byte[] keyBytes, byte[] key, WindowedValue<KeyedWorkItem<byte[], KV<InputT, RestrictionT>>> item,
      long timestampMs) {
    setCurrent(keyBytes, key);
    startBundleIfNeeded();
    for (WindowedValue<KeyedWorkItem<byte[], KV<InputT, RestrictionT>>> notReady
        : runner.processElementInReadyWindows(item)) {
      pushback.pushBack(new Waiting<>(keyBytes, key, notReady, timestampMs), timestampMs);
    }
  }

  @Override
  public void acceptSideInput(int index, WindowedValue<?> element) {
    if (pushback.acceptSideInput(index, element)) { // a triggered view's pane may have made a window ready
      retryWaiting();
    }
  }

  @Override
  public void advanceSideInputWatermark(int index, long watermarkMs) {
    if (pushback.advanceSideInputWatermark(index, watermarkMs)) {
      retryWaiting();
    }
  }

  /** A side-input window became ready: runs the waiting elements again (in a new bundle). */
  private void retryWaiting() {
    List<Waiting<KeyedWorkItem<byte[], KV<InputT, RestrictionT>>>> retry = pushback.takeAll();
    // runners-core's pushback runners remember not-ready windows until the next startBundle
    finishBundle();
    for (Waiting<KeyedWorkItem<byte[], KV<InputT, RestrictionT>>> w : retry) {
      run(w.keyBytes(), w.key(), w.item(), w.timestampMs());
    }
  }

  /**
   * Moves the watermarks the resume timers see when the input watermark advanced; this operator
   * fires nothing on a watermark (its resumes are processing-time ones), so it is always done.
   */
  @Override
  public boolean advanceWatermark(long inputWatermarkMs, int timerBudget, BooleanSupplier outputBlocked) {
    if (inputWatermarkMs <= deliveredMs) {
      return true;
    }
    deliveredMs = inputWatermarkMs;
    Instant inputWatermark = new Instant(inputWatermarkMs);
    timers.advanceInputWatermark(inputWatermark, watermarkHold());
    if (!inputWatermark.isBefore(BoundedWindow.TIMESTAMP_MAX_VALUE)) {
      inputEnded = true;
    }
    return true;
  }

  /**
   * Resumes the checkpointed restrictions that are due at {@code now}, in rounds: each round runs
   * every resume due when it starts once (a restriction resumed in a round waits for the next), and
   * rounds repeat with a fresh clock reading while resumes are due, for at most
   * {@value #RESUME_BUDGET_NANOS} ns of wall time and while the tick's outputs stay under
   * {@code maxOutputsPerCall}, so that a DoFn resuming without delay does not wait for the next
   * tick per checkpoint, yet the other tasks of the container, and the back-pressure of a blocked
   * outbox, get their turn. Rounds also stop once a call registered bundle finalization callbacks,
   * and a tick that finds callbacks not run yet (of seed calls, or of a bundle whose commit is still
   * to come) resumes nothing and only ends the bundle: the container's commit after the tick runs
   * the callbacks before any later resume of this task.
   */
  @Override
  public void onProcessingTime(Instant now) {
    timers.advanceProcessingTime(now);
    if (finalizer.hasUncommitted()) {
      // calls registered callbacks not run yet: end their bundle (if open) so that the container's
      // commit after this tick runs them, and resume from the next tick on (a DoFn may wait for them)
      finishBundle();
      return;
    }
    boolean fireAll = manualClock && inputEnded; // a manual clock never moves again
    long startNanos = System.nanoTime();
    long outputsAtStart = router.outputs();
    long nowMs = fireAll ? Long.MAX_VALUE : now.getMillis();
    boolean any = false;
    while (true) {
      long due = timers.size();
      int fired = 0;
      KeyedTimers.Entry resume;
      // at most the resumes pending when the round starts: those it sets wait for the next round
      while (fired < due && (resume = timers.pollDueResume(nowMs)) != null) {
        resume(resume);
        fired++;
      }
      if (fired == 0) {
        break;
      }
      any = true;
      if (System.nanoTime() - startNanos >= RESUME_BUDGET_NANOS || router.outputs() - outputsAtStart >= maxOutputsPerCall
          || finalizer.pending() > 0) {
        break; // (callbacks registered: they run at the commit after this tick, before the next resumes)
      }
      if (!fireAll) {
        long clockMs = context.clock().millis();
        timers.advanceProcessingTime(new Instant(clockMs));
        nowMs = Math.max(nowMs, clockMs);
      }
    }
    if (any) {
      finishBundle(); // the task closes only bundles that counted input elements
    }
  }

  @SuppressWarnings("unchecked")
  private void resume(KeyedTimers.Entry timer) {
    KeyContext<byte[]> key = (KeyContext<byte[]>) timer.key();
    WindowedValue<KeyedWorkItem<byte[], KV<InputT, RestrictionT>>> item =
        WindowedValues.valueInGlobalWindow(KeyedWorkItems.timersWorkItem(key.key(), List.of(timer.data())));
    run(key.id().bytes(), key.key(), item, BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis());
  }

  private void setCurrent(byte[] keyBytes, byte[] key) {
    KeyContext<byte[]> context = keys.get(keyBytes, key);
    keys.setCurrent(context);
    timers.setCurrentKey(context);
  }

  private void startBundleIfNeeded() {
    if (!inBundle) {
      inBundle = true;
      lifecycle.startBundle();
    }
  }

  @Override
  public Instant watermarkHold() {
    long hold = Math.min(keys.holds().minMillis(), pushback == null ? Long.MAX_VALUE : pushback.holdMs());
    return hold == Long.MAX_VALUE ? BoundedWindow.TIMESTAMP_MAX_VALUE : new Instant(hold);
  }

  /** Whether a restriction is checkpointed (a resume is pending) or an element waits for side inputs. */
  @Override
  public boolean hasPendingWork() {
    return timers.size() > 0 || (pushback != null && pushback.size() > 0);
  }

  @Override
  public void finishBundle() {
    if (!inBundle) {
      return;
    }
    inBundle = false;
    keys.bundleFinished(); // a state commit, at the container's next commit point
    lifecycle.finishBundle(); // its finalization callbacks run after the commit requested above
  }

  @Override
  public void close() {
    if (lifecycle != null) {
      lifecycle.tearDown();
    }
  }

  /** No side inputs: every window is ready. */
  private static final class EmptyReader implements ReadyCheckingSideInputReader {
    static final EmptyReader INSTANCE = new EmptyReader();

    @Override
    public boolean isReady(PCollectionView<?> view, BoundedWindow window) {
      return true;
    }

    @Override
    public <T> T get(PCollectionView<T> view, BoundedWindow window) {
      return NullSideInputReader.empty().get(view, window);
    }

    @Override
    public <T> boolean contains(PCollectionView<T> view) {
      return false;
    }

    @Override
    public boolean isEmpty() {
      return true;
    }
  }

  @Override
  public boolean readyForCheckpoint() {
    return pushback == null || pushback.readyForCheckpoint();
  }

  /**
   * Writes the heap state: the pending resumes (processing-time timers; the restrictions and
   * watermark-estimator states they resume are in the store), the keys' watermark holds and the
   * side inputs' contents.
   */
  @Override
  public void snapshot(OperatorSnapshot out) {
    out.put(KeyedOperator.PROCESSING_TIMERS_PART,
        timers.snapshotProcessingTimers(windowingStrategy.getWindowFn().windowCoder()));
    out.put(KeyedOperator.HOLDS_PART, keys.holds().snapshot());
    if (pushback != null) {
      pushback.snapshot(out);
    }
  }
}
