package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A keyed stateful ParDo joining its input with a side input, in batch and streaming mode. */
class StatefulSideInputPipelineTest {

  /**
   * Sums each key's values per window in state, names the key from the window's side-input map,
   * and emits {@code key:name:sum} from an event-time timer at the end of the window.
   */
  static final class JoinAndSumFn extends DoFn<KV<String, Integer>, String> {
    private final PCollectionView<Map<String, String>> names;

    @StateId("sum")
    private final StateSpec<ValueState<Integer>> sumSpec = StateSpecs.value(VarIntCoder.of());

    @StateId("name")
    private final StateSpec<ValueState<String>> nameSpec = StateSpecs.value(StringUtf8Coder.of());

    @TimerId("flush")
    private final TimerSpec flushSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    JoinAndSumFn(PCollectionView<Map<String, String>> names) {
      this.names = names;
    }

    @ProcessElement
    public void process(ProcessContext c, BoundedWindow window, @StateId("sum") ValueState<Integer> sum,
        @StateId("name") ValueState<String> name, @TimerId("flush") Timer flush) {
      Integer current = sum.read();
      sum.write((current == null ? 0 : current) + c.element().getValue());
      name.write(c.sideInput(names).getOrDefault(c.element().getKey(), "?"));
      flush.set(window.maxTimestamp());
    }

    @OnTimer("flush")
    public void flush(@Key String key, @StateId("sum") ValueState<Integer> sum,
        @StateId("name") ValueState<String> name, OutputReceiver<String> out) {
      out.output(key + ":" + name.read() + ":" + sum.read());
    }
  }

  /** Delays the side input, so that main-input elements arrive before their side-input windows are ready. */
  static final class Slow<T> extends DoFn<T, T> {
    @ProcessElement
    public void process(@Element T element, OutputReceiver<T> out) throws InterruptedException {
      Thread.sleep(100);
      out.output(element);
    }
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void timersOfAStatefulSideInputJoinFireAfterTheElementsWaitingForTheirSideInput(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PCollectionView<Map<String, String>> names = p
        .apply("Names", Create.timestamped(
            TimestampedValue.of(KV.of("a", "alpha"), new Instant(0)),
            TimestampedValue.of(KV.of("b", "beta"), new Instant(3)),
            TimestampedValue.of(KV.of("c", "gamma"), new Instant(11)),
            TimestampedValue.of(KV.of("a", "ALPHA"), new Instant(13))))
        .apply("NamesWindow", Window.into(FixedWindows.of(Duration.millis(10))))
        .apply("SlowNames", ParDo.of(new Slow<>()))
        .apply(View.asMap());
    PCollection<String> out = p
        .apply("Values", Create.timestamped(
            TimestampedValue.of(KV.of("a", 1), new Instant(1)),
            TimestampedValue.of(KV.of("b", 2), new Instant(2)),
            TimestampedValue.of(KV.of("a", 3), new Instant(5)),
            TimestampedValue.of(KV.of("a", 10), new Instant(12)),
            TimestampedValue.of(KV.of("c", 4), new Instant(15))))
        .apply("ValuesWindow", Window.into(FixedWindows.of(Duration.millis(10))))
        .apply("JoinAndSum", ParDo.of(new JoinAndSumFn(names)).withSideInputs(names));
    PAssert.that(out).containsInAnyOrder("a:alpha:4", "b:beta:2", "a:ALPHA:10", "c:gamma:4");
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
  }
}
