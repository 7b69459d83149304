package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.state.StateBackend;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.SimpleFunction;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A trigger that counts elements sees a {@code TestStream}'s {@code addElements} group as one
 * bundle, as on Beam's Direct runner: a triggered, accumulating one-hour tumble
 * ({@code Repeatedly.forever(AfterPane.elementCountAtLeast(1))}, no allowed lateness) over the
 * groups {1, 2}, {3}, {4} of one key fires its first pane after both elements of the first group
 * (3, then 6, then 10, then the final on-time pane of 10), not after the first element. Direct
 * gets there because its TestStream emits each group as one bundle and its GroupByKey hands all of
 * a bundle's elements of a key to the trigger in one {@code KeyedWorkItem}.
 *
 * <p>Each shape ({@link Shape}) runs on Direct (the reference, in this JVM) and on Weir in batch
 * and in streaming (in-memory and RocksDB state), and every pane is compared with its value,
 * timestamp, window and {@link PaneInfo} (timing, index, on-time index, first, last). Before the
 * fix Weir fired 1, 3, 6, 10, 10: its GroupByKey handed each element under a counting trigger to
 * runners-core on its own. With only that changed, a group whose elements reached the
 * GroupByKey's task more than {@code --maxBundleTimeMs} apart ({@link Shape#SLOW_UPSTREAM}) was
 * still split by the tick that ends old bundles.
 */
class TestStreamBundleTriggerPipelineTest {

  /** Per run id: the panes the run's {@link Collect} received. */
  static final Map<String, Queue<String>> RESULTS = new ConcurrentHashMap<>();

  private static final long HOUR_MS = Duration.standardHours(1).getMillis();
  /** The one-hour window every element falls in. */
  private static final String WINDOW = "[0," + HOUR_MS + ")";

  @TempDir Path stateDir;

  /** The pipelines compared. */
  enum Shape {
    /** The brief's tumble: Sum.longsPerKey over the groups {1, 2}, {3}, {4} of key "a". */
    SUM,
    /** The same with a plain GroupByKey (each pane's values summed downstream). */
    GROUP_BY_KEY,
    /** Two keys interleaved in a group ({a:1, b:10, a:2}, {b:20}, {a:3, a:4}): each key's part is one. */
    TWO_KEYS,
    /**
     * SUM behind a DoFn that takes {@value #SLOW_MS} ms per element, with {@code --maxBundleTimeMs=1}
     * on Weir: a group's elements reach the GroupByKey's task far apart, yet stay one bundle.
     */
    SLOW_UPSTREAM,
    /** SUM behind a DoFn that holds its bundle's elements until {@code @FinishBundle}. */
    FINISH_BUNDLE_UPSTREAM
  }

  /** What the {@link Shape#SLOW_UPSTREAM} DoFn takes per element, in ms. */
  static final long SLOW_MS = 30;

  /** Direct's panes of the brief's tumble, with the timings Direct gives them. */
  private static final List<String> DIRECT_SUM_PANES = List.of(
      pane("a", 3, "EARLY", 0, -1, true, false),
      pane("a", 6, "EARLY", 1, -1, false, false),
      pane("a", 10, "EARLY", 2, -1, false, false),
      pane("a", 10, "ON_TIME", 3, 0, false, true));

  @ParameterizedTest(name = "{0}")
  @EnumSource(Shape.class)
  void theDirectRunnerFiresOnePanePerGroup(Shape shape) {
    List<String> direct = run(directOptions(), "direct-" + shape, shape);
    if (shape != Shape.TWO_KEYS) {
      assertThat(direct).as("the reference itself").containsExactlyInAnyOrderElementsOf(DIRECT_SUM_PANES);
    }
  }

  @ParameterizedTest(name = "{0}, streaming={1}, {2}")
  @CsvSource({
      "SUM,false,MEMORY", "SUM,true,MEMORY", "SUM,true,ROCKSDB",
      "GROUP_BY_KEY,false,MEMORY", "GROUP_BY_KEY,true,MEMORY", "GROUP_BY_KEY,true,ROCKSDB",
      "TWO_KEYS,false,MEMORY", "TWO_KEYS,true,MEMORY",
      "SLOW_UPSTREAM,false,MEMORY", "SLOW_UPSTREAM,true,MEMORY",
      "FINISH_BUNDLE_UPSTREAM,false,MEMORY", "FINISH_BUNDLE_UPSTREAM,true,MEMORY"})
  void weirFiresTheDirectRunnersPanes(Shape shape, boolean streaming, StateBackend backend) {
    List<String> direct = run(directOptions(), "direct-" + shape + "-" + streaming + "-" + backend, shape);
    WeirPipelineOptions options = Pipelines.options(streaming);
    options.setStateBackend(backend);
    options.setStateDirectory(stateDir.toString());
    if (shape == Shape.SLOW_UPSTREAM) {
      options.setMaxBundleTimeMs(1); // a bundle older than 1 ms would end at the next tick (every 5 ms)
      options.setParallelism(1); // the GroupByKey's task in the other container than the source's
    }
    List<String> weir = run(options, "weir-" + shape + "-" + streaming + "-" + backend, shape);

    if (shape != Shape.TWO_KEYS) {
      assertThat(weir).containsExactlyInAnyOrderElementsOf(DIRECT_SUM_PANES);
    }
    assertThat(weir).as("Weir's panes against Direct's").containsExactlyInAnyOrderElementsOf(direct);
  }

  private static PipelineOptions directOptions() {
    return PipelineOptionsFactory.fromArgs("--runner=DirectRunner", "--streaming=true").create();
  }

