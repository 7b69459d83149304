package dev.weir.runner.task;

import dev.weir.runner.stream.InputPartition;

import dev.weir.runner.operators.Operator;
import dev.weir.runner.operators.Receiver;
import dev.weir.runner.operators.SideInputConsumer;
import dev.weir.runner.translation.StagePlan;

/**
 * One input partition of a {@link StageTask}: where its envelopes go. Its watermarks and
 * end-of-stream are kept by index in the task's {@link StageWatermarks}.
 *
 * <p>Threading: confined to the task's container thread.
 */
final class TaskInput {
  /** The input's index in the task's {@link StageWatermarks}. */
  final int index;
  final InputPartition partition;
  /** The stage node this input enters. */
  final int entryNode;
  /** For a side-input stream: the consuming operator and the view's index; else null / -1. */
  final SideInputConsumer sideConsumer;
  final int sideIndex;
  /** The entry operator; wrapped in the entry transform's span when the task opens. */
  Receiver entry;

  private TaskInput(int index, InputPartition partition, Receiver entry, int entryNode,
      SideInputConsumer sideConsumer, int sideIndex) {
    this.index = index;
    this.partition = partition;
    this.entryNode = entryNode;
    this.entry = entry;
    this.sideConsumer = sideConsumer;
    this.sideIndex = sideIndex;
  }

  /**
   * Input {@code index} of a task of {@code stage}: a source stage's splits enter node 0; a
   * stream enters the node the plan names, as a side input if the plan says so.
   *
   * @param operators the task's operators, by node index
   */
  static TaskInput of(StagePlan stage, int index, InputPartition partition, Operator[] operators) {
    StagePlan.Input planned = stage.source() != null ? null : stage.inputs().get(index);
    int entry = planned == null ? 0 : planned.entryNode();
    if (planned != null && planned.isSideInput()) {
      return new TaskInput(index, partition, operators[entry], entry, (SideInputConsumer) operators[entry],
          planned.sideInput());
    }
    return new TaskInput(index, partition, operators[entry], entry, null, -1);
  }

  /** Whether this is a side input (it never holds the task's input watermark). */
  boolean isSideInput() {
    return sideConsumer != null;
  }
}
