package dev.weir.runner.operators;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * Forwards every element unchanged to its single output: the head of a source stage, or a
 * Flatten whose inputs are all in the same stage (each input is wired to it, a duplicated input
 * twice, so duplicates are delivered twice as Beam requires). Confined to the task's thread.
 */
@Internal
public final class PassThroughOperator implements Operator {
  private Receiver output;

  @Override
  public void open(OperatorContext context) {
    output = context.singleOutput();
  }

  @Override
  public void accept(WindowedValue<?> element) {
    output.accept(element);
  }
}
