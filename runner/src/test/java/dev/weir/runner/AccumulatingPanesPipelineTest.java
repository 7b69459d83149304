package dev.weir.runner;

import dev.weir.state.StateBackend;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.CombiningState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.Values;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.AfterProcessingTime;
import org.apache.beam.sdk.transforms.windowing.AfterWatermark;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Accumulating panes of a Combine (issue 17): each pane carries everything so far (1, 3, 6, 10 for
 * inputs 1, 2, 3, 4) and never changes once emitted, whatever the combine fn does with its
 * accumulator in place ({@code Sum}'s {@code int[]}, a list that {@code extractOutput} returns as
 * is), whether the combine is lifted (default trigger, late panes: the merging half keeps a
 * combining state) or not (a data-driven or early-firing trigger: GroupByKey then
 * Combine.GroupedValues), and for a user's {@code CombiningState}. Every case runs on Beam's Direct
 * runner too, the reference for the expected panes. Before the fix the lifted list accumulator's
 * on-time pane [1, 2] reached PAssert as [1, 2, 3, 4] (the combining state handed its accumulator
 * out by reference and then added the late elements to it).
 */
class AccumulatingPanesPipelineTest {

  /** Weir in batch (in-memory state), Weir in streaming (RocksDB state), Beam's Direct runner (the reference). */
  private static PipelineOptions options(String runner) {
    return switch (runner) {
      case "weir-batch" -> Pipelines.options(false);
      case "weir-streaming-rocksdb" -> {
        WeirPipelineOptions options = Pipelines.options(true);
        options.setStateBackend(StateBackend.ROCKSDB);
        yield options;
      }
      default -> PipelineOptionsFactory.fromArgs("--runner=DirectRunner", "--streaming=true").create();
    };
  }

  private static TestStream<KV<String, Integer>> oneToFour() {
    TestStream.Builder<KV<String, Integer>> b =
        TestStream.create(KvCoder.of(StringUtf8Coder.of(), VarIntCoder.of()));
    for (int i = 1; i <= 4; i++) {
      b = b.addElements(TimestampedValue.of(KV.of("a", i), new Instant(i)))
          .advanceProcessingTime(Duration.standardSeconds(10));
    }
    return b.advanceWatermarkToInfinity();
  }

