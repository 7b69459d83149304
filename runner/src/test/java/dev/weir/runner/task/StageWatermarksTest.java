package dev.weir.runner.task;

import static dev.weir.runner.task.StageWatermarks.MAX_WATERMARK_MS;
import static dev.weir.runner.task.StageWatermarks.MIN_WATERMARK_MS;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The task's watermark arithmetic on its own: given watermarks per producer and holds per node,
 * what each node and writer gets.
 *
 * <p>The stage used throughout: input 0 (main, two producers) enters node 0; input 1 (a side
 * input, one producer) feeds node 0's view. Node 0 feeds node 1 (e.g. a GroupByKey) and writer
 * node 3; node 1 feeds writer node 2.
 *
 * <pre>
 *   in0 ─▶ [0] ─▶ [1] ─▶ (2 writer)
 *            └──────────▶ (3 writer)
 * </pre>
 */
class StageWatermarksTest {
  private static final long NO_HOLD = MAX_WATERMARK_MS;

  private final StageWatermarks watermarks = new StageWatermarks(
      new int[] {2, 1}, new boolean[] {false, true},
      new int[][] {{}, {0}, {1}, {0}}, new boolean[] {false, false, true, true});

  /** What writer nodes 2 and 3 send in one pass (Long.MIN_VALUE: nothing), as StageTask does it. */
  private long[] pass(long... holdsMs) {
    for (int node = 0; node < watermarks.nodes(); node++) {
      if (!watermarks.isWriter(node)) {
        watermarks.advanceNode(node, watermarks.upstreamWatermarkMs(node));
        watermarks.holdNode(node, holdsMs[node]);
      }
    }
    long[] sent = {watermarks.advanceWriter(2), watermarks.advanceWriter(3)};
    watermarks.updateOutputWatermark();
    return sent;
  }

  @Test
  void theDrainCausesTheEnd_onlyOnceEveryProducerDrainedOrHadEnded() {
    assertThat(watermarks.drainCaused()).isFalse();
    watermarks.onProducerEnd(1, 0); // the side input's producer ended before the drain
    assertThat(watermarks.drainCaused()).as("no producer drained").isFalse();
    watermarks.onProducerDrained(0, 0);
    watermarks.onProducerWatermark(0, 0, MAX_WATERMARK_MS);
    assertThat(watermarks.drainCaused()).as("main input producer 1 still runs: its watermark moves the input").isFalse();
    watermarks.onProducerDrained(0, 1);
    assertThat(watermarks.drainCaused()).isTrue();
    watermarks.onProducerEnd(0, 0);
    watermarks.onProducerEnd(0, 1);
    assertThat(watermarks.drainCaused()).as("the ends after the drain's watermarks keep the cause").isTrue();
  }

  @Test
  void aStageWhoseProducersAllEndedWithoutADrain_isNotDrainCaused() {
    watermarks.onProducerEnd(0, 0);
    watermarks.onProducerEnd(0, 1);
    watermarks.onProducerEnd(1, 0);
    assertThat(watermarks.allInputsEnded()).isTrue();
    assertThat(watermarks.drainCaused()).isFalse();
  }

  @Test
  void aSnapshotRestoresEveryProducersWatermarkAndEnd_intoAFreshTask() {
    watermarks.onProducerWatermark(0, 0, 10);
    watermarks.onProducerWatermark(0, 1, 7);
    watermarks.onProducerEnd(1, 0);
    StageWatermarks restored = new StageWatermarks(
        new int[] {2, 1}, new boolean[] {false, true},
        new int[][] {{}, {0}, {1}, {0}}, new boolean[] {false, false, true, true});
    restored.restore(watermarks.snapshot());
    assertThat(restored.advanceInputWatermark()).isTrue();
    assertThat(restored.inputWatermarkMs()).isEqualTo(7);
    assertThat(restored.inputWatermarkMs(1)).isEqualTo(MAX_WATERMARK_MS);
    restored.onProducerWatermark(0, 1, 8);
    assertThat(restored.inputWatermarkMs(0)).isEqualTo(8);
    restored.onProducerEnd(0, 0);
    restored.onProducerEnd(0, 1);
    assertThat(restored.allInputsEnded()).isTrue();
  }

