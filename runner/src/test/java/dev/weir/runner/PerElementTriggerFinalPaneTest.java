package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Nexmark Q6's windowing (global window, one pane per element, accumulating, no allowed lateness)
 * with a watermark that advances in steps before the end of input: besides the per-element panes,
 * every key gets its final (ON_TIME, last) pane when the watermark reaches the end of time.
 * Regression: with the output watermark moved to +infinity before the end-of-window timers fired,
 * the final panes were lost (Q6 gave 1909 results instead of Direct's 2307).
 */
class PerElementTriggerFinalPaneTest {

  /** "key=sum", with " last" for the final pane. */
  static final class DescribePane extends DoFn<KV<String, Long>, String> {
    @ProcessElement
    public void process(@Element KV<String, Long> kv, PaneInfo pane, OutputReceiver<String> out) {
      out.output(kv.getKey() + "=" + kv.getValue() + (pane.isLast() ? " last" : ""));
    }
  }

  @Test
  void everyKeyGetsItsFinalPaneAfterPerElementPanes() {
    Pipeline p = Pipelines.create(true);
    TestStream.Builder<KV<String, Long>> builder =
        TestStream.create(KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of()));
    long t = 0;
    for (int step = 0; step < 4; step++) {
      for (int i = 0; i < 3; i++) {
        t += 10;
        builder = builder.addElements(TimestampedValue.of(KV.of("k" + i, 1L), new Instant(t)));
      }
      builder = builder.advanceWatermarkTo(new Instant(t + 5));
    }
    TestStream<KV<String, Long>> events = builder.advanceWatermarkToInfinity();

    PCollection<String> panes = p.apply(events)
        .apply(Window.<KV<String, Long>>into(new GlobalWindows())
            .triggering(Repeatedly.forever(AfterPane.elementCountAtLeast(1)))
            .accumulatingFiredPanes()
            .withAllowedLateness(Duration.ZERO))
        .apply(Sum.longsPerKey())
        .apply(ParDo.of(new DescribePane()));

    // 12 per-element panes (k0..k2 reaching 1..4) and one final pane per key with the total.
    PAssert.that(panes).containsInAnyOrder(
        "k0=1", "k0=2", "k0=3", "k0=4", "k0=4 last",
        "k1=1", "k1=2", "k1=3", "k1=4", "k1=4 last",
        "k2=1", "k2=2", "k2=3", "k2=4", "k2=4 last");
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
  }
}
