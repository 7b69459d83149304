package dev.weir.runner.operators;

import dev.weir.runner.sideinput.SideInputs;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.runners.core.DoFnRunners;
import org.apache.beam.runners.core.NullSideInputReader;
import org.apache.beam.runners.core.PushbackSideInputDoFnRunner;
import org.apache.beam.runners.core.SideInputReader;
import org.apache.beam.runners.core.SimplePushbackSideInputDoFnRunner;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.joda.time.Instant;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.DoFnSchemaInformation;
import org.apache.beam.sdk.transforms.reflect.DoFnInvoker;
import org.apache.beam.sdk.transforms.reflect.DoFnInvokers;
import org.apache.beam.sdk.util.SerializableUtils;
import org.apache.beam.sdk.util.WindowedValueMultiReceiver;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowingStrategy;

/**
 * A stateless ParDo (single or multi-output) run through runners-core's
 * {@link DoFnRunners#simpleRunner}, with side inputs if it has any.
 *
 * <p>Side inputs: the task feeds broadcast side-input elements and watermarks in through
 * {@link SideInputConsumer}; {@link SideInputs} keeps them and materialises each view once per
 * window. Main-input elements go through runners-core's
 * {@link SimplePushbackSideInputDoFnRunner}: windows whose side inputs are not ready yet are
 * pushed back (kept on the heap, in arrival order) and retried whenever a side-input watermark
 * advances or a triggered view takes a new pane; the earliest pushed-back timestamp is this operator's {@link #watermarkHold()}, so
 * the stage's output watermark waits for them. Side-input watermarks never hold the main input.
 *
 * <p>Each task gets its own DoFn instance (a serialized copy of the pipeline's), set up at open and
 * torn down at close, so that no DoFn instance is ever shared by two threads. Outputs are routed
 * by tag directly to the consumers of that output: the main output by an identity comparison,
 * additional outputs by one hash lookup; no union stream is filtered per output.
 *
 * <p>Bundle finalization: the DoFn's {@code BundleFinalizer} callbacks of a bundle run after the
 * container's commit that follows {@link #finishBundle} (see {@link BundleFinalizers}).
 *
 * <p>Metrics: the executor makes this ParDo's step current (its metrics container, its profiling
 * span) around every call into the operator, so user code here counts for this PTransform.
 *
 * <p>Threading: confined to the task's container thread.
 */
public final class ParDoOperator<InT, OutT> implements Operator, SideInputConsumer {

  private final DoFn<InT, OutT> prototype;
  private final TupleTag<OutT> mainTag;
  private final List<TupleTag<?>> additionalTags;
  private final Coder<InT> inputCoder;
  private final Map<TupleTag<?>, Coder<?>> outputCoders;
  private final WindowingStrategy<?, ?> windowingStrategy;
  private final DoFnSchemaInformation schemaInformation;
  private final Map<String, PCollectionView<?>> sideInputMapping;
  private final List<PCollectionView<?>> sideInputViews;

  private SideInputs sideInputs;
  private PushbackSideInputDoFnRunner<InT, OutT> pushbackRunner;
  private List<WindowedValue<InT>> pushedBack = new ArrayList<>();
  private long pushedBackMinMs = Long.MAX_VALUE;

  private OperatorContext context;
  private DoFn<InT, OutT> fn;
  private DoFnInvoker<InT, OutT> invoker;
  private DoFnRunner<InT, OutT> runner;
  private Receiver mainOutput;
  private Map<TupleTag<?>, Receiver> additionalOutputs;
  private BundleFinalizers.Finalizer finalizer;
  private boolean inBundle;

  /** Describes the ParDo; nothing is instantiated until {@link #open}. */
  public ParDoOperator(
      DoFn<InT, OutT> prototype,
      TupleTag<OutT> mainTag,
      List<TupleTag<?>> additionalTags,
      Coder<InT> inputCoder,
      Map<TupleTag<?>, Coder<?>> outputCoders,
      WindowingStrategy<?, ?> windowingStrategy,
      DoFnSchemaInformation schemaInformation,
      Map<String, PCollectionView<?>> sideInputMapping,
      List<PCollectionView<?>> sideInputViews) {
    this.prototype = prototype;
    this.mainTag = mainTag;
    this.additionalTags = additionalTags;
    this.inputCoder = inputCoder;
    this.outputCoders = outputCoders;
    this.windowingStrategy = windowingStrategy;
    this.schemaInformation = schemaInformation;
    this.sideInputMapping = sideInputMapping;
    this.sideInputViews = sideInputViews;
  }

