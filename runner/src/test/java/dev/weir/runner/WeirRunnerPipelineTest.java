package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.FlatMapElements;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.WithTimestamps;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** End-to-end pipelines on TestWeirRunner, each in batch and in streaming mode. */
class WeirRunnerPipelineTest {

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void wordCount_countsEveryWordAcrossAShuffle(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PCollection<KV<String, Long>> counts = p
        .apply(Create.of("a b c", "b c", "c", "d d d d"))
        .apply(FlatMapElements.into(TypeDescriptors.strings()).via(line -> Arrays.asList(line.split(" "))))
        .apply(Count.perElement());
    PAssert.that(counts).containsInAnyOrder(KV.of("a", 1L), KV.of("b", 2L), KV.of("c", 3L), KV.of("d", 4L));
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void groupByKey_groupsManyKeysOverPartitions(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    Integer[] numbers = new Integer[5000];
    for (int i = 0; i < numbers.length; i++) {
      numbers[i] = i;
    }
    PCollection<KV<Integer, Long>> sizes = p
        .apply(Create.of(Arrays.asList(numbers)))
        .apply(MapElements.via(new KeyByMod100()))
        .apply(GroupByKey.create())
        .apply(MapElements.via(new GroupSize()));
    KV<Integer, Long>[] expected = new KV[100];
    for (int k = 0; k < 100; k++) {
      expected[k] = KV.of(k, 50L);
    }
    PAssert.that(sizes).containsInAnyOrder(expected);
    p.run().waitUntilFinish();
  }

  static final TupleTag<String> EVEN = new TupleTag<>() {};
  static final TupleTag<String> ODD = new TupleTag<>() {};
  static final TupleTag<Integer> BIG = new TupleTag<>() {};

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void multiOutputParDo_routesEachTagToItsConsumers(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PCollectionTuple out = p.apply(Create.of(1, 2, 3, 4, 5, 100))
        .apply(ParDo.of(new SplitByParity()).withOutputTags(EVEN, TupleTagList.of(ODD).and(BIG)));
    PAssert.that(out.get(EVEN)).containsInAnyOrder("e2", "e4");
    PAssert.that(out.get(ODD)).containsInAnyOrder("o1", "o3", "o5");
    PAssert.that(out.get(BIG)).containsInAnyOrder(100);
    p.run().waitUntilFinish();
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void flatten_mergesInputsFromDifferentStagesAndDuplicates(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PCollection<String> a = p.apply("A", Create.of("a1", "a2"));
    PCollection<String> b = p.apply("B", Create.of("b1"));
    PCollection<String> empty = PCollectionList.<String>empty(p).apply("Empty", Flatten.pCollections())
        .setCoder(org.apache.beam.sdk.coders.StringUtf8Coder.of());
    PCollection<String> all = PCollectionList.of(a).and(b).and(a).and(empty).apply(Flatten.pCollections());
    PAssert.that(all).containsInAnyOrder("a1", "a2", "a1", "a2", "b1");
    PAssert.that(empty).empty();
    p.run().waitUntilFinish();
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void fixedWindows_groupByKeyGroupsPerWindow(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PCollection<KV<String, Integer>> sums = p
        .apply(Create.timestamped(
            org.apache.beam.sdk.values.TimestampedValue.of(KV.of("k", 1), new Instant(0)),
            org.apache.beam.sdk.values.TimestampedValue.of(KV.of("k", 2), new Instant(5_000)),
            org.apache.beam.sdk.values.TimestampedValue.of(KV.of("k", 10), new Instant(12_000)),
            org.apache.beam.sdk.values.TimestampedValue.of(KV.of("j", 7), new Instant(13_000))))
        .apply(Window.into(FixedWindows.of(Duration.standardSeconds(10))))
        .apply(Sum.integersPerKey());
    PAssert.that(sums).inWindow(new IntervalWindow(new Instant(0), new Instant(10_000)))
        .containsInAnyOrder(KV.of("k", 3));
    PAssert.that(sums).inWindow(new IntervalWindow(new Instant(10_000), new Instant(20_000)))
        .containsInAnyOrder(KV.of("k", 10), KV.of("j", 7));
    p.run().waitUntilFinish();
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void combinePerKey_combinesThroughItsExpansion(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PCollection<KV<String, Integer>> sums = p
        .apply(Create.of(KV.of("x", 1), KV.of("x", 2), KV.of("y", 5), KV.of("x", 3)))
        .apply(Sum.integersPerKey());
    PAssert.that(sums).containsInAnyOrder(KV.of("x", 6), KV.of("y", 5));
    p.run().waitUntilFinish();
  }

  /** The user's failure, to be found as the cause of PipelineExecutionException. */
  static final class BoomException extends RuntimeException {
    BoomException(String message) {
      super(message);
    }
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void failingDoFn_failsThePipelineWithTheUsersException(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    p.apply(Create.of(1, 2, 3)).apply(ParDo.of(new ThrowOnTwo()));
    long threadsBefore = weirThreads();
    assertThatThrownBy(() -> p.run().waitUntilFinish())
        .isInstanceOf(Pipeline.PipelineExecutionException.class)
        .hasCauseInstanceOf(BoomException.class)
        .cause().hasMessage("boom on 2");
    assertThat(weirThreads()).isLessThanOrEqualTo(threadsBefore);
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void failingPAssert_surfacesAsAssertionError(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PAssert.that(p.apply(Create.of(1, 2))).containsInAnyOrder(1, 2, 3);
    assertThatThrownBy(() -> p.run()).isInstanceOf(AssertionError.class);
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void metrics_areScopedPerStepAndMergedOverTasks(boolean streaming) {
    WeirPipelineOptions options = Pipelines.options(streaming);
    options.setRunner(WeirRunner.class);
    Pipeline p = Pipeline.create(options);
    p.apply(Create.of(1, 2, 3, 4, 5, 6, 7, 8))
        .apply("Counted", ParDo.of(new CountAndPass()))
        .apply("AlsoCounted", ParDo.of(new CountTwice()));
    PipelineResult result = p.run();
    result.waitUntilFinish();
    MetricQueryResults metrics = result.metrics().queryMetrics(MetricsFilter.builder()
        .addNameFilter(MetricNameFilter.named("weir", "elements")).build());
    List<MetricResult<Long>> counters = new java.util.ArrayList<>();
    metrics.getCounters().forEach(counters::add);
    assertThat(counters).hasSize(2);
    assertThat(counters).anySatisfy(r -> {
      assertThat(r.getKey().stepName()).startsWith("Counted/");
      assertThat(r.getAttempted()).isEqualTo(8L);
    });
    assertThat(counters).anySatisfy(r -> {
      assertThat(r.getKey().stepName()).startsWith("AlsoCounted/");
      assertThat(r.getAttempted()).isEqualTo(16L);
    });
    var distributions = result.metrics().queryMetrics(MetricsFilter.builder()
        .addNameFilter(MetricNameFilter.named("weir", "values")).build()).getDistributions();
    assertThat(distributions).singleElement().satisfies(d -> {
      assertThat(d.getAttempted().getSum()).isEqualTo(36L);
      assertThat(d.getAttempted().getMin()).isEqualTo(1L);
      assertThat(d.getAttempted().getMax()).isEqualTo(8L);
    });
  }

  @org.junit.jupiter.api.Test
  void timestamps_survivePartitioning() {
    Pipeline p = Pipelines.create(false);
    PCollection<Long> ts = p.apply(Create.of(1L, 2L, 3L))
        .apply(WithTimestamps.of((Long x) -> new Instant(x * 1000)))
        .apply(ParDo.of(new EmitTimestamp()));
    PAssert.that(ts).containsInAnyOrder(1000L, 2000L, 3000L);
    p.run().waitUntilFinish();
  }

  static final class KeyByMod100 extends org.apache.beam.sdk.transforms.SimpleFunction<Integer, KV<Integer, Integer>> {
    @Override
    public KV<Integer, Integer> apply(Integer i) {
      return KV.of(i % 100, i);
    }
  }

  static final class GroupSize
      extends org.apache.beam.sdk.transforms.SimpleFunction<KV<Integer, Iterable<Integer>>, KV<Integer, Long>> {
    @Override
    public KV<Integer, Long> apply(KV<Integer, Iterable<Integer>> kv) {
      long n = 0;
      for (Integer ignored : kv.getValue()) {
        n++;
      }
      return KV.of(kv.getKey(), n);
    }
  }

  static final class SplitByParity extends DoFn<Integer, String> {
    @ProcessElement
    public void process(@Element Integer i, MultiOutputReceiver r) {
      if (i >= 100) {
        r.get(BIG).output(i);
      } else if (i % 2 == 0) {
        r.get(EVEN).output("e" + i);
      } else {
        r.get(ODD).output("o" + i);
      }
    }
  }

  static final class ThrowOnTwo extends DoFn<Integer, Integer> {
    @ProcessElement
    public void process(@Element Integer i) {
      if (i == 2) {
        throw new BoomException("boom on " + i);
      }
    }
  }

  static final class CountAndPass extends DoFn<Integer, Integer> {
    @ProcessElement
    public void process(@Element Integer i, OutputReceiver<Integer> out) {
      Metrics.counter("weir", "elements").inc();
      Metrics.distribution("weir", "values").update(i);
      out.output(i);
    }
  }

  static final class CountTwice extends DoFn<Integer, Integer> {
    @ProcessElement
    public void process(@Element Integer i) {
      Metrics.counter("weir", "elements").inc(2);
    }
  }

  static final class EmitTimestamp extends DoFn<Long, Long> {
    @ProcessElement
    public void process(@Timestamp Instant t, OutputReceiver<Long> out) {
      out.output(t.getMillis());
    }
  }

  static long weirThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("weir-container-") && t.isAlive()).count();
  }
}