  private static Window<KV<String, Integer>> perElementAccumulating() {
    return Window.<KV<String, Integer>>into(FixedWindows.of(Duration.standardMinutes(1)))
        .triggering(Repeatedly.forever(AfterPane.elementCountAtLeast(1)))
        .withAllowedLateness(Duration.ZERO)
        .accumulatingFiredPanes();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"weir-batch", "weir-streaming-rocksdb", "direct"})
  void perElementPanesOfASumAccumulate(String runner) {
    Pipeline p = Pipeline.create(options(runner));
    PCollection<Integer> sums = p.apply(oneToFour()).apply(perElementAccumulating())
        .apply(Sum.integersPerKey()).apply(Values.create());
    PAssert.that(sums).containsInAnyOrder(1, 3, 6, 10, 10);
    p.run().waitUntilFinish();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"weir-batch", "weir-streaming-rocksdb", "direct"})
  void perElementPanesOfAGlobalSumAccumulate(String runner) {
    Pipeline p = Pipeline.create(options(runner));
    PCollection<Integer> sums = p.apply(oneToFour()).apply(perElementAccumulating())
        .apply(Values.create()).apply(Sum.integersGlobally().withoutDefaults());
    PAssert.that(sums).containsInAnyOrder(1, 3, 6, 10, 10);
    p.run().waitUntilFinish();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"weir-batch", "weir-streaming-rocksdb", "direct"})
  void perElementPanesOfAListAccumulatorAccumulate(String runner) {
    Pipeline p = Pipeline.create(options(runner));
    PCollection<List<Integer>> lists = p.apply(oneToFour()).apply(perElementAccumulating())
        .apply(Combine.perKey(new ToListFn())).apply(Values.create());
    PAssert.that(lists).containsInAnyOrder(List.of(1), List.of(1, 2), List.of(1, 2, 3), List.of(1, 2, 3, 4),
        List.of(1, 2, 3, 4));
    p.run().waitUntilFinish();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"weir-batch", "weir-streaming-rocksdb", "direct"})
  void earlyFiringsOfAListAccumulatorAccumulate(String runner) {
    Pipeline p = Pipeline.create(options(runner));
    PCollection<Integer> sizes = p.apply(oneToFour())
        .apply(Window.<KV<String, Integer>>into(FixedWindows.of(Duration.standardMinutes(1)))
            .triggering(AfterWatermark.pastEndOfWindow().withEarlyFirings(
                AfterProcessingTime.pastFirstElementInPane().plusDelayOf(Duration.standardSeconds(5))))
            .withAllowedLateness(Duration.ZERO)
            .accumulatingFiredPanes())
        .apply(Combine.perKey(new ToListFn())).apply(Values.create())
        .apply(MapElements.into(TypeDescriptors.integers()).via(l -> l.stream().mapToInt(Integer::intValue).sum()));
    PAssert.that(sizes).containsInAnyOrder(1, 3, 6, 10, 10);
    p.run().waitUntilFinish();
  }

  private static TestStream<KV<String, Integer>> onTimeThenLate() {
    return TestStream.create(KvCoder.of(StringUtf8Coder.of(), VarIntCoder.of()))
        .addElements(TimestampedValue.of(KV.of("a", 1), new Instant(1)), TimestampedValue.of(KV.of("a", 2), new Instant(2)))
        .advanceWatermarkTo(new Instant(Duration.standardMinutes(2).getMillis()))
        .addElements(TimestampedValue.of(KV.of("a", 3), new Instant(3)))
        .advanceWatermarkTo(new Instant(Duration.standardMinutes(3).getMillis()))
        .addElements(TimestampedValue.of(KV.of("a", 4), new Instant(4)))
        .advanceWatermarkToInfinity();
  }

  /** As {@link #onTimeThenLate} but the late elements are separated by a processing-time advance only. */
  private static TestStream<KV<String, Integer>> onTimeThenLateByProcessingTime() {
    return TestStream.create(KvCoder.of(StringUtf8Coder.of(), VarIntCoder.of()))
        .addElements(TimestampedValue.of(KV.of("a", 1), new Instant(1)), TimestampedValue.of(KV.of("a", 2), new Instant(2)))
        .advanceWatermarkTo(new Instant(Duration.standardMinutes(2).getMillis()))
        .addElements(TimestampedValue.of(KV.of("a", 3), new Instant(3)))
        .advanceProcessingTime(Duration.standardSeconds(10))
        .addElements(TimestampedValue.of(KV.of("a", 4), new Instant(4)))
        .advanceWatermarkToInfinity();
  }

  /**
   * Each test-stream event is processed to the end before the next, lifted partial combine
   * included: before the fix the two late elements shared a partial-combine bundle and fired one
   * late pane (3, 10; Direct: 3, 6, 10).
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"weir-batch", "weir-streaming-rocksdb", "direct"})
  void latePanesSeparatedByAProcessingTimeAdvanceFireSeparately(String runner) {
    Pipeline p = Pipeline.create(options(runner));
    PCollection<Integer> sums = p.apply(onTimeThenLateByProcessingTime()).apply(lateAccumulating())
        .apply(Sum.integersPerKey()).apply(Values.create());
    PAssert.that(sums).containsInAnyOrder(3, 6, 10);
    p.run().waitUntilFinish();
  }

  private static Window<KV<String, Integer>> lateAccumulating() {
    return Window.<KV<String, Integer>>into(FixedWindows.of(Duration.standardMinutes(1)))
        .withAllowedLateness(Duration.standardHours(1))
        .accumulatingFiredPanes();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"weir-batch", "weir-streaming-rocksdb", "direct"})
  void latePanesOfALiftedSumAccumulate(String runner) {
    Pipeline p = Pipeline.create(options(runner));
    PCollection<Integer> sums = p.apply(onTimeThenLate()).apply(lateAccumulating())
        .apply(Sum.integersPerKey()).apply(Values.create());
    PAssert.that(sums).containsInAnyOrder(3, 6, 10);
    p.run().waitUntilFinish();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"weir-batch", "weir-streaming-rocksdb", "direct"})
  void latePanesOfALiftedListAccumulatorAccumulate(String runner) {
    Pipeline p = Pipeline.create(options(runner));
    PCollection<List<Integer>> lists = p.apply(onTimeThenLate()).apply(lateAccumulating())
        .apply(Combine.perKey(new ToListFn())).apply(Values.create());
    PAssert.that(lists).containsInAnyOrder(List.of(1, 2), List.of(1, 2, 3), List.of(1, 2, 3, 4));
    p.run().waitUntilFinish();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"weir-batch", "weir-streaming-rocksdb", "direct"})
  void whatAUserCombiningStateReadStaysAsItWas(String runner) {
    Pipeline p = Pipeline.create(options(runner));
    PCollection<List<Integer>> reads = p.apply(oneToFour()).apply(ParDo.of(new ReadAfterEachAdd()));
    PAssert.that(reads).containsInAnyOrder(List.of(1), List.of(1, 2), List.of(1, 2, 3), List.of(1, 2, 3, 4));
    p.run().waitUntilFinish();
  }

  /** Adds each value to a list-accumulating combining state and outputs the state's read. */
  static final class ReadAfterEachAdd extends DoFn<KV<String, Integer>, List<Integer>> {
    @StateId("list")
    private final StateSpec<CombiningState<Integer, List<Integer>, List<Integer>>> list =
        StateSpecs.combining(ListCoder.of(VarIntCoder.of()), new ToListFn());

    @ProcessElement
    public void process(@Element KV<String, Integer> element,
        @StateId("list") CombiningState<Integer, List<Integer>, List<Integer>> state,
        OutputReceiver<List<Integer>> out) {
      state.add(element.getValue());
      out.output(state.read());
    }
  }

  /** A list accumulator mutated in place by addInput and merge, returned as is by extractOutput. */
  static final class ToListFn extends CombineFn<Integer, List<Integer>, List<Integer>> {
    @Override
    public List<Integer> createAccumulator() {
      return new ArrayList<>();
    }

    @Override
    public List<Integer> addInput(List<Integer> accumulator, Integer input) {
      accumulator.add(input);
      return accumulator;
    }

    @Override
    public List<Integer> mergeAccumulators(Iterable<List<Integer>> accumulators) {
      List<Integer> merged = null;
      for (List<Integer> a : accumulators) {
        if (merged == null) {
          merged = a;
        } else {
          merged.addAll(a);
        }
      }
      return merged == null ? new ArrayList<>() : merged;
    }

    @Override
    public List<Integer> extractOutput(List<Integer> accumulator) {
      accumulator.sort(null);
      return accumulator;
    }

    @Override
    public Coder<List<Integer>> getAccumulatorCoder(CoderRegistry registry, Coder<Integer> inputCoder) {
      return ListCoder.of(VarIntCoder.of());
    }

    @Override
    public Coder<List<Integer>> getDefaultOutputCoder(CoderRegistry registry, Coder<Integer> inputCoder) {
      return ListCoder.of(VarIntCoder.of());
    }
  }
}
