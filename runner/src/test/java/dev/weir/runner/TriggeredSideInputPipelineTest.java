package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Filter;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.Values;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionView;
import org.joda.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Triggered side inputs: a main-input element reads the view of the latest trigger firing as soon
 * as one has arrived, not once the side input's window is complete. One test stream feeds both
 * inputs (split by key), so its quiescence between events orders main elements and panes.
 */
class TriggeredSideInputPipelineTest {

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void mainInputReadsTheLatestPaneOfATriggeredSingletonWithoutWaitingForTheWatermark(boolean streaming) {
    Pipeline p = Pipeline.create(Pipelines.options(streaming));
    TestStream<KV<String, Long>> events = TestStream.create(KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of()))
        .addElements(KV.of("main", 1L)) // waits: no pane yet
        .addElements(KV.of("side", 10L)) // first pane: releases main 1
        .addElements(KV.of("main", 2L)) // reads the first pane
        .addElements(KV.of("side", 20L)) // second pane replaces the first (discarding: 20, not 30)
        .addElements(KV.of("main", 3L)) // reads the second pane
        .advanceWatermarkToInfinity();
    PCollection<KV<String, Long>> all = p.apply(events);
    PCollectionView<Long> side = all
        .apply("Side", Filter.by((KV<String, Long> kv) -> kv.getKey().equals("side")))
        .apply("SideValues", Values.create())
        .apply("Trigger", Window.<Long>configure()
            .triggering(Repeatedly.forever(AfterPane.elementCountAtLeast(1)))
            .withAllowedLateness(Duration.ZERO)
            .discardingFiredPanes())
        .apply(Combine.globally(Sum.ofLongs()).withoutDefaults().asSingletonView());
    PCollection<String> out = all
        .apply("Main", Filter.by((KV<String, Long> kv) -> kv.getKey().equals("main")))
        .apply("MainValues", Values.create())
        .apply(ParDo.of(new PairWithSide(side)).withSideInputs(side));
    // Waiting for the watermark would have given every element one view holding both panes
    // (two values), which a singleton rejects.
    PAssert.that(out).containsInAnyOrder("1->10", "2->10", "3->20");
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
}
