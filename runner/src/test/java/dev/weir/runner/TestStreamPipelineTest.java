package dev.weir.runner;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.Values;
import org.apache.beam.sdk.transforms.windowing.AfterProcessingTime;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TestStream on WeirRunner: processing time is the test stream's, not the wall clock's. A
 * processing-time trigger fires exactly where the stream advances processing time, and never
 * for data after the last advance (which only the end of input emits), whatever the machine's
 * speed.
 */
class TestStreamPipelineTest {

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void processingTimeTriggersFireOnlyWhereTheStreamAdvancesProcessingTime(boolean streaming) {
    Pipeline p = Pipeline.create(Pipelines.options(streaming));
    TestStream<KV<String, Long>> events = TestStream.create(KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of()))
        .addElements(TimestampedValue.of(KV.of("a", 1L), new Instant(1)),
            TimestampedValue.of(KV.of("a", 2L), new Instant(2)))
        .advanceProcessingTime(Duration.standardMinutes(1))
        .addElements(TimestampedValue.of(KV.of("a", 10L), new Instant(3)))
        .advanceProcessingTime(Duration.standardMinutes(1))
        .addElements(TimestampedValue.of(KV.of("a", 100L), new Instant(4)))
        .advanceWatermarkToInfinity();
    PCollection<Long> sums = p.apply(events)
        .apply(Window.<KV<String, Long>>into(new GlobalWindows())
            .triggering(Repeatedly.forever(AfterProcessingTime.pastFirstElementInPane()
                .plusDelayOf(Duration.standardSeconds(30))))
            .discardingFiredPanes())
        .apply(Sum.longsPerKey())
        .apply(Values.create());
    PAssert.that(sums).containsInAnyOrder(3L, 10L, 100L);
    p.run().waitUntilFinish();
  }
}
