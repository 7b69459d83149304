package dev.weir.runner.timers;

import dev.weir.runner.state.ContainerState;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.OperatorDriver;
import dev.weir.runner.operators.keyed.StatefulParDoOperator;
import dev.weir.runner.time.JobClock;
import dev.weir.state.StateBackend;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.TimerMap;
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
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Event-time timers of a stateful DoFn survive a restart of the run loop: the operator and its
 * container's RocksDB storage are closed after a commit and reopened, and the remaining timers
 * fire in timestamp order (within each key and across keys), each exactly once.
 */
class TimerRestartTest {
  @TempDir Path dir;

  /** Sets one event-time timer per element (timer id = value, time = value); outputs (key, time). */
  static final class TimerFn extends DoFn<KV<String, Long>, KV<String, Long>> {
    @TimerFamily("t")
    private final TimerSpec spec = TimerSpecs.timerMap(TimeDomain.EVENT_TIME);

    @ProcessElement
    public void process(@Element KV<String, Long> element, @TimerFamily("t") TimerMap timers) {
      timers.get(Long.toString(element.getValue())).set(new Instant(element.getValue()));
    }

    @OnTimerFamily("t")
    public void onTimer(@Key String key, @Timestamp Instant timestamp, OutputReceiver<KV<String, Long>> out) {
      out.output(KV.of(key, timestamp.getMillis()));
    }
  }

  private final TupleTag<KV<String, Long>> tag = new TupleTag<>("out");

  private StatefulParDoOperator<String, Long, KV<String, Long>> open(ContainerState state,
      List<KV<String, Long>> out) {
    KvCoder<String, Long> coder = KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of());
    Map<TupleTag<?>, Coder<?>> outputCoders = Map.of(tag, coder);
    StatefulParDoOperator<String, Long, KV<String, Long>> op = new StatefulParDoOperator<>(new TimerFn(), tag,
        List.of(), coder, outputCoders, WindowingStrategy.globalDefault(), DoFnSchemaInformation.create(), Map.of());
    op.open(new OperatorContext(PipelineOptionsFactory.create(), "timers", 0,
        Map.of(tag, (WindowedValue<?> v) -> out.add((KV<String, Long>) v.getValue())), state, JobClock.SYSTEM));
    return op;
  }

  @Test
  @SuppressWarnings("unchecked")
  void timersFireInOrderAcrossARestartOfTheRunLoop() {
    Random random = new Random(42);
    Map<String, List<Long>> set = new HashMap<>();
    List<KV<String, Long>> beforeRestart = new ArrayList<>();
    // Run 1: 3 keys x 1000 timers (more than the in-memory heap holds), fire those before 20000.
    ContainerState state = new ContainerState(StateBackend.ROCKSDB, dir, 100, "run-1");
    StatefulParDoOperator<String, Long, KV<String, Long>> op = open(state, beforeRestart);
    for (int i = 0; i < 3000; i++) {
      String key = "k" + (i % 3);
      long ts = 1 + random.nextInt(100_000);
      set.computeIfAbsent(key, k -> new ArrayList<>()).add(ts);
      op.accept(WindowedValues.timestampedValueInGlobalWindow(KV.of(key, ts), new Instant(0)));
    }
    op.finishBundle();
    OperatorDriver.advance(op, new Instant(20_000));
    op.finishBundle();
    state.commit();
    op.close();
    state.close();

    // Run 2: the same operator position over the reopened storage; the watermark ends.
    List<KV<String, Long>> afterRestart = new ArrayList<>();
    ContainerState reopened = new ContainerState(StateBackend.ROCKSDB, dir, 100, "run-2");
    op = open(reopened, afterRestart);
    OperatorDriver.advance(op, BoundedWindow.TIMESTAMP_MAX_VALUE);
    op.finishBundle();
    op.close();
    reopened.close();

    assertThat(beforeRestart).isNotEmpty().allSatisfy(kv -> assertThat(kv.getValue()).isLessThan(20_000L));
    assertThat(afterRestart).isNotEmpty().allSatisfy(kv -> assertThat(kv.getValue()).isGreaterThanOrEqualTo(20_000L));
    List<Long> times = afterRestart.stream().map(KV::getValue).toList();
    assertThat(times).isSorted(); // across keys too: one index ordered by timestamp
    Map<String, List<Long>> fired = new HashMap<>();
    for (List<KV<String, Long>> run : List.of(beforeRestart, afterRestart)) {
      for (KV<String, Long> kv : run) {
        fired.computeIfAbsent(kv.getKey(), k -> new ArrayList<>()).add(kv.getValue());
      }
    }
    for (Map.Entry<String, List<Long>> e : set.entrySet()) {
      List<Long> expected = e.getValue().stream().distinct().sorted().toList();
      assertThat(fired.get(e.getKey())).as("timers of %s, in order, once each", e.getKey()).isEqualTo(expected);
    }
  }
}
