package dev.weir.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Runs {@link StreamingWindowedSums} on Weir in streaming mode at 1,000 readings per second in
 * one-second windows: over a count of 3,000 readings (the job ends by itself) and over the
 * unbounded source (the test cancels the job once the first three windows have come out), and
 * checks every window's sums.
 */
class StreamingWindowedSumsTest {
  /** Lines the unbounded job's last step saw; static because Weir runs the DoFn in this JVM. */
  private static final Queue<String> SEEN = new ConcurrentLinkedQueue<>();

  private static final long NUM_ELEMENTS = 3000;
  private static final long ELEMENTS_PER_SECOND = 1000;
  private static final long WINDOW_SIZE_SEC = 1;

  @Test
  void sumsEachSensorPerFixedWindow() {
    StreamingWindowedSums.Options options = PipelineOptionsFactory
        .fromArgs(OnWeir.args("--streaming=true", "--numElements=" + NUM_ELEMENTS,
            "--elementsPerSecond=" + ELEMENTS_PER_SECOND, "--windowSizeSec=" + WINDOW_SIZE_SEC))
        .withValidation().as(StreamingWindowedSums.Options.class);
    Pipeline pipeline = Pipeline.create(options);
    PCollection<String> sums = pipeline
        .apply(new StreamingWindowedSums.GenerateReadings(options.getNumElements(), options.getElementsPerSecond()))
        .apply(new StreamingWindowedSums.SumPerSensorAndWindow(Duration.standardSeconds(options.getWindowSizeSec())));
    PAssert.that(sums).containsInAnyOrder(expected());

    assertThat(pipeline.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
  }

  @Test
  void emitsEachWindowOfTheUnboundedSourceOnceTheWatermarkPassesIt() throws Exception {
    StreamingWindowedSums.Options options = PipelineOptionsFactory
        .fromArgs(OnWeir.args("--streaming=true", "--numElements=0",
            "--elementsPerSecond=" + ELEMENTS_PER_SECOND, "--windowSizeSec=" + WINDOW_SIZE_SEC))
        .withValidation().as(StreamingWindowedSums.Options.class);
    Pipeline pipeline = Pipeline.create(options);
    PCollection<Long> readings =
        pipeline.apply(new StreamingWindowedSums.GenerateReadings(0, options.getElementsPerSecond()));
    assertThat(readings.isBounded()).isEqualTo(PCollection.IsBounded.UNBOUNDED);
    readings
        .apply(new StreamingWindowedSums.SumPerSensorAndWindow(Duration.standardSeconds(options.getWindowSizeSec())))
        .apply(ParDo.of(new Record()));
    SEEN.clear();
    List<String> expected = expected();
    PipelineResult result = pipeline.run();
    try {
      long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!SEEN.containsAll(expected) && System.nanoTime() < deadlineNs) {
        assertThat(result.getState()).isEqualTo(PipelineResult.State.RUNNING);
        Thread.sleep(50);
      }
    } finally {
      result.cancel();
    }
    // Each of the first three windows came out exactly once, complete (later windows may have too).
    List<String> firstWindows = new ArrayList<>(SEEN);
    firstWindows.removeIf(line -> !line.startsWith(windowStart(0)) && !line.startsWith(windowStart(1))
        && !line.startsWith(windowStart(2)));
    assertThat(firstWindows).containsExactlyInAnyOrderElementsOf(expected);
  }

  /** Records each line in {@link #SEEN}. */
  private static final class Record extends DoFn<String, Void> {
    @ProcessElement
    public void processElement(@Element String line) {
      SEEN.add(line);
    }
  }

  private static String windowStart(int index) {
    return StreamingWindowedSums.START.plus(Duration.standardSeconds(index * WINDOW_SIZE_SEC)).toString();
  }

  /** The expected lines, summed here without Beam: 3 windows x 3 sensors. */
  private static List<String> expected() {
    long windowMs = WINDOW_SIZE_SEC * 1000;
    Map<String, Long> sums = new TreeMap<>();
    for (long n = 0; n < NUM_ELEMENTS; n++) {
      Instant t = StreamingWindowedSums.eventTimeOf(n, ELEMENTS_PER_SECOND);
      Instant windowStart = new Instant(t.getMillis() - Math.floorMod(t.getMillis(), windowMs));
      sums.merge(windowStart + " " + StreamingWindowedSums.sensorOf(n), StreamingWindowedSums.readingOf(n), Long::sum);
    }
    List<String> lines = new ArrayList<>();
    sums.forEach((windowAndSensor, sum) -> lines.add(windowAndSensor + " sum=" + sum));
    assertThat(lines).hasSize(9);
    return lines;
  }
}
