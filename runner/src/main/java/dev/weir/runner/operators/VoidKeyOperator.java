package dev.weir.runner.operators;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * Keys every element by {@code null} ({@code KV<Void, T>}), keeping timestamp, windows and pane:
 * the head of a triggered side input's pane grouping (see {@code PipelineTranslator}), where one
 * GroupByKey over the single {@code null} key turns the view's elements into the panes its trigger
 * fires. One {@code KV} per element. Confined to the task's thread.
 */
@Internal
public final class VoidKeyOperator implements Operator {
  private Receiver output;

  @Override
  public void open(OperatorContext context) {
    output = context.singleOutput();
  }

  @Override
  public void accept(WindowedValue<?> element) {
    output.accept(element.withValue(KV.of((Void) null, element.getValue())));
  }
}
