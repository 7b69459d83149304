package dev.weir.runner.sideinput;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.PaneInfo.Timing;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.joda.time.Duration;
import org.junit.jupiter.api.Test;

/** Readiness and contents of triggered (latest pane wins) and untriggered (accumulating) views. */
class SideInputsTest {
  private static final GlobalWindow WINDOW = GlobalWindow.INSTANCE;

  private static PCollectionView<Long> triggeredSingleton() {
    Pipeline p = Pipeline.create(PipelineOptionsFactory.fromArgs("--runner=TestWeirRunner").create());
    return p.apply(Create.of(1L))
        .apply(Window.<Long>configure()
            .triggering(Repeatedly.forever(AfterPane.elementCountAtLeast(1)))
            .withAllowedLateness(Duration.ZERO)
            .discardingFiredPanes())
        .apply(Combine.globally(Sum.ofLongs()).withoutDefaults().asSingletonView());
  }

  private static WindowedValue<KV<Void, Iterable<Long>>> pane(long index, Long... values) {
    PaneInfo pane = PaneInfo.createPane(index == 0, false, Timing.EARLY, index, -1);
    return WindowedValues.of(KV.of((Void) null, List.of(values)), BoundedWindow.TIMESTAMP_MIN_VALUE, WINDOW, pane);
  }

  @Test
  void triggeredViewIsReadyAtItsFirstPaneAndKeepsOnlyTheLatestPane() {
    PCollectionView<Long> view = triggeredSingleton();
    SideInputs inputs = new SideInputs(List.of(view));
    assertThat(inputs.isReady(view, WINDOW)).isFalse();

    assertThat(inputs.add(0, pane(0, 10L))).isTrue();
    assertThat(inputs.isReady(view, WINDOW)).isTrue();
    assertThat(inputs.get(view, WINDOW)).isEqualTo(10L);

    assertThat(inputs.add(0, pane(1, 20L))).isTrue();
    assertThat(inputs.get(view, WINDOW)).isEqualTo(20L);

    assertThat(inputs.add(0, pane(1, 30L))).isFalse(); // not later than the pane held
    assertThat(inputs.add(0, pane(0, 40L))).isFalse();
    assertThat(inputs.get(view, WINDOW)).isEqualTo(20L);
  }

  @Test
  void untriggeredViewAccumulatesAndIsReadyOnlyPastItsWindow() {
    Pipeline p = Pipeline.create(PipelineOptionsFactory.fromArgs("--runner=TestWeirRunner").create());
    PCollectionView<Iterable<Integer>> view = p.apply(Create.of(1)).apply(View.asIterable());
    SideInputs inputs = new SideInputs(List.of(view));
    WindowedValue<?> element = WindowedValues.valueInGlobalWindow(7);

    assertThat(inputs.add(0, element)).isFalse();
    assertThat(inputs.isReady(view, WINDOW)).isFalse();
    inputs.advanceWatermark(0, BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis());
    assertThat(inputs.isReady(view, WINDOW)).isTrue();
    assertThat(inputs.get(view, WINDOW)).containsExactly(7);
  }
}
