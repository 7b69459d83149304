package dev.weir.runner.operators;

import java.util.List;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.transforms.Combine.CombineFn;

/**
 * The user's {@link CombineFn} seen from the merging side of a lifted Combine.perKey, whose inputs
 * are accumulators produced by {@link PartialCombineOperator}: adding an input merges it into the
 * accumulator. Stateless apart from the wrapped function; serializable like it.
 */
@Internal
public final class AccumulatorMergingFn<InputT, AccumT, OutputT> extends CombineFn<AccumT, AccumT, OutputT> {
  private static final long serialVersionUID = 1L;

  private final CombineFn<InputT, AccumT, OutputT> fn;
  private final Coder<AccumT> accumulatorCoder;

  /**
   * @param fn the user's combine function
   * @param accumulatorCoder its accumulator coder (also the coder of this function's inputs)
   */
  public AccumulatorMergingFn(CombineFn<InputT, AccumT, OutputT> fn, Coder<AccumT> accumulatorCoder) {
    this.fn = fn;
    this.accumulatorCoder = accumulatorCoder;
  }

  @Override
  public AccumT createAccumulator() {
    return fn.createAccumulator();
  }

  @Override
  public AccumT addInput(AccumT accumulator, AccumT input) {
    return fn.mergeAccumulators(List.of(accumulator, input));
  }

  @Override
  public AccumT mergeAccumulators(Iterable<AccumT> accumulators) {
    return fn.mergeAccumulators(accumulators);
  }

  @Override
  public OutputT extractOutput(AccumT accumulator) {
    return fn.extractOutput(accumulator);
  }

  @Override
  public AccumT compact(AccumT accumulator) {
    return fn.compact(accumulator);
  }

  @Override
  public Coder<AccumT> getAccumulatorCoder(CoderRegistry registry, Coder<AccumT> inputCoder) {
    return accumulatorCoder;
  }
}
