package dev.weir.runner.operators;

import org.apache.beam.sdk.annotations.Internal;

import dev.weir.runner.state.CachedStateInternals;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.util.WindowedValueMultiReceiver;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * Where a DoFn operator's outputs go: runners-core hands every output with its tag, and this
 * passes it to the receiver of that tag from the operator's context (the next fused operator, a
 * fan-out, a stream writer, or {@link Receiver#DISCARD}). One instance per operator instance,
 * shared by the stateless, stateful and splittable ParDo operators.
 *
 * <p>Cost per output: the main output is found by an identity comparison, an additional output
 * by one hash lookup on the tag (runners-core passes the tag objects the operator was built with);
 * nothing is allocated and no union stream is filtered per output. A tag that is neither (an
 * equal but not identical main tag) falls back to {@code equals}. The count of outputs
 * ({@link #outputs()}) is a field increment.
 *
 * <p>State reads: a stateful DoFn may output a value it read from state as is; such a value may
 * stream from its key's cells, and must not leave the operator that way (fused operators may store
 * it, other threads may iterate it). With {@code detachStateReads} each output is copied out of
 * the state first ({@link CachedStateInternals#detachReads}).
 *
 * <p>Threading: the operator's container thread only.
 */
@Internal
public final class OutputRouter implements WindowedValueMultiReceiver {
  private final TupleTag<?> mainTag;
  private final Receiver mainOutput;
  private final Map<TupleTag<?>, Receiver> additionalOutputs = new HashMap<>();
  private final boolean detachStateReads;
  /** Outputs routed so far, all tags. */
  private long outputs;

  /**
   * @param context the operator's context, whose receivers the outputs go to
   * @param mainTag the DoFn's main output tag
   * @param additionalTags the DoFn's additional output tags
   * @param detachStateReads whether to copy state reads out of each output (stateful DoFns)
   */
  public OutputRouter(OperatorContext context, TupleTag<?> mainTag, List<TupleTag<?>> additionalTags,
      boolean detachStateReads) {
    this.mainTag = mainTag;
    this.mainOutput = context.output(mainTag);
    for (TupleTag<?> tag : additionalTags) {
      additionalOutputs.put(tag, context.output(tag));
    }
    this.detachStateReads = detachStateReads;
  }

  @Override
  public <T> void output(TupleTag<T> tag, WindowedValue<T> output) {
    outputs++;
    if (detachStateReads) {
      CachedStateInternals.detachReads(output.getValue());
    }
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

  /** Outputs routed so far, all tags (a splittable DoFn's tick bounds its resumes by it). */
  public long outputs() {
    return outputs;
  }
}
