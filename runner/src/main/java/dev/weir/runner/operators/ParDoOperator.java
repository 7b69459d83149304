package dev.weir.runner.operators;

import dev.weir.runner.sideinput.SideInputs;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.runners.core.DoFnRunners;
import org.apache.beam.runners.core.NullSideInputReader;
import org.apache.beam.runners.core.PushbackSideInputDoFnRunner;
import org.apache.beam.runners.core.SideInputReader;
import org.apache.beam.runners.core.SimplePushbackSideInputDoFnRunner;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.DoFnSchemaInformation;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.joda.time.Instant;

/**
 * A stateless ParDo (single or multi-output) run through runners-core's
 * {@link DoFnRunners#simpleRunner}, with side inputs if it has any.
 *
 * <p>Side inputs: the task feeds broadcast side-input elements and watermarks in through
 * {@link SideInputConsumer}; {@link SideInputs} keeps them and materialises each view once per
 * window. Main-input elements go through runners-core's
 * {@link SimplePushbackSideInputDoFnRunner}: windows whose side inputs are not ready yet are
 * pushed back ({@link SideInputPushback}) and retried whenever a side-input watermark advances or
 * a triggered view takes a new pane; the earliest pushed-back timestamp is this operator's
 * {@link #watermarkHold()}, so the stage's output watermark waits for them. Side-input watermarks
 * never hold the main input.
 *
 * <p>Each task gets its own DoFn instance (deserialized from the pipeline's, which is serialized
 * once per transform: {@link SerializedCopies}), set up at open and torn down at close
 * ({@link DoFnLifecycle}), so that no DoFn instance is ever shared by two
 * threads. Outputs are routed by tag directly to the consumers of that output ({@link OutputRouter}).
 *
 * <p>Bundle finalization: the DoFn's {@code BundleFinalizer} callbacks of a bundle run after the
 * container's commit that follows {@link #finishBundle} (see {@link BundleFinalizers}).
 *
 * <p>Metrics: the executor makes this ParDo's step current (its metrics container, its profiling
 * span) around every call into the operator, so user code here counts for this PTransform.
 *
 * <p>Threading: confined to the task's container thread.
 */
@Internal
public final class ParDoOperator<InT, OutT> implements Operator, SideInputConsumer {

  /** The user's DoFn, serialized once for all tasks of this transform; each task opens a copy. */
  private final SerializedCopies<DoFn<InT, OutT>> fn;
  private final TupleTag<OutT> mainTag;
  private final List<TupleTag<?>> additionalTags;
  private final Coder<InT> inputCoder;
  private final Map<TupleTag<?>, Coder<?>> outputCoders;
  private final WindowingStrategy<?, ?> windowingStrategy;
  private final DoFnSchemaInformation schemaInformation;
  private final Map<String, PCollectionView<?>> sideInputMapping;
  private final List<PCollectionView<?>> sideInputViews;

  /** Null without side inputs. */
  private SideInputPushback<WindowedValue<InT>> pushback;
  private PushbackSideInputDoFnRunner<InT, OutT> pushbackRunner;
  private DoFnLifecycle lifecycle;
  private DoFnRunner<InT, OutT> runner;
  private boolean inBundle;

  /**
   * Describes the ParDo; nothing is instantiated until {@link #open}.
   *
   * @param fn the user's DoFn, serialized once for all tasks of the transform
   */
  public ParDoOperator(
      SerializedCopies<DoFn<InT, OutT>> fn,
      TupleTag<OutT> mainTag,
      List<TupleTag<?>> additionalTags,
      Coder<InT> inputCoder,
      Map<TupleTag<?>, Coder<?>> outputCoders,
      WindowingStrategy<?, ?> windowingStrategy,
      DoFnSchemaInformation schemaInformation,
      Map<String, PCollectionView<?>> sideInputMapping,
      List<PCollectionView<?>> sideInputViews) {
    this.fn = fn;
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
    lifecycle = new DoFnLifecycle(context);
    DoFn<InT, OutT> fn = lifecycle.setUp(this.fn.newCopy(), context.options());
    SideInputReader reader = NullSideInputReader.empty();
    if (!sideInputViews.isEmpty()) {
      Coder<WindowedValue<InT>> elementCoder =
          WindowedValues.getFullCoder(inputCoder, windowingStrategy.getWindowFn().windowCoder());
      pushback = new SideInputPushback<>(sideInputViews, new SideInputPushback.Codec<>() {
        @Override
        public void encode(WindowedValue<InT> element, java.io.DataOutputStream out) throws java.io.IOException {
          elementCoder.encode(element, out);
        }

        @Override
        public WindowedValue<InT> decode(java.io.DataInputStream in) throws java.io.IOException {
          return elementCoder.decode(in);
        }

        @Override
        public long timestampMs(WindowedValue<InT> element) {
          return element.getTimestamp().getMillis();
        }
      });
      reader = pushback.sideInputs();
      pushback.restore(context.restored());
    }
    runner = DoFnRunners.simpleRunner(
        context.options(), fn, reader, new OutputRouter(context, mainTag, additionalTags, false), mainTag,
        additionalTags, new StatelessStepContext(lifecycle.finalizer()), inputCoder, outputCoders, windowingStrategy,
        schemaInformation, sideInputMapping);
    if (pushback != null) {
      pushbackRunner = SimplePushbackSideInputDoFnRunner.create(runner, pushback.sideInputs().views(),
          pushback.sideInputs());
    }
    lifecycle.runners(runner, pushbackRunner);
  }

  @Override
  public void acceptSideInput(int index, WindowedValue<?> element) {
    if (pushback.acceptSideInput(index, element)) { // a triggered view's pane may have made a window ready
      retryPushedBack();
    }
  }

  @Override
  public void advanceSideInputWatermark(int index, long watermarkMs) {
    if (pushback.advanceSideInputWatermark(index, watermarkMs)) {
      retryPushedBack();
    }
  }

  /** Runs the pushed-back elements again; those whose side inputs are still not ready stay back. */
  private void retryPushedBack() {
    List<WindowedValue<InT>> retry = pushback.takeAll();
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
      pushback.pushBack(element, element.getTimestamp().getMillis());
    }
  }

  @Override
  public Instant watermarkHold() {
    long hold = pushback == null ? Long.MAX_VALUE : pushback.holdMs();
    return hold == Long.MAX_VALUE ? BoundedWindow.TIMESTAMP_MAX_VALUE : new Instant(hold);
  }

  /** Number of main-input elements waiting for side inputs (for tests). */
  public int pushedBackCount() {
    return pushback == null ? 0 : pushback.size();
  }

  private void startBundleIfNeeded() {
    if (!inBundle) {
      inBundle = true;
      lifecycle.startBundle();
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
    lifecycle.finishBundle();
  }

  @Override
  public void close() {
    if (lifecycle != null) {
      lifecycle.tearDown();
    }
  }

  @Override
  public boolean readyForCheckpoint() {
    return pushback == null || pushback.readyForCheckpoint();
  }

  /** Writes the side inputs' contents (the only heap state of a stateless DoFn operator). */
  @Override
  public void snapshot(OperatorSnapshot out) {
    if (pushback != null) {
      pushback.snapshot(out);
    }
  }
}
