package dev.weir.runner;

import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.range.OffsetRange;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.DoFn.UnboundedPerElement;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.splittabledofn.ManualWatermarkEstimator;
import org.apache.beam.sdk.transforms.splittabledofn.OffsetRangeTracker;
import org.apache.beam.sdk.transforms.splittabledofn.RestrictionTracker;
import org.apache.beam.sdk.transforms.splittabledofn.WatermarkEstimators;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Unbounded splittable DoFns on WeirRunner ({@code SplittableProcessOperator}): restrictions that
 * checkpoint (by themselves, and by the runner's output bound) resume from processing-time timers
 * until every tracker is done, then the job ends; the output watermark follows the DoFn's
 * watermark estimator, so windowed aggregations downstream see every element on time.
 */
class UnboundedSplittableDoFnPipelineTest {

  /**
   * For element {@code n}: emits {@code n*1000 .. n*1000 + n*100 - 1}, each at its own value as
   * timestamp (ms), advancing a manual watermark estimator to it, and checkpointing itself every
   * {@code block} outputs (resuming after {@code resumeDelay}). An unbounded-per-element DoFn that is bounded in practice: it stops when
   * its offset range is claimed.
   */
  @UnboundedPerElement
  static final class CountingFn extends DoFn<Long, Long> {
    private final int block;
    private final Duration resumeDelay;

    CountingFn(int block) {
      this(block, Duration.ZERO);
    }

    CountingFn(int block, Duration resumeDelay) {
      this.block = block;
      this.resumeDelay = resumeDelay;
    }

    @GetInitialRestriction
    public OffsetRange initial(@Element Long n) {
      return new OffsetRange(n * 1000, n * 1000 + n * 100);
    }

    @NewTracker
    public OffsetRangeTracker tracker(@Restriction OffsetRange range) {
      return new OffsetRangeTracker(range);
    }

    @GetInitialWatermarkEstimatorState
    public Instant initialWatermark(@Timestamp Instant timestamp) {
      return timestamp;
    }

    @NewWatermarkEstimator
    public WatermarkEstimators.Manual watermarkEstimator(@WatermarkEstimatorState Instant state) {
      return new WatermarkEstimators.Manual(state);
    }

    @ProcessElement
    public ProcessContinuation process(RestrictionTracker<OffsetRange, Long> tracker,
        ManualWatermarkEstimator<Instant> watermark, OutputReceiver<Long> out) {
      long position = tracker.currentRestriction().getFrom();
      for (int i = 0; i < block; i++, position++) {
        if (!tracker.tryClaim(position)) {
          return ProcessContinuation.stop();
        }
        Instant timestamp = new Instant(position);
        out.outputWithTimestamp(position, timestamp);
        watermark.setWatermark(timestamp);
      }
      return ProcessContinuation.resume().withResumeDelay(resumeDelay);
    }
  }

  private static List<Long> expected(long... elements) {
    List<Long> values = new ArrayList<>();
    for (long n : elements) {
      for (long v = n * 1000; v < n * 1000 + n * 100; v++) {
        values.add(v);
      }
    }
    return values;
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void selfCheckpointingSequenceIsEmittedExactlyOnceAndTheJobEnds(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    PCollection<Long> out = p.apply(Create.of(1L, 2L, 3L, 5L, 8L)).apply(ParDo.of(new CountingFn(7)));
    PAssert.that(out).containsInAnyOrder(expected(1, 2, 3, 5, 8));
    p.run().waitUntilFinish();
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void runnerCheckpointsAfterMaxOutputsAndResumesWhereItStopped(boolean streaming) {
    WeirPipelineOptions options = Pipelines.options(streaming);
    options.setMaxBundleSize(13); // the runner splits every call after 13 outputs
    Pipeline p = Pipeline.create(options);
    PCollection<Long> out = p.apply(Create.of(4L, 9L)).apply(ParDo.of(new CountingFn(Integer.MAX_VALUE)));
    PAssert.that(out).containsInAnyOrder(expected(4, 9));
    p.run().waitUntilFinish();
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void withATestStreamClockDelayedResumesRunOnceTheInputEnded(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    // The test stream's manual clock moves only by 1 s here, and never again after its input
    // ends; the DoFn resumes a minute after each checkpoint, so all but the first block of each
    // element must run after the end of input, whatever the wall clock says.
    TestStream<Long> input = TestStream.create(VarLongCoder.of())
        .addElements(TimestampedValue.of(2L, new Instant(0)), TimestampedValue.of(3L, new Instant(0)))
        .advanceProcessingTime(Duration.standardSeconds(1))
        .advanceWatermarkToInfinity();
    PCollection<Long> out = p.apply(input).apply(ParDo.of(new CountingFn(40, Duration.standardMinutes(1))));
    PAssert.that(out).containsInAnyOrder(expected(2, 3));
    p.run().waitUntilFinish();
  }

  /** Maps every element to {@code ("all", 1)}. */
  static final class OneFn extends DoFn<Long, KV<String, Long>> {
    @ProcessElement
    public void process(OutputReceiver<KV<String, Long>> out) {
      out.output(KV.of("all", 1L));
    }
  }

  /** Emits the pane timing of each element, to tell on-time panes from late ones. */
  static final class PaneTimingFn extends DoFn<KV<String, Long>, String> {
    @ProcessElement
    public void process(@Element KV<String, Long> count, PaneInfo pane, OutputReceiver<String> out) {
      out.output(count.getValue() + "@" + pane.getTiming());
    }
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void windowedCountsDownstreamAreCompleteAndOnTimeBecauseTheHoldFollowsTheEstimator(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    // 800 values 8000..8799 at their own timestamps: eight 100 ms windows of 100 elements each,
    // produced across ~115 checkpoints. Were the output watermark not held at the estimator's
    // watermark, it would pass the windows while the SDF still emits into them (late, dropped).
    PCollection<String> panes = p.apply(Create.of(8L))
        .apply(ParDo.of(new CountingFn(7)))
        .apply(Window.into(FixedWindows.of(Duration.millis(100))))
        .apply(ParDo.of(new OneFn()))
        .apply(Sum.longsPerKey())
        .apply(ParDo.of(new PaneTimingFn()));
    List<String> onTime = new ArrayList<>();
    for (int w = 0; w < 8; w++) {
      onTime.add("100@ON_TIME");
    }
    PAssert.that(panes).containsInAnyOrder(onTime);
    p.run().waitUntilFinish();
  }
}
