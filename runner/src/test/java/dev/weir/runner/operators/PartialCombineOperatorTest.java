package dev.weir.runner.operators;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.state.ContainerState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/** The producer half of combiner lifting: one accumulator per (key, window) per bundle. */
class PartialCombineOperatorTest {

  @Test
  void aBundleOfManyElementsLeavesAsOneAccumulatorPerKeyAndWindow() {
    PartialCombineOperator<String, Integer, int[]> partial = new PartialCombineOperator<>(StringUtf8Coder.of(),
        Sum.ofIntegers(), WindowingStrategy.of(FixedWindows.of(Duration.millis(10))));
    List<WindowedValue<?>> shuffled = new ArrayList<>();
    try (ContainerState state = ContainerState.inMemory(10)) {
      partial.open(new OperatorContext(PipelineOptionsFactory.create(), "combine", 0,
          Map.of(new TupleTag<>(), shuffled::add), state, dev.weir.runner.time.JobClock.SYSTEM));
      IntervalWindow w0 = new IntervalWindow(new Instant(0), new Instant(10));
      IntervalWindow w1 = new IntervalWindow(new Instant(10), new Instant(20));
      for (int i = 0; i < 1000; i++) {
        IntervalWindow w = i % 2 == 0 ? w0 : w1;
        partial.accept(WindowedValues.of(KV.of("k" + (i % 3), 1), w.start(), w, PaneInfo.NO_FIRING));
      }
      assertThat(shuffled).isEmpty(); // nothing crosses the shuffle before the bundle ends
      partial.finishBundle();
    }
    assertThat(partial.inputCount()).isEqualTo(1000);
    assertThat(shuffled).hasSize(6); // 3 keys x 2 windows, instead of 1000 elements
    int total = 0;
    for (WindowedValue<?> v : shuffled) {
      total += ((int[]) ((KV<?, ?>) v.getValue()).getValue())[0];
    }
    assertThat(total).isEqualTo(1000);
  }
}
