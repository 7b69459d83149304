package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.Arrays;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.FlatMapElements;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.TypeDescriptors;
import java.util.List;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.Keys;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.PCollectionView;
import org.joda.time.Duration;
import org.junit.jupiter.api.Test;

/** The shape of translated plans: where stages are cut, what is fused, what is rejected. */
class JobPlanTest {

  @Test
  void wordCount_isTwoStagesCutAtTheShuffle_withTheCountLifted() {
    Pipeline p = Pipelines.create(false);
    p.apply(Create.of("a b", "b"))
        .apply(FlatMapElements.into(TypeDescriptors.strings()).via(l -> Arrays.asList(l.split(" "))))
        .apply(Count.perElement());
    JobPlan plan = WeirRunner.translate(p, Pipelines.options(false));

    assertThat(plan.stages()).hasSize(2);
    StagePlan source = plan.stages().get(0);
    StagePlan grouped = plan.stages().get(1);
    assertThat(source.source()).isNotNull();
    assertThat(kinds(source)).startsWith("Read", "ParDo").endsWith("PartialCombine", "ShuffleWrite");
    assertThat(kinds(grouped)).startsWith("CombineMerge/OnePane").doesNotContain("ShuffleWrite", "ForwardWrite");
    assertThat(grouped.partitions()).isEqualTo(2);
    assertThat(plan.streams()).singleElement().satisfies(s -> {
      assertThat(s.kind()).isEqualTo(StreamPlan.Kind.SHUFFLE);
      assertThat(s.producer()).isSameAs(source);
      assertThat(s.consumer()).isSameAs(grouped);
    });
    assertThat(plan.describe()).contains("CombineMerge/OnePane 'Count.PerElement/Combine.perKey(Count)'");
    assertThat(plan.toDot()).startsWith("digraph weir {").contains("style=dashed");
  }

  @Test
  void flatten_ofOneStageIsFused_ofTwoStagesGetsItsOwnStage() {
    Pipeline p = Pipelines.create(false);
    PCollection<String> a = p.apply("A", Create.of("x"));
    PCollection<String> a2 = a.apply("Again", ParDo.of(new Identity()));
    PCollectionList.of(a).and(a2).apply("SameStage", Flatten.pCollections());
    PCollection<String> b = p.apply("B", Create.of("y"));
    PCollectionList.of(a).and(b).apply("TwoStages", Flatten.pCollections());
    JobPlan plan = WeirRunner.translate(p, Pipelines.options(false));

    StagePlan stageA = plan.stages().get(0);
    assertThat(kinds(stageA)).contains("Flatten", "ForwardWrite");
    StagePlan merged = plan.stages().get(plan.stages().size() - 1);
    assertThat(kinds(merged)).containsExactly("Flatten");
    assertThat(merged.inputs()).hasSize(2);
    assertThat(plan.streams()).allSatisfy(s -> assertThat(s.kind()).isEqualTo(StreamPlan.Kind.FORWARD));
  }

  @Test
  void statefulParDo_startsAKeyedStageBehindAShuffle() {
    Pipeline p = Pipelines.create(false);
    p.apply(Create.of(KV.of("k", 1))).apply("Stateful", ParDo.of(new Stateful()));
    JobPlan plan = WeirRunner.translate(p, Pipelines.options(false));

    StagePlan keyed = plan.stages().get(plan.stages().size() - 1);
    assertThat(kinds(keyed)).containsExactly("StatefulParDo");
    assertThat(keyed.partitions()).isEqualTo(2);
    assertThat(plan.streams()).singleElement().satisfies(s -> assertThat(s.kind()).isEqualTo(StreamPlan.Kind.SHUFFLE));
  }

  @Test
  void statefulParDoWithSideInputs_readsItsKeyedInputFromAShuffleAndEachViewFromABroadcast() {
    Pipeline p = Pipelines.create(false);
    var view = p.apply("Side", Create.of(1)).apply(org.apache.beam.sdk.transforms.View.asSingleton());
    p.apply(Create.of(KV.of("k", 1))).apply("Stateful", ParDo.of(new Stateful()).withSideInputs(view));
    JobPlan plan = WeirRunner.translate(p, Pipelines.options(false));

    StagePlan keyed = plan.stages().get(plan.stages().size() - 1);
    assertThat(kinds(keyed)).containsExactly("StatefulParDo");
    assertThat(keyed.inputs()).hasSize(2);
    assertThat(keyed.inputs()).filteredOn(in -> !in.isSideInput())
        .singleElement().satisfies(in -> assertThat(in.stream().kind()).isEqualTo(StreamPlan.Kind.SHUFFLE));
    assertThat(keyed.inputs()).filteredOn(StagePlan.Input::isSideInput)
        .singleElement().satisfies(in -> assertThat(in.stream().kind()).isEqualTo(StreamPlan.Kind.BROADCAST));
  }

  private static List<String> kinds(StagePlan stage) {
    return stage.nodes().stream().map(NodeSpec::kind).toList();
  }

  static final class Identity extends DoFn<String, String> {
    @ProcessElement
    public void process(@Element String s, OutputReceiver<String> out) {
      out.output(s);
    }
  }

  static final class Stateful extends DoFn<KV<String, Integer>, Integer> {
    @StateId("v")
    private final StateSpec<ValueState<Integer>> spec = StateSpecs.value();

