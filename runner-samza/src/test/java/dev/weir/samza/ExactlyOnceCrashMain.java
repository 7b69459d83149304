package dev.weir.samza;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.kafka.KafkaIO;
import org.apache.beam.sdk.io.kafka.KafkaRecord;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * The job of {@link SamzaExactlyOnceCrashIT}, one process of it. Every stage but the source is a
 * place where at-least-once would show:
 *
 * <ol>
 *   <li>{@code Read}: KafkaIO over the input topic, record timestamps = the records' create times
 *       (the writer's clock; watermark = newest timestamp - {@value #MAX_DELAY_MS} ms per partition);
 *       {@code Key}: record key and value as {@code KV<String, Long>};
 *   <li>{@code Relay} (stateful, keyed by record key, after a shuffle, with a side input): multiplies
 *       each value by its key's weight from the side input ({@code Create} of {@link #WEIGHTS},
 *       {@code View.asMap}: elements wait, pushed back, until it is ready), keeps it in a
 *       {@code BagState} and sets a processing-time timer {@value #RELAY_DELAY_MS} ms out, holding the
 *       watermark at the oldest kept timestamp; the timer sends every kept value on with its own
 *       timestamp and clears the bag. A relay that sent twice, or lost its bag, shows downstream;
 *   <li>{@code Tally} (stateful, keyed by group {@code g<key index mod 4>}, after a second shuffle):
 *       count and sum per group in {@code ValueState}s; each update appends {@code T g count sum} to the
 *       output file;
 *   <li>{@code Windows}: the relayed values in {@value #WINDOW_MS} ms fixed windows, summed per key
 *       ({@code Sum.longsPerKey}: a GroupByKey and a Combine); each result appends
 *       {@code W windowStart key sum} to the output file.
 * </ol>
 *
 * Lines go to the output file at least once (a DoFn writing a file is an external write); the test
 * compares what they say, not how often they were written. Flushed per line, so SIGKILL loses no
 * written line.
 *
 * <p>Args: {@code OUTPUT_FILE BOOTSTRAP TOPIC} then Weir's pipeline options.
 */
public final class ExactlyOnceCrashMain {
  static final long MAX_DELAY_MS = 2_000;
  static final long RELAY_DELAY_MS = 150;
  static final long WINDOW_MS = 2_000;
  static final int GROUPS = 4;
  /** Side input: weight of key {@code k<i>} is {@code i mod 3 + 1}, for the keys the test writes. */
  static final int KEYS = 12;

  private ExactlyOnceCrashMain() {}

  static long weight(String key) {
    return Integer.parseInt(key.substring(1)) % 3 + 1;
  }

  static String group(String key) {
    return "g" + Integer.parseInt(key.substring(1)) % GROUPS;
  }

  public static void main(String[] args) throws Exception {
    String output = args[0];
    String bootstrap = args[1];
    String topic = args[2];
    Pipeline p = Pipeline.create(PipelineOptionsFactory.fromArgs(Arrays.copyOfRange(args, 3, args.length)).create());
    List<KV<String, Long>> weights = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      weights.add(KV.of("k" + i, weight("k" + i)));
    }
    PCollectionView<Map<String, Long>> weightView = p
        .apply("Weights", Create.of(weights).withCoder(KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of())))
        .apply("WeightMap", View.asMap());
    PCollection<KV<String, Long>> relayed = p
        .apply("Read", KafkaIO.<String, String>read()
            .withBootstrapServers(bootstrap)
            .withTopic(topic)
            .withKeyDeserializer(StringDeserializer.class)
            .withValueDeserializer(StringDeserializer.class)
            .withCreateTime(Duration.millis(MAX_DELAY_MS))
            .withConsumerConfigUpdates(Map.of("auto.offset.reset", "earliest")))
        .apply("Key", MapElements.into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.longs()))
            .via((KafkaRecord<String, String> r) -> KV.of(r.getKV().getKey(), Long.parseLong(r.getKV().getValue()))))
        .apply("Relay", ParDo.of(new RelayFn(weightView)).withSideInputs(weightView));
    relayed
        .apply("ByGroup", MapElements.into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.longs()))
            .via((KV<String, Long> kv) -> KV.of(group(kv.getKey()), kv.getValue())))
        .apply("Tally", ParDo.of(new TallyFn(output)));
    relayed
        .apply("Windows", Window.into(FixedWindows.of(Duration.millis(WINDOW_MS))))
        .apply("SumPerKey", Sum.longsPerKey())
        .apply("WriteWindows", ParDo.of(new WriteWindowFn(output)));
    p.run().waitUntilFinish();
  }

  /** Weighs, keeps and, on a processing-time timer, sends on each key's values. */
  static final class RelayFn extends DoFn<KV<String, Long>, KV<String, Long>> {
    private final PCollectionView<Map<String, Long>> weights;

    @StateId("kept")
    private final StateSpec<BagState<TimestampedValue<Long>>> keptSpec =
        StateSpecs.bag(TimestampedValue.TimestampedValueCoder.of(VarLongCoder.of()));

    @StateId("oldest")
    private final StateSpec<ValueState<Instant>> oldestSpec = StateSpecs.value();

    @StateId("key")
    private final StateSpec<ValueState<String>> keySpec = StateSpecs.value(StringUtf8Coder.of());

    @TimerId("send")
    private final TimerSpec sendSpec = TimerSpecs.timer(TimeDomain.PROCESSING_TIME);

    RelayFn(PCollectionView<Map<String, Long>> weights) {
      this.weights = weights;
    }

    @ProcessElement
    public void process(ProcessContext c, @StateId("kept") BagState<TimestampedValue<Long>> kept,
        @StateId("oldest") ValueState<Instant> oldest, @StateId("key") ValueState<String> key,
        @TimerId("send") Timer send) {
      Long w = c.sideInput(weights).get(c.element().getKey());
      kept.add(TimestampedValue.of(c.element().getValue() * (w == null ? 0 : w), c.timestamp()));
      key.write(c.element().getKey());
      Instant before = oldest.read();
      if (before == null || c.timestamp().isBefore(before)) {
        oldest.write(c.timestamp());
        // (re)set: fires RELAY_DELAY_MS from now, holding the output watermark at the oldest kept value
        send.withOutputTimestamp(c.timestamp()).offset(Duration.millis(RELAY_DELAY_MS)).setRelative();
      }
    }

    @OnTimer("send")
    public void send(OnTimerContext c, @StateId("kept") BagState<TimestampedValue<Long>> kept,
        @StateId("oldest") ValueState<Instant> oldest, @StateId("key") ValueState<String> key) {
      String k = key.read();
      for (TimestampedValue<Long> v : kept.read()) {
        c.outputWithTimestamp(KV.of(k, v.getValue()), v.getTimestamp());
      }
      kept.clear();
      oldest.clear();
    }
  }

  /** Count and sum per group; appends {@code T group count sum} per update. */
  static final class TallyFn extends DoFn<KV<String, Long>, Void> {
    private final String output;

    @StateId("count")
    private final StateSpec<ValueState<Long>> countSpec = StateSpecs.value(VarLongCoder.of());

    @StateId("sum")
    private final StateSpec<ValueState<Long>> sumSpec = StateSpecs.value(VarLongCoder.of());

    TallyFn(String output) {
      this.output = output;
    }

    @ProcessElement
    public void process(@Element KV<String, Long> e, @StateId("count") ValueState<Long> count,
        @StateId("sum") ValueState<Long> sum) {
      long n = (count.read() == null ? 0 : count.read()) + 1;
      long s = (sum.read() == null ? 0 : sum.read()) + e.getValue();
      count.write(n);
      sum.write(s);
      append(output, "T " + e.getKey() + " " + n + " " + s);
    }
  }

  /** Appends {@code W windowStart key sum} per windowed result. */
  static final class WriteWindowFn extends DoFn<KV<String, Long>, Void> {
    private final String output;

    WriteWindowFn(String output) {
      this.output = output;
    }

    @ProcessElement
    public void process(@Element KV<String, Long> e, BoundedWindow window) {
      append(output, "W " + ((IntervalWindow) window).start().getMillis() + " " + e.getKey() + " " + e.getValue());
    }
  }

  private static void append(String output, String line) {
    StandaloneProcesses.appendLine(output, line);
  }
}
