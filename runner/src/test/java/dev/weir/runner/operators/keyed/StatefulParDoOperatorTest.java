package dev.weir.runner.operators.keyed;

import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.OperatorDriver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.state.ContainerState;
import dev.weir.runner.time.JobClock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.DoFnSchemaInformation;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/** The stateful ParDo operator's incremental timer firing and watermark hold, driven directly (no executor). */
class StatefulParDoOperatorTest {

  /**
   * Sets an event-time timer at each element's value, outputting {@code key@timestamp} when it
   * fires; key "p" also sets a processing-time timer an hour ahead whose output timestamp is 5.
   */
  static class TimerFn extends DoFn<KV<String, Long>, String> {
    @TimerId("e")
    private final TimerSpec eventSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    @TimerId("p")
    private final TimerSpec processingSpec = TimerSpecs.timer(TimeDomain.PROCESSING_TIME);

    @ProcessElement
    public void process(@Element KV<String, Long> element, @TimerId("e") Timer event,
        @TimerId("p") Timer processing) {
      event.set(new Instant(element.getValue()));
      if (element.getKey().equals("p")) {
        processing.withOutputTimestamp(new Instant(5)).offset(Duration.standardHours(1)).setRelative();
      }
    }

    @OnTimer("e")
    public void onEvent(@Key String key, @Timestamp Instant timestamp, OutputReceiver<String> out) {
      out.output(key + "@" + timestamp.getMillis());
    }

    @OnTimer("p")
    public void onProcessing(@Key String key, OutputReceiver<String> out) {
      out.output("p:" + key);
    }
  }

  private final TupleTag<String> tag = new TupleTag<>();
  private final List<WindowedValue<?>> out = new ArrayList<>();

  private StatefulParDoOperator<String, Long, String> open(ContainerState state) {
    KvCoder<String, Long> coder = KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of());
    StatefulParDoOperator<String, Long, String> op = new StatefulParDoOperator<>(new TimerFn(), tag, List.of(),
        coder, Map.of(tag, StringUtf8Coder.of()), WindowingStrategy.globalDefault(),
        DoFnSchemaInformation.create(), Map.of());
    op.open(new OperatorContext(PipelineOptionsFactory.create(), "timers", 0, Map.of(tag, out::add), state, JobClock.SYSTEM));
    return op;
  }

  private List<Object> values() {
    return out.stream().map(v -> (Object) v.getValue()).toList();
  }

  @Test
  void firesReadyTimersInSlicesHoldingTheOutputWatermarkAtTheEarliestUnfiredOne() {
    try (ContainerState state = ContainerState.inMemory(1000)) {
      StatefulParDoOperator<String, Long, String> op = open(state);
      op.accept(WindowedValues.timestampedValueInGlobalWindow(KV.of("c", 30L), new Instant(0)));
      op.accept(WindowedValues.timestampedValueInGlobalWindow(KV.of("a", 10L), new Instant(0)));
      op.accept(WindowedValues.timestampedValueInGlobalWindow(KV.of("b", 20L), new Instant(0)));
      op.finishBundle();
      assertThat(op.watermarkHold()).as("each timer holds at its output timestamp").isEqualTo(new Instant(10));

      OperatorDriver.deliver(op, new Instant(25));
      assertThat(out).as("a watermark only makes timers ready").isEmpty();
      assertThat(OperatorDriver.hasReadyTimers(op)).isTrue();
      assertThat(op.watermarkHold()).isEqualTo(new Instant(10));

      OperatorDriver.fire(op, 1);
      assertThat(values()).containsExactly("a@10");
      assertThat(OperatorDriver.hasReadyTimers(op)).isTrue();
      assertThat(op.watermarkHold()).as("the next unfired ready timer").isEqualTo(new Instant(20));

      OperatorDriver.fire(op, 10);
      assertThat(values()).containsExactly("a@10", "b@20");
      assertThat(OperatorDriver.hasReadyTimers(op)).isFalse();
      assertThat(op.watermarkHold()).as("the timer not yet ready").isEqualTo(new Instant(30));

      OperatorDriver.advance(op, BoundedWindow.TIMESTAMP_MAX_VALUE, 1);
      op.finishBundle();
      assertThat(values()).containsExactly("a@10", "b@20", "c@30");
      assertThat(op.watermarkHold()).isEqualTo(BoundedWindow.TIMESTAMP_MAX_VALUE);
      op.close();
    }
  }

  @Test
  void endOfInput_processingTimersPendingAfterTheEventTimersHoldTheWatermarkUntilTheyFired() {
    try (ContainerState state = ContainerState.inMemory(1000)) {
      StatefulParDoOperator<String, Long, String> op = open(state);
      op.accept(WindowedValues.timestampedValueInGlobalWindow(KV.of("p", 10L), new Instant(0)));
      op.finishBundle();
      assertThat(op.watermarkHold()).isEqualTo(new Instant(5));

      OperatorDriver.deliver(op, BoundedWindow.TIMESTAMP_MAX_VALUE);
      List<Instant> holdsWhileFiring = new ArrayList<>();
      int slices = 0;
      while (OperatorDriver.hasReadyTimers(op)) {
        holdsWhileFiring.add(op.watermarkHold());
        OperatorDriver.fire(op, 1);
        slices++;
      }
      op.finishBundle();
      assertThat(values()).contains("p@10");
      // The event-time timer, the window's cleanup timer, then the processing-time timer.
      assertThat(slices).isEqualTo(3);
      assertThat(holdsWhileFiring).containsOnly(new Instant(5));
      assertThat(op.watermarkHold()).isEqualTo(BoundedWindow.TIMESTAMP_MAX_VALUE);
      op.close();
    }
  }
}
