package dev.weir.runner.operators;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.runners.core.DoFnRunners;
import org.apache.beam.runners.core.NullSideInputReader;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.metrics.MetricsContainer;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stateless, side-input-free ParDo (single or multi-output) run through runners-core's
 * {@link DoFnRunners#simpleRunner}.
 *
 * <p>Each task gets its own DoFn instance (a serialized copy of the pipeline's), set up at open and
 * torn down at close, so that no DoFn instance is ever shared by two threads. Outputs are routed
 * by tag directly to the consumers of that output: the main output by an identity comparison,
 * additional outputs by one hash lookup; no union stream is filtered per output.
 *
 * <p>Metrics: the step's container is swapped in (a field write on the thread's
 * {@link dev.weir.runner.metrics.MetricsSwitch}) around every call into user code.
 *
 * <p>Threading: confined to the task's container thread.
 */
public final class ParDoOperator<InT, OutT> implements Operator {
  private static final Logger LOG = LoggerFactory.getLogger(ParDoOperator.class);

  private final DoFn<InT, OutT> prototype;
  private final TupleTag<OutT> mainTag;
  private final List<TupleTag<?>> additionalTags;
  private final Coder<InT> inputCoder;
  private final Map<TupleTag<?>, Coder<?>> outputCoders;
  private final WindowingStrategy<?, ?> windowingStrategy;
  private final DoFnSchemaInformation schemaInformation;
  private final Map<String, PCollectionView<?>> sideInputMapping;

  private OperatorContext context;
  private DoFn<InT, OutT> fn;
  private DoFnInvoker<InT, OutT> invoker;
  private DoFnRunner<InT, OutT> runner;
  private Receiver mainOutput;
  private Map<TupleTag<?>, Receiver> additionalOutputs;
  private MetricsContainer stepMetrics;
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
      Map<String, PCollectionView<?>> sideInputMapping) {
    this.prototype = prototype;
    this.mainTag = mainTag;
    this.additionalTags = additionalTags;
    this.inputCoder = inputCoder;
    this.outputCoders = outputCoders;
    this.windowingStrategy = windowingStrategy;
    this.schemaInformation = schemaInformation;
    this.sideInputMapping = sideInputMapping;
  }

  @Override
  public void open(OperatorContext context) {
    this.context = context;
    this.stepMetrics = context.stepMetrics();
    this.mainOutput = context.output(mainTag);
    this.additionalOutputs = new HashMap<>();
    for (TupleTag<?> tag : additionalTags) {
      additionalOutputs.put(tag, context.output(tag));
    }
    MetricsContainer previous = context.metrics().swap(stepMetrics);
    try {
      fn = SerializableUtils.clone(prototype);
      invoker = DoFnInvokers.tryInvokeSetupFor(fn, context.options());
    } finally {
      context.metrics().swap(previous);
    }
    runner = DoFnRunners.simpleRunner(
        context.options(), fn, NullSideInputReader.empty(), new Router(), mainTag, additionalTags,
        StatelessStepContext.INSTANCE, inputCoder, outputCoders, windowingStrategy,
        schemaInformation, sideInputMapping);
  }

  @Override
  @SuppressWarnings("unchecked")
  public void accept(WindowedValue<?> element) {
    MetricsContainer previous = context.metrics().swap(stepMetrics);
    try {
      if (!inBundle) {
        inBundle = true;
        runner.startBundle();
      }
      runner.processElement((WindowedValue<InT>) element);
    } finally {
      context.metrics().swap(previous);
    }
  }

  @Override
  public void finishBundle() {
    if (!inBundle) {
      return;
    }
    inBundle = false;
    MetricsContainer previous = context.metrics().swap(stepMetrics);
    try {
      runner.finishBundle();
    } finally {
      context.metrics().swap(previous);
    }
  }

  @Override
  public void close() {
    if (invoker == null) {
      return;
    }
    MetricsContainer previous = context.metrics().swap(stepMetrics);
    try {
      invoker.invokeTeardown();
    } catch (RuntimeException e) {
      LOG.warn("Teardown of the DoFn of {} failed", context.stepName(), e);
    } finally {
      invoker = null;
      context.metrics().swap(previous);
    }
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