  /** Runs {@code shape} on {@code options}; returns the panes, described by {@link #pane}, sorted. */
  static List<String> run(PipelineOptions options, String runId, Shape shape) {
    RESULTS.remove(runId);
    Pipeline p = Pipeline.create(options);
    PCollection<KV<String, Long>> events = p.apply(shape == Shape.TWO_KEYS ? twoKeys() : oneKey());
    if (shape == Shape.SLOW_UPSTREAM) {
      events = events.apply(ParDo.of(new Slow()));
    } else if (shape == Shape.FINISH_BUNDLE_UPSTREAM) {
      events = events.apply(ParDo.of(new HoldUntilFinishBundle()));
    }
    PCollection<KV<String, Long>> input = events
        .apply(Window.<KV<String, Long>>into(FixedWindows.of(Duration.standardHours(1)))
            .triggering(Repeatedly.forever(AfterPane.elementCountAtLeast(1)))
            .withAllowedLateness(Duration.ZERO)
            .accumulatingFiredPanes());
    PCollection<KV<String, Long>> sums = shape == Shape.GROUP_BY_KEY
        ? input.apply(GroupByKey.create()).apply(MapElements.via(new SumValues()))
        : input.apply(Sum.longsPerKey());
    sums.apply(ParDo.of(new Collect(runId)));
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
    List<String> panes = new ArrayList<>(RESULTS.getOrDefault(runId, new ConcurrentLinkedQueue<>()));
    RESULTS.remove(runId);
    Collections.sort(panes);
    return panes;
  }

  /** The brief's input: {1, 2}, {3}, {4} of key "a", a minute apart, in the first hour. */
  private static TestStream<KV<String, Long>> oneKey() {
    return TestStream.create(KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of()))
        .addElements(at("a", 1, 1), at("a", 2, 2))
        .addElements(at("a", 3, 3))
        .addElements(at("a", 4, 4))
        .advanceWatermarkToInfinity();
  }

  private static TestStream<KV<String, Long>> twoKeys() {
    return TestStream.create(KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of()))
        .addElements(at("a", 1, 1), at("b", 10, 2), at("a", 2, 3))
        .addElements(at("b", 20, 4))
        .addElements(at("a", 3, 5), at("a", 4, 6))
        .advanceWatermarkToInfinity();
  }

  private static TimestampedValue<KV<String, Long>> at(String key, long value, int minute) {
    return TimestampedValue.of(KV.of(key, value), new Instant(Duration.standardMinutes(minute).getMillis()));
  }

  /** A pane as the tests compare it: key, value, the pane's info, timestamp and window. */
  static String pane(String key, long value, String timing, long index, long onTimeIndex, boolean first,
      boolean last) {
    return key + "=" + value + "|" + timing + " index=" + index + " onTimeIndex=" + onTimeIndex
        + (first ? " first" : "") + (last ? " last" : "") + "|ts=" + (HOUR_MS - 1) + "|window=" + WINDOW;
  }

  /** KV(key, values) to KV(key, their sum). */
  static final class SumValues extends SimpleFunction<KV<String, Iterable<Long>>, KV<String, Long>> {
    @Override
    public KV<String, Long> apply(KV<String, Iterable<Long>> kv) {
      long sum = 0;
      for (long v : kv.getValue()) {
        sum += v;
      }
      return KV.of(kv.getKey(), sum);
    }
  }

  /** Passes each element on after {@value #SLOW_MS} ms. */
  static final class Slow extends DoFn<KV<String, Long>, KV<String, Long>> {
    @ProcessElement
    public void process(@Element KV<String, Long> element, OutputReceiver<KV<String, Long>> out)
        throws InterruptedException {
      Thread.sleep(SLOW_MS);
      out.output(element);
    }
  }

  /** Holds its bundle's elements (in the global window) and emits them at {@code @FinishBundle}. */
  static final class HoldUntilFinishBundle extends DoFn<KV<String, Long>, KV<String, Long>> {
    private transient List<TimestampedValue<KV<String, Long>>> held;

    @StartBundle
    public void start() {
      held = new ArrayList<>();
    }

    @ProcessElement
    public void process(@Element KV<String, Long> element, @Timestamp Instant timestamp) {
      held.add(TimestampedValue.of(element, timestamp));
    }

    @FinishBundle
    public void finish(FinishBundleContext c) {
      for (TimestampedValue<KV<String, Long>> v : held) {
        c.output(v.getValue(), v.getTimestamp(), GlobalWindow.INSTANCE);
      }
      held = null;
    }
  }

  /** Appends each pane, described by {@link #pane}, to {@link #RESULTS} under the run id. */
  static final class Collect extends DoFn<KV<String, Long>, Void> {
    private final String runId;

    Collect(String runId) {
      this.runId = runId;
    }

    @ProcessElement
    public void process(ProcessContext c, BoundedWindow window) {
      PaneInfo info = c.pane();
      String w = window instanceof IntervalWindow iw
          ? "[" + iw.start().getMillis() + "," + iw.end().getMillis() + ")" : window.toString();
      String row = c.element().getKey() + "=" + c.element().getValue() + "|" + info.getTiming()
          + " index=" + info.getIndex() + " onTimeIndex=" + info.getNonSpeculativeIndex()
          + (info.isFirst() ? " first" : "") + (info.isLast() ? " last" : "")
          + "|ts=" + c.timestamp().getMillis() + "|window=" + w;
      RESULTS.computeIfAbsent(runId, id -> new ConcurrentLinkedQueue<>()).add(row);
    }
  }
}
