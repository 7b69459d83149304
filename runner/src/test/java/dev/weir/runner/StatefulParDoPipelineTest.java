package dev.weir.runner;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.TimerMap;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Max;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Instant;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Stateful ParDo on WeirRunner: user state through the object cache, event-time timer order. */
class StatefulParDoPipelineTest {
  @TempDir Path dir;

  /** Counts per key in a ValueState; the last count of each key is its number of elements. */
  static final class CountFn extends DoFn<KV<Integer, Integer>, KV<Integer, Long>> {
    @StateId("count")
    private final StateSpec<ValueState<Long>> countSpec = StateSpecs.value(VarLongCoder.of());

    @ProcessElement
    public void process(@Element KV<Integer, Integer> element, @StateId("count") ValueState<Long> count,
        OutputReceiver<KV<Integer, Long>> out) {
      Long current = count.read();
      long next = (current == null ? 0 : current) + 1;
      count.write(next);
      out.output(KV.of(element.getKey(), next));
    }
  }

  @ParameterizedTest(name = "{0}, streaming={1}")
  @CsvSource({"ROCKSDB,false", "ROCKSDB,true", "MEMORY,false", "MEMORY,true"})
  void statefulCounterIsExactWithACacheFarSmallerThanItsKeySpace(String backend, boolean streaming) {
    WeirPipelineOptions options = Pipelines.options(streaming);
    options.setStateBackend(dev.weir.state.StateBackend.valueOf(backend));
    options.setStateDirectory(dir.toString());
    options.setObjectCacheSize(8); // 500 keys: values are evicted and written back under the runner
    options.setMaxBundleSize(50);
    Pipeline p = Pipeline.create(options);
    List<KV<Integer, Integer>> input = new ArrayList<>();
    List<KV<Integer, Long>> expected = new ArrayList<>();
    for (int key = 0; key < 500; key++) {
      int n = 1 + key % 7;
      for (int i = 0; i < n; i++) {
        input.add(KV.of(key, i));
      }
      expected.add(KV.of(key, (long) n));
    }
    Collections.shuffle(input, new Random(7));
    PCollection<KV<Integer, Long>> counts = p.apply(Create.of(input)).apply(ParDo.of(new CountFn()))
        .apply(Max.longsPerKey());
    PAssert.that(counts).containsInAnyOrder(expected);
    p.run().waitUntilFinish();
  }

  /**
   * Sets one event-time timer per element (a timer map, set in shuffled order) and checks, per
   * key, that they fire in timestamp order: a firing earlier than the previous one of its key
   * fails the pipeline.
   */
  static final class OrderedTimersFn extends DoFn<KV<String, Long>, KV<String, Long>> {
    @TimerFamily("t")
    private final TimerSpec timersSpec = TimerSpecs.timerMap(TimeDomain.EVENT_TIME);

    @StateId("last")
    private final StateSpec<ValueState<Long>> lastSpec = StateSpecs.value(VarLongCoder.of());

    @ProcessElement
    public void process(@Element KV<String, Long> element, @TimerFamily("t") TimerMap timers) {
      timers.get("timer-" + element.getValue()).set(new Instant(element.getValue()));
    }

    @OnTimerFamily("t")
    public void onTimer(@Key String key, @Timestamp Instant timestamp, @StateId("last") ValueState<Long> last,
        OutputReceiver<KV<String, Long>> out) {
      Long previous = last.read();
      if (previous != null && previous > timestamp.getMillis()) {
        throw new IllegalStateException("timer at " + timestamp + " fired after one at " + previous);
      }
      last.write(timestamp.getMillis());
      out.output(KV.of(key, timestamp.getMillis()));
    }
  }

  @ParameterizedTest(name = "streaming={0}")
  @CsvSource({"false", "true"})
  void eventTimeTimersFireInTimestampOrderPerKey(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    List<KV<String, Long>> input = new ArrayList<>();
    for (String key : List.of("a", "b", "c")) {
      for (long t = 0; t < 200; t++) {
        input.add(KV.of(key, t * 10));
      }
    }
    List<KV<String, Long>> expected = new ArrayList<>(input);
    Collections.shuffle(input, new Random(3));
    PCollection<KV<String, Long>> fired = p.apply(Create.of(input))
        .apply(ParDo.of(new OrderedTimersFn()));
    PAssert.that(fired).containsInAnyOrder(expected);
    p.run().waitUntilFinish();
  }
}
