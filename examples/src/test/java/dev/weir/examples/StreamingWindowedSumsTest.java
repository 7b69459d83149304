package dev.weir.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Runs {@link StreamingWindowedSums} on Weir in streaming mode over 3,000 generated readings
 * (3 one-second windows at 1,000 readings per second) and checks every window's sums.
 */
class StreamingWindowedSumsTest {
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