  @Test
  void aSnapshotOfAnotherShapeIsRefused() {
    StageWatermarks other = new StageWatermarks(new int[] {3}, new boolean[] {false}, new int[][] {{}},
        new boolean[] {false});
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> other.restore(watermarks.snapshot()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2 inputs");
  }

  @Test
  void anInputsWatermarkIsTheMinimumOverItsProducers() {
    watermarks.onProducerWatermark(0, 0, 10);
    assertThat(watermarks.inputWatermarkMs(0)).as("producer 1 sent nothing yet").isEqualTo(MIN_WATERMARK_MS);
    assertThat(watermarks.advanceInputWatermark()).isFalse();

    watermarks.onProducerWatermark(0, 1, 5);
    assertThat(watermarks.inputWatermarkMs(0)).isEqualTo(5);
    assertThat(watermarks.advanceInputWatermark()).isTrue();
    assertThat(watermarks.inputWatermarkMs()).isEqualTo(5);

    watermarks.onProducerWatermark(0, 1, 3);
    assertThat(watermarks.inputWatermarkMs(0)).as("a producer's watermark never goes back").isEqualTo(5);
    assertThat(watermarks.advanceInputWatermark()).isFalse();

    watermarks.onProducerWatermark(0, 1, 30);
    assertThat(watermarks.advanceInputWatermark()).isTrue();
    assertThat(watermarks.inputWatermarkMs()).as("now producer 0 is the minimum").isEqualTo(10);
  }

  @Test
  void aSideInputNeverHoldsTheTasksInputWatermark() {
    watermarks.onProducerWatermark(0, 0, 7);
    watermarks.onProducerWatermark(0, 1, 7);
    assertThat(watermarks.advanceInputWatermark()).isTrue();
    assertThat(watermarks.inputWatermarkMs()).isEqualTo(7);
    assertThat(watermarks.inputWatermarkMs(1)).isEqualTo(MIN_WATERMARK_MS);
  }

  @Test
  void endOfStreamCountsAsTheMaximumWatermark() {
    watermarks.onProducerWatermark(0, 1, 5);
    watermarks.onProducerEnd(0, 0);
    assertThat(watermarks.inputWatermarkMs(0)).isEqualTo(5);
    watermarks.onProducerEnd(0, 1);
    assertThat(watermarks.inputWatermarkMs(0)).isEqualTo(MAX_WATERMARK_MS);
    assertThat(watermarks.advanceInputWatermark()).isTrue();
    assertThat(watermarks.inputWatermarkMs()).isEqualTo(MAX_WATERMARK_MS);
    assertThat(watermarks.allInputsEnded()).as("the side input has not ended").isFalse();

    watermarks.endAllInputs();
    assertThat(watermarks.allInputsEnded()).isTrue();
    assertThat(watermarks.inputWatermarkMs(1)).isEqualTo(MAX_WATERMARK_MS);
    assertThat(pass(NO_HOLD, NO_HOLD)).containsExactly(MAX_WATERMARK_MS, MAX_WATERMARK_MS);
    assertThat(watermarks.outputWatermarkMs()).isEqualTo(MAX_WATERMARK_MS);
  }

  @Test
  void aHoldLowersTheOutputOfWhatIsDownstreamOfItOnly() {
    watermarks.onProducerWatermark(0, 0, 20);
    watermarks.onProducerWatermark(0, 1, 20);
    watermarks.advanceInputWatermark();

    long[] sent = pass(NO_HOLD, 12); // node 1 (say a GroupByKey) holds at 12
    assertThat(watermarks.nodeWatermarkMs(1)).as("a node's input is not lowered by its own hold").isEqualTo(20);
    assertThat(watermarks.nodeOutputMs(1)).isEqualTo(12);
    assertThat(sent).as("writer 2 is behind node 1; writer 3 is not").containsExactly(12L, 20L);
    assertThat(watermarks.outputWatermarkMs()).as("the minimum over the writers").isEqualTo(12);

    assertThat(pass(NO_HOLD, 12)).as("nothing advanced: nothing is sent").containsExactly(Long.MIN_VALUE, Long.MIN_VALUE);

    assertThat(pass(NO_HOLD, NO_HOLD)).as("the hold released").containsExactly(20L, Long.MIN_VALUE);
    assertThat(watermarks.outputWatermarkMs()).isEqualTo(20);
  }

  @Test
  void monitoringShowsTheWritersWatermarkOrForASinkStageItsNodesMinimumOutput() {
    watermarks.onProducerWatermark(0, 0, 20);
    watermarks.onProducerWatermark(0, 1, 20);
    watermarks.advanceInputWatermark();
    pass(NO_HOLD, 12);
    assertThat(watermarks.monitoredOutputWatermarkMs()).as("with writers: the output watermark").isEqualTo(12);

    StageWatermarks sink = new StageWatermarks(new int[] {1}, new boolean[] {false},
        new int[][] {{}, {0}}, new boolean[] {false, false});
    assertThat(sink.monitoredOutputWatermarkMs()).as("nothing delivered yet").isEqualTo(MIN_WATERMARK_MS);
    sink.onProducerWatermark(0, 0, 30);
    sink.advanceInputWatermark();
    for (int node = 0; node < 2; node++) {
      sink.advanceNode(node, sink.upstreamWatermarkMs(node));
      sink.holdNode(node, node == 1 ? 25 : NO_HOLD);
    }
    assertThat(sink.outputWatermarkMs()).as("no writers: nothing sent").isEqualTo(MIN_WATERMARK_MS);
    assertThat(sink.monitoredOutputWatermarkMs()).as("the last node's hold").isEqualTo(25);
  }

  @Test
  void aHoldUpstreamLowersEveryNodeAfterIt() {
    watermarks.onProducerWatermark(0, 0, 50);
    watermarks.onProducerWatermark(0, 1, 50);
    watermarks.advanceInputWatermark();

    assertThat(pass(7, NO_HOLD)).containsExactly(7L, 7L);
    assertThat(watermarks.nodeWatermarkMs(0)).isEqualTo(50);
    assertThat(watermarks.nodeWatermarkMs(1)).isEqualTo(7);

    assertThat(pass(40, NO_HOLD)).containsExactly(40L, 40L);
    assertThat(watermarks.nodeWatermarkMs(1)).isEqualTo(40);
  }

  @Test
  void aNodesWatermarkNeverGoesBackWhenAHoldAppearsLater() {
    watermarks.onProducerWatermark(0, 0, 50);
    watermarks.onProducerWatermark(0, 1, 50);
    watermarks.advanceInputWatermark();
    pass(NO_HOLD, NO_HOLD);

    assertThat(pass(NO_HOLD, 30)).as("writer 2 already sent 50").containsExactly(Long.MIN_VALUE, Long.MIN_VALUE);
    assertThat(watermarks.nodeOutputMs(1)).isEqualTo(30);
    assertThat(watermarks.nodeWatermarkMs(2)).isEqualTo(50);
    assertThat(watermarks.outputWatermarkMs()).isEqualTo(50);
  }
}
