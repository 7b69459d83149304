package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.SimpleFunction;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.transforms.WithTimestamps;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Acceptance test of the side-input join (Nexmark's BOUNDED_SIDE_INPUT_JOIN, {@code --query=13},
 * shape): the same pipeline runs on Beam's Direct runner, the reference, and on Weir in both
 * modes and on both state backends, and the output multisets must be equal.
 *
 * <p>The pipeline: {@value #MAIN_ELEMENTS} timestamped {@code KV<key, value>}s from a split
 * bounded source, in {@value #WINDOW_SECONDS}-second fixed windows, each joined in one ParDo
 * against a global {@code View.asMap} of 500 entries (even keys below 1000; main keys go up to
 * 1099, so odd keys and keys from 1000 have no entry), a global {@code View.asMultimap} (keys
 * below 100, several values each) and a windowed {@code View.asSingleton} with a default (a
 * per-window sum present for the first five windows only). Downstream of the join a per-window
 * sum by "matched / missing" adds a shuffle and the on-time panes. Every output records its
 * timestamp and window, so window assignment and timestamps are compared too.
 *
 * <p>Outputs are collected into a static map keyed by a per-run id ({@link Collect}); Direct and
 * Weir both run in this JVM.
 */
class SideInputJoinDirectEquivalenceTest {
  static final int MAIN_ELEMENTS = 4000;
  static final int MAIN_KEYS = 1100;
  static final int WINDOW_SECONDS = 10;
  static final int WINDOWS = 6;

  /** Per run id: what the run's collecting DoFns received. */
  static final Map<String, Queue<String>> RESULTS = new ConcurrentHashMap<>();

  private static List<String> direct;

  @TempDir Path stateDir;

  @BeforeAll
  static void runOnDirect() {
    PipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=DirectRunner", "--targetParallelism=2")
        .create();
    direct = run(options, "direct");
  }

  @ParameterizedTest(name = "{0}, streaming={1}")
  @CsvSource({"MEMORY,false", "MEMORY,true", "ROCKSDB,false", "ROCKSDB,true"})
  void weirProducesTheSameJoinAndWindowedSumsAsTheDirectRunner(String backend, boolean streaming) {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs(
        "--runner=WeirRunner", "--streaming=" + streaming, "--parallelism=3", "--containers=2",
        "--maxBundleSize=64", "--stateBackend=" + backend, "--stateDirectory=" + stateDir)
        .as(WeirPipelineOptions.class);
    List<String> weir = run(options, "weir-" + backend + "-" + streaming);

    assertThat(differences(direct, weir)).as("outputs in Direct only (-) or Weir only (+)").isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"join", "sum"})
  void theReferenceCoversMatchedAndMissingKeysAndDefaultedWindows(String kind) {
    // Guards the test itself: the comparison above is only meaningful if the reference exercises
    // every case (keys with and without a map entry, with multimap values, windows without a
    // singleton value).
    List<String> rows = direct.stream().filter(r -> r.startsWith(kind + "|")).toList();
    if (kind.equals("join")) {
      assertThat(rows).hasSize(MAIN_ELEMENTS);
      assertThat(rows).anyMatch(r -> r.contains("|name=none|"));
      assertThat(rows).anyMatch(r -> r.contains("|name=k"));
      assertThat(rows).anyMatch(r -> r.contains("|multi=[m"));
      assertThat(rows).anyMatch(r -> r.contains("|multi=[]|"));
      assertThat(rows).anyMatch(r -> r.contains("|rate=-1|"));
      assertThat(rows).anyMatch(r -> !r.contains("|rate=-1|"));
    } else {
      assertThat(rows).hasSize(2 * WINDOWS); // matched and missing in every window
    }
  }

  /** Builds and runs the join on {@code options}; returns the collected outputs, sorted. */
  static List<String> run(PipelineOptions options, String runId) {
    RESULTS.remove(runId);
    Pipeline p = Pipeline.create(options);
    FixedWindows windows = FixedWindows.of(Duration.standardSeconds(WINDOW_SECONDS));

    PCollection<KV<Long, Long>> main = p.apply("Main", GenerateSequence.from(0).to(MAIN_ELEMENTS))
        .apply("KeyAndTime", MapElements.via(new KeyAndValue()))
        .apply("Timestamps", WithTimestamps.of(kv -> new Instant(kv.getValue() * 37 % (WINDOWS * WINDOW_SECONDS * 1000L))))
        .apply("MainWindows", Window.into(windows));

    List<KV<Long, String>> mapEntries = new ArrayList<>();
    for (long k = 0; k < 1000; k += 2) {
      mapEntries.add(KV.of(k, "k" + k));
    }
    PCollectionView<Map<Long, String>> names = p.apply("MapEntries", Create.of(mapEntries)).apply("AsMap", View.asMap());

    List<KV<Long, String>> multiEntries = new ArrayList<>();
    for (long k = 0; k < 100; k++) {
      for (int v = 0; v <= k % 3; v++) {
        multiEntries.add(KV.of(k, "m" + k + "." + v));
      }
    }
    PCollectionView<Map<Long, Iterable<String>>> multi =
        p.apply("MultiEntries", Create.of(multiEntries)).apply("AsMultimap", View.asMultimap());

    List<TimestampedValue<Long>> rates = new ArrayList<>();
    for (int w = 0; w < WINDOWS - 1; w++) { // the last window has no rate: the default applies
      for (long r = 1; r <= 3; r++) {
        rates.add(TimestampedValue.of(100L * w + r, new Instant(w * WINDOW_SECONDS * 1000L + r * 1000)));
      }
    }
    PCollectionView<Long> rate = p.apply("Rates", Create.timestamped(rates))
        .apply("RateWindows", Window.into(windows))
        .apply("RateSum", Combine.globally(Sum.ofLongs()).withoutDefaults())
        .apply("AsSingleton", View.<Long>asSingleton().withDefaultValue(-1L));

    PCollection<KV<String, Long>> joined = main.apply("Join",
        ParDo.of(new Join(names, multi, rate)).withSideInputs(names, multi, rate));
    joined.apply("CollectJoin", ParDo.of(new Collect(runId, "join")));
    joined.apply("ByMatch", MapElements.via(new MatchedOrMissing()))
        .apply("SumPerWindow", Sum.longsPerKey())
        .apply("CollectSum", ParDo.of(new Collect(runId, "sum")));

    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
    List<String> result = new ArrayList<>(RESULTS.getOrDefault(runId, new ConcurrentLinkedQueue<>()));
    RESULTS.remove(runId);
    Collections.sort(result);
    return result;
  }

  /** Multiset difference of two sorted lists: "- x" for x only in expected, "+ x" only in actual (at most 20). */
  static List<String> differences(List<String> expected, List<String> actual) {
    Map<String, Integer> counts = new TreeMap<>();
    for (String e : expected) {
      counts.merge(e, 1, Integer::sum);
    }
    for (String a : actual) {
      counts.merge(a, -1, Integer::sum);
    }
    List<String> diff = new ArrayList<>();
    for (Map.Entry<String, Integer> entry : counts.entrySet()) {
      int c = entry.getValue();
      if (c != 0 && diff.size() < 20) {
        diff.add((c > 0 ? "- " : "+ ") + Math.abs(c) + "x " + entry.getKey());
      }
    }
    return diff;
  }

  /** i -> KV(i * 7919 mod 1100, i). */
  static final class KeyAndValue extends SimpleFunction<Long, KV<Long, Long>> {
    @Override
    public KV<Long, Long> apply(Long i) {
      return KV.of(i * 7919 % MAIN_KEYS, i);
    }
  }

  /** The join: one output per main element, with what each side input holds for it. */
  static final class Join extends DoFn<KV<Long, Long>, KV<String, Long>> {
    private final PCollectionView<Map<Long, String>> names;
    private final PCollectionView<Map<Long, Iterable<String>>> multi;
    private final PCollectionView<Long> rate;

    Join(PCollectionView<Map<Long, String>> names, PCollectionView<Map<Long, Iterable<String>>> multi,
        PCollectionView<Long> rate) {
      this.names = names;
      this.multi = multi;
      this.rate = rate;
    }

    @ProcessElement
    public void process(ProcessContext c, BoundedWindow window) {
      long key = c.element().getKey();
      String name = c.sideInput(names).get(key);
      List<String> values = new ArrayList<>();
      Iterable<String> found = c.sideInput(multi).get(key);
      if (found != null) {
        found.forEach(values::add);
      }
      Collections.sort(values); // a multimap's value order is unspecified
      String row = "key=" + key + "|value=" + c.element().getValue() + "|name=" + (name == null ? "none" : name)
          + "|multi=" + values + "|rate=" + c.sideInput(rate) + "|ts=" + c.timestamp().getMillis()
          + "|window=" + describe(window);
      c.output(KV.of(row, c.element().getValue()));
    }
  }

  /** KV(row, value) -> KV("matched" | "missing", value). */
  static final class MatchedOrMissing extends SimpleFunction<KV<String, Long>, KV<String, Long>> {
    @Override
    public KV<String, Long> apply(KV<String, Long> joined) {
      return KV.of(joined.getKey().contains("|name=none|") ? "missing" : "matched", joined.getValue());
    }
  }

  /** Appends "kind|element|ts=..|window=.." to {@link #RESULTS} under the run id. */
  static final class Collect extends DoFn<KV<String, Long>, Void> {
    private final String runId;
    private final String kind;

    Collect(String runId, String kind) {
      this.runId = runId;
      this.kind = kind;
    }

    @ProcessElement
    public void process(ProcessContext c, BoundedWindow window) {
      String row = kind.equals("join")
          ? c.element().getKey()
          : c.element().getKey() + "=" + c.element().getValue() + "|ts=" + c.timestamp().getMillis()
              + "|window=" + describe(window);
      RESULTS.computeIfAbsent(runId, id -> new ConcurrentLinkedQueue<>()).add(kind + "|" + row);
    }
  }

  static String describe(BoundedWindow window) {
    if (window instanceof IntervalWindow w) {
      return "[" + w.start().getMillis() + "," + w.end().getMillis() + ")";
    }
    return window.toString();
  }
}
