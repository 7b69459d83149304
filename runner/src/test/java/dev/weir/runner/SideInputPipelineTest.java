package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.transforms.WithTimestamps;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionView;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Side inputs of every view kind, in batch and streaming mode. */
class SideInputPipelineTest {

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void everyViewKindIsReadInTheGlobalWindow(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    List<Integer> mainValues = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      mainValues.add(i % 5);
    }
    PCollection<Integer> main = p.apply("Main", Create.of(mainValues));
    PCollectionView<Integer> singleton = p.apply("One", Create.of(100)).apply(View.asSingleton());
    PCollectionView<Iterable<Integer>> iterable = p.apply("Iter", Create.of(1, 2, 3)).apply(View.asIterable());
    PCollectionView<List<Integer>> list = p.apply("List", Create.of(10, 20, 30)).apply(View.asList());
    PCollectionView<Map<Integer, String>> map = p.apply("Map",
        Create.of(KV.of(0, "zero"), KV.of(1, "one"), KV.of(2, "two"), KV.of(3, "three"), KV.of(4, "four")))
        .apply(View.asMap());
    PCollectionView<Map<Integer, Iterable<String>>> multimap = p.apply("Multi",
        Create.of(KV.of(0, "a"), KV.of(0, "b"), KV.of(1, "c"))).apply(View.asMultimap());
    PCollection<String> out = main.apply(ParDo.of(new UseAll(singleton, iterable, list, map, multimap))
        .withSideInputs(singleton, iterable, list, map, multimap));
    List<String> expected = new ArrayList<>();
    String[] names = {"zero", "one", "two", "three", "four"};
    for (int v : mainValues) {
      int multi = v == 0 ? 2 : v == 1 ? 1 : 0;
      expected.add(v + ":" + names[v] + ":" + (100 + 6 + 60) + ":" + multi);
    }
    PAssert.that(out).containsInAnyOrder(expected);
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void windowedSingletonIsMatchedPerWindowAndMissingWindowsUseTheDefault(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PCollection<Long> main = p.apply("Main", Create.of(1L, 12L, 25L))
        .apply("MainTs", WithTimestamps.of(Instant::new))
        .apply("MainWin", Window.into(FixedWindows.of(Duration.millis(10))));
    PCollectionView<Long> side = p.apply("Side", Create.of(5L, 15L))
        .apply("SideTs", WithTimestamps.of(Instant::new))
        .apply("SideWin", Window.into(FixedWindows.of(Duration.millis(10))))
        .apply(View.<Long>asSingleton().withDefaultValue(-1L));
    PCollection<String> out = main.apply(ParDo.of(new PairWithSide(side)).withSideInputs(side));
    PAssert.that(out).containsInAnyOrder("1->5", "12->15", "25->-1");
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
  }

  static final class PairWithSide extends DoFn<Long, String> {
    private final PCollectionView<Long> side;

    PairWithSide(PCollectionView<Long> side) {
      this.side = side;
    }

    @ProcessElement
    public void process(ProcessContext c) {
      c.output(c.element() + "->" + c.sideInput(side));
    }
  }

  static final class UseAll extends DoFn<Integer, String> {
    private final PCollectionView<Integer> singleton;
    private final PCollectionView<Iterable<Integer>> iterable;
    private final PCollectionView<List<Integer>> list;
    private final PCollectionView<Map<Integer, String>> map;
    private final PCollectionView<Map<Integer, Iterable<String>>> multimap;

    UseAll(PCollectionView<Integer> singleton, PCollectionView<Iterable<Integer>> iterable,
        PCollectionView<List<Integer>> list, PCollectionView<Map<Integer, String>> map,
        PCollectionView<Map<Integer, Iterable<String>>> multimap) {
      this.singleton = singleton;
      this.iterable = iterable;
      this.list = list;
      this.map = map;
      this.multimap = multimap;
    }

    @ProcessElement
    public void process(ProcessContext c) {
      int sum = c.sideInput(singleton);
      for (int i : c.sideInput(iterable)) {
        sum += i;
      }
      for (int i : c.sideInput(list)) {
        sum += i;
      }
      Iterable<String> multi = c.sideInput(multimap).get(c.element());
      int multiCount = 0;
      if (multi != null) {
        for (String ignored : multi) {
          multiCount++;
        }
      }
      c.output(c.element() + ":" + c.sideInput(map).get(c.element()) + ":" + sum + ":" + multiCount);
    }
  }
}
