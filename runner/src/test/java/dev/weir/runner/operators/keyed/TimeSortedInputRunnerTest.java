package dev.weir.runner.operators.keyed;

import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.OperatorDriver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.state.ContainerState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.DoFnSchemaInformation;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * {@code @RequiresTimeSortedInput} through the stateful ParDo operator, driven directly: elements
 * buffered far beyond a store page and the object cache come out per key in timestamp order as the
 * watermark passes them; late ones are dropped unless within the allowed lateness.
 */
class TimeSortedInputRunnerTest {

  /** Outputs "key:timestamp" for each element, as the DoFn sees them. */
  static class Recorder extends DoFn<KV<String, Long>, String> {
    @StateId("seen")
    private final StateSpec<ValueState<Long>> seen = StateSpecs.value(VarLongCoder.of());

    @RequiresTimeSortedInput
    @ProcessElement
    public void process(@Element KV<String, Long> element, @StateId("seen") ValueState<Long> seen,
        OutputReceiver<String> out) {
      seen.write(element.getValue());
      out.output(element.getKey() + ":" + element.getValue());
    }
  }

  private final TupleTag<String> tag = new TupleTag<>();
  private final List<WindowedValue<?>> out = new ArrayList<>();

  private StatefulParDoOperator<String, Long, String> open(ContainerState state, Duration lateness) {
    KvCoder<String, Long> coder = KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of());
    StatefulParDoOperator<String, Long, String> op = new StatefulParDoOperator<>(new Recorder(), tag, List.of(),
        coder, Map.of(tag, StringUtf8Coder.of()), WindowingStrategy.globalDefault().withAllowedLateness(lateness),
        DoFnSchemaInformation.create(), Map.of());
    op.open(new OperatorContext(PipelineOptionsFactory.create(), "sorted", 0, Map.of(tag, out::add), state, dev.weir.runner.time.JobClock.SYSTEM));
    return op;
  }

  private static WindowedValue<KV<String, Long>> element(String key, long ts) {
    return WindowedValues.of(KV.of(key, ts), new Instant(ts), GlobalWindow.INSTANCE, PaneInfo.NO_FIRING);
  }

  /** Timestamps the DoFn saw for {@code key}, in the order it saw them, from {@code from} on. */
  private List<Long> seen(String key, int from) {
    List<Long> result = new ArrayList<>();
    for (WindowedValue<?> v : out.subList(from, out.size())) {
      String s = (String) v.getValue();
      if (s.startsWith(key + ":")) {
        long ts = Long.parseLong(s.substring(key.length() + 1));
        assertThat(v.getTimestamp()).isEqualTo(new Instant(ts));
        result.add(ts);
      }
    }
    return result;
  }

  @Test
  void elementsComeOutPerKeyInTimestampOrderAsTheWatermarkPassesAndLateOnesAreDropped() {
    try (ContainerState state = ContainerState.inMemory(16)) {
      StatefulParDoOperator<String, Long, String> op = open(state, Duration.ZERO);
      List<Long> stamps = new ArrayList<>();
      for (long t = 0; t < 2000; t++) {
        stamps.add(t);
      }
      java.util.Collections.shuffle(stamps, new Random(7));
      for (int i = 0; i < stamps.size(); i++) {
        op.accept(element(i % 2 == 0 ? "a" : "b", stamps.get(i)));
        if (i % 300 == 0) {
          op.finishBundle();
          state.commitIfRequested();
        }
      }
      op.finishBundle();
      assertThat(out).isEmpty();
      assertThat(op.watermarkHold()).isEqualTo(new Instant(0));

      OperatorDriver.advance(op, new Instant(1000));
      op.finishBundle();
      List<Long> a = seen("a", 0);
      List<Long> b = seen("b", 0);
      assertThat(a.size() + b.size()).isEqualTo(1001); // 0..1000: at or before the watermark
      assertThat(a).isSorted();
      assertThat(b).isSorted();
      assertThat(op.watermarkHold()).isEqualTo(new Instant(1001));

      int before = out.size();
      op.accept(element("a", 999)); // late: before the watermark, no allowed lateness
      op.accept(element("a", 1500)); // not late
      OperatorDriver.advance(op, BoundedWindow.TIMESTAMP_MAX_VALUE);
      op.finishBundle();
      List<Long> restA = seen("a", before);
      List<Long> restB = seen("b", before);
      assertThat(restA).isSorted().doesNotContain(999L).contains(1500L);
      assertThat(restB).isSorted();
      assertThat(restA.size() + restB.size()).isEqualTo(2000 - 1001 + 1);
      op.close();
    }
  }

  @Test
  void elementsWithinTheAllowedLatenessWaitForTheWatermarkToPassTheirLateness() {
    try (ContainerState state = ContainerState.inMemory(16)) {
      StatefulParDoOperator<String, Long, String> op = open(state, Duration.millis(100));
      op.accept(element("k", 50));
      op.accept(element("k", 10));
      OperatorDriver.advance(op, new Instant(60)); // 10 + 100 not yet passed
      assertThat(out).isEmpty();
      op.accept(element("k", 5)); // behind the watermark but within the allowed lateness
      OperatorDriver.advance(op, new Instant(106)); // passes 5 + 100
      op.finishBundle();
      assertThat(seen("k", 0)).containsExactly(5L, 10L, 50L);
      op.accept(element("k", 4)); // 4 + 100 < 106: dropped
      op.accept(element("k", 200));
      OperatorDriver.advance(op, BoundedWindow.TIMESTAMP_MAX_VALUE);
      op.finishBundle();
      assertThat(seen("k", 0)).containsExactly(5L, 10L, 50L, 200L);
      op.close();
    }
  }
}