  @Override
  public void open(OperatorContext context) {
    this.context = context;
    this.mainOutput = context.output(mainTag);
    this.additionalOutputs = new HashMap<>();
    for (TupleTag<?> tag : additionalTags) {
      additionalOutputs.put(tag, context.output(tag));
    }
    fn = SerializableUtils.clone(prototype);
    invoker = DoFnInvokers.tryInvokeSetupFor(fn, context.options());
    SideInputReader reader = NullSideInputReader.empty();
    if (!sideInputViews.isEmpty()) {
      sideInputs = new SideInputs(sideInputViews);
      reader = sideInputs;
    }
    finalizer = context.newFinalizer();
    runner = DoFnRunners.simpleRunner(
        context.options(), fn, reader, new Router(), mainTag, additionalTags,
        new StatelessStepContext(finalizer), inputCoder, outputCoders, windowingStrategy,
        schemaInformation, sideInputMapping);
    if (sideInputs != null) {
      pushbackRunner = SimplePushbackSideInputDoFnRunner.create(runner, sideInputs.views(), sideInputs);
    }
  }

  @Override
  public void acceptSideInput(int index, WindowedValue<?> element) {
    if (sideInputs.add(index, element)) { // a triggered view's pane may have made a window ready
      retryPushedBack();
    }
  }

  @Override
  public void advanceSideInputWatermark(int index, long watermarkMs) {
    if (sideInputs.advanceWatermark(index, watermarkMs)) {
      retryPushedBack();
    }
  }

  /** Runs the pushed-back elements again; those whose side inputs are still not ready stay back. */
  private void retryPushedBack() {
    if (pushedBack.isEmpty()) {
      return;
    }
    List<WindowedValue<InT>> retry = pushedBack;
    pushedBack = new ArrayList<>();
    pushedBackMinMs = Long.MAX_VALUE;
    // The pushback runner remembers not-ready windows until its next startBundle: begin a new
    // bundle so that the retry sees the side inputs' new readiness.
    finishBundle();
    startBundleIfNeeded();
    for (WindowedValue<InT> element : retry) {
      pushBack(pushbackRunner.processElementInReadyWindows(element));
    }
  }

  private void pushBack(Iterable<WindowedValue<InT>> notReady) {
    for (WindowedValue<InT> element : notReady) {
      pushedBack.add(element);
      pushedBackMinMs = Math.min(pushedBackMinMs, element.getTimestamp().getMillis());
    }
  }

  @Override
  public Instant watermarkHold() {
    return pushedBackMinMs == Long.MAX_VALUE ? BoundedWindow.TIMESTAMP_MAX_VALUE : new Instant(pushedBackMinMs);
  }

  /** Number of main-input elements waiting for side inputs (for tests). */
  public int pushedBackCount() {
    return pushedBack.size();
  }

  private void startBundleIfNeeded() {
    if (!inBundle) {
      inBundle = true;
      if (pushbackRunner != null) {
        pushbackRunner.startBundle();
      } else {
        runner.startBundle();
      }
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  public void accept(WindowedValue<?> element) {
    startBundleIfNeeded();
    if (pushbackRunner == null) {
      runner.processElement((WindowedValue<InT>) element);
    } else {
      pushBack(pushbackRunner.processElementInReadyWindows((WindowedValue<InT>) element));
    }
  }

  @Override
  public boolean inBundle() {
    return inBundle;
  }

  @Override
  public void finishBundle() {
    if (!inBundle) {
      return;
    }
    inBundle = false;
    if (pushbackRunner != null) {
      pushbackRunner.finishBundle();
    } else {
      runner.finishBundle();
    }
    finalizer.bundleFinished();
  }

  @Override
  public void close() {
    DoFnTeardown.teardown(invoker, context.stepName());
    invoker = null;
  }

  /** Routes runner outputs by tag; allocation-free. */
  private final class Router implements WindowedValueMultiReceiver {
    @Override
    public <T> void output(TupleTag<T> tag, WindowedValue<T> output) {
      if (tag == mainTag) {
        mainOutput.accept(output);
        return;
      }
      Receiver receiver = additionalOutputs.get(tag);
      if (receiver != null) {
        receiver.accept(output);
      } else if (tag.equals(mainTag)) {
        mainOutput.accept(output);
      }
    }
  }
}