    @ProcessElement
    public void process(@StateId("v") ValueState<Integer> v) {}
  }

  /** A primitive no translator is registered for: a transform of the user's own. */
  static final class OwnPrimitive extends org.apache.beam.sdk.transforms.PTransform<PCollection<String>, PCollection<String>> {
    @Override
    public PCollection<String> expand(PCollection<String> input) {
      return PCollection.createPrimitiveOutputInternal(input.getPipeline(), input.getWindowingStrategy(),
          input.isBounded(), input.getCoder());
    }
  }

  @Test
  void aPrimitiveWithoutTranslator_failsAtTranslationNamingTheTransformAndItsUrn() {
    Pipeline p = Pipelines.create(false);
    p.apply(Create.of("x")).apply("Mine", new OwnPrimitive());
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> WeirRunner.translate(p, Pipelines.options(false)))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessage("WeirRunner cannot run transform 'Mine' (URN <none>): no translation for "
            + OwnPrimitive.class.getName());
  }

  /** Keeps each key's last value in state. */
  static final class KeepLast extends DoFn<KV<String, Long>, Long> {
    @StateId("last")
    private final StateSpec<ValueState<Long>> last = StateSpecs.value();

    @ProcessElement
    public void process(ProcessContext c, @StateId("last") ValueState<Long> state) {
      state.write(c.element().getValue());
    }
  }

  /** A stateful ParDo over merging windows is refused, naming the transform and the ParDo URN. */
  @Test
  void aStatefulParDoOverSessions_failsNamingTheTransformAndItsUrn() {
    Pipeline p = Pipelines.create(false);
    p.apply(Create.of(KV.of("k", 1L)))
        .apply(org.apache.beam.sdk.transforms.windowing.Window.into(
            org.apache.beam.sdk.transforms.windowing.Sessions.withGapDuration(Duration.standardSeconds(1))))
        .apply("Keep", ParDo.of(new KeepLast()));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> WeirRunner.translate(p, Pipelines.options(false)))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageStartingWith("WeirRunner cannot run transform 'Keep/ParMultiDo(KeepLast)' (URN beam:transform:pardo:v1): "
            + "stateful ParDo over merging windows");
  }

  /**
   * The plan of {@link #everyShape} in both modes, text for text, as the translator before the URN
   * registry made it (captured from commit 0bde2ed): stage and stream numbering, node order and
   * kinds, and where each stream enters. Regenerate only for an intended plan change.
   */
  @Test
  void translatorRegistry_translatesEveryShapeAsBefore() throws Exception {
    String expected;
    try (var in = JobPlanTest.class.getResourceAsStream("every-shape-plan.txt")) {
      expected = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    String actual = everyShape(false).describe() + "=====\n" + everyShape(true).describe() + "=====\n";
    assertThat(actual).isEqualTo(expected);
  }

  /**
   * One pipeline with every transform shape the translator handles (bounded read, side inputs
   * plain and triggered, lifted combine, GroupByKey, stateful ParDo, window assignment, Flatten
   * across stages); {@link #translatorRegistry_translatesEveryShapeAsBefore} pins its plan.
   */
  static JobPlan everyShape(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PCollection<KV<String, Long>> a = p.apply("A", Create.of(KV.of("a", 1L), KV.of("b", 2L)));
    PCollection<Long> b = p.apply("B", GenerateSequence.from(0).to(10));
    PCollectionView<Long> sum = b.apply("Sum", Combine.globally(Sum.ofLongs()).asSingletonView());
    PCollectionView<List<Long>> panes = b.apply("Trig", Window.<Long>into(new GlobalWindows())
            .triggering(Repeatedly.forever(AfterPane.elementCountAtLeast(1))).discardingFiredPanes())
        .apply("AsList", View.asList());
    // one view per ParDo: the order of several is the order of their tags' ids in a map
    a.apply("WithSum", ParDo.of(new DoFn<KV<String, Long>, Long>() {
      @ProcessElement
      public void process(ProcessContext c) {
        c.output(c.element().getValue() + c.sideInput(sum));
      }
    }).withSideInputs(sum));
    a.apply("WithPanes", ParDo.of(new DoFn<KV<String, Long>, Long>() {
      @ProcessElement
      public void process(ProcessContext c) {
        c.output(c.element().getValue() + c.sideInput(panes).size());
      }
    }).withSideInputs(panes));
    a.apply("Fixed", Window.into(FixedWindows.of(Duration.standardSeconds(1)))).apply("PerKey", Sum.longsPerKey());
    a.apply("GBK", GroupByKey.create());
    a.apply("Stateful", ParDo.of(new DoFn<KV<String, Long>, Long>() {
      @StateId("last")
      private final StateSpec<ValueState<Long>> last = StateSpecs.value();

      @ProcessElement
      public void process(ProcessContext c, @StateId("last") ValueState<Long> state) {
        state.write(c.element().getValue());
      }
    }));
    PCollectionList.of(a.apply("Keys", Keys.create()))
        .and(b.apply("ToText", MapElements.into(TypeDescriptors.strings()).via(String::valueOf)))
        .apply("Both", Flatten.pCollections());
    return WeirRunner.translate(p, Pipelines.options(streaming));
  }
}
