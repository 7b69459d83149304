package dev.weir.examples;

import java.io.IOException;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.options.StreamingOptions;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * Streaming: sums sensor readings per sensor in fixed event-time windows, over an unbounded
 * generated source, and prints one line per sensor and window as each window closes.
 *
 * <p>What it shows: an unbounded source ({@code GenerateSequence} with a rate) whose elements
 * carry event timestamps, {@code Window.into(FixedWindows)}, a {@code Combine.perKey} (Weir
 * lifts the combiner: partial sums before the shuffle, merged after it), and output driven by
 * the watermark: a window's sums come out once the watermark passes the window's end.
 *
 * <p>The readings are synthetic and deterministic: element {@code n} is a reading of
 * {@code sensor-(n % 3)} with value {@code n % 100}, stamped {@code START + n / elementsPerSecond}
 * seconds; so the expected sums can be computed by hand (the test does).
 *
 * <p>Run it from the repository root (after {@code mvn -B install -DskipTests -pl examples -am});
 * it generates readings at {@code --elementsPerSecond} without end, prints each window's sums
 * as the window closes, and cancels the job after {@code --runSeconds} (0: runs until stopped
 * with Ctrl-C):
 * <pre>
 * mvn -pl examples exec:java -Dexec.mainClass=dev.weir.examples.StreamingWindowedSums \
 *   -Dexec.args="--runner=WeirRunner --streaming=true --elementsPerSecond=500 --windowSizeSec=2 --runSeconds=10"
 * </pre>
 * With {@code --numElements=N} it generates N readings and ends by itself (Beam then reads the
 * unbounded source as a bounded one, and logs a harmless warning about its {@code Shard} coder).
 */
public final class StreamingWindowedSums {
  private StreamingWindowedSums() {}

  /** Event time of element 0: a fixed instant, so that windows are the same on every run. */
  public static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

  /** Number of simulated sensors; element {@code n} belongs to {@code sensor-(n % SENSORS)}. */
  public static final int SENSORS = 3;

  /** The example's options; {@code --streaming} comes from Beam's {@link StreamingOptions}. */
  public interface Options extends StreamingOptions {
    @Description("How many readings to generate; 0 generates readings until the job is stopped.")
    @Default.Long(0)
    long getNumElements();

    void setNumElements(long numElements);

    @Description("Readings generated per second of wall time; also sets their event-time spacing "
        + "(element n is stamped n / elementsPerSecond seconds after START).")
    @Default.Long(500)
    long getElementsPerSecond();

    void setElementsPerSecond(long elementsPerSecond);

    @Description("Size of the fixed event-time windows, in seconds.")
    @Default.Long(2)
    long getWindowSizeSec();

    void setWindowSizeSec(long windowSizeSec);

    @Description("Cancel the job after this many seconds of wall time; 0 waits until it ends by itself.")
    @Default.Long(0)
    long getRunSeconds();

    void setRunSeconds(long runSeconds);
  }

  /** The sensor that element {@code n} is a reading of. */
  public static String sensorOf(long n) {
    return "sensor-" + (n % SENSORS);
  }

  /** The reading value of element {@code n}. */
  public static long readingOf(long n) {
    return n % 100;
  }

  /** The event time of element {@code n} at {@code elementsPerSecond}. */
  public static Instant eventTimeOf(long n, long elementsPerSecond) {
    return START.plus(Duration.millis(n * 1000 / elementsPerSecond));
  }

  /** The generated source: element numbers with event timestamps, unbounded unless {@code numElements > 0}. */
  public static final class GenerateReadings extends PTransform<PBegin, PCollection<Long>> {
    private final long numElements;
    private final long elementsPerSecond;

    /**
     * @param numElements how many element numbers to generate, from 0; 0 for no end
     * @param elementsPerSecond generation rate, and the event-time spacing of the elements
     */
    public GenerateReadings(long numElements, long elementsPerSecond) {
      this.numElements = numElements;
      this.elementsPerSecond = elementsPerSecond;
    }

    @Override
    public PCollection<Long> expand(PBegin begin) {
      long rate = elementsPerSecond;
      GenerateSequence sequence = GenerateSequence.from(0)
          .withRate(rate, Duration.standardSeconds(1))
          .withTimestampFn(n -> eventTimeOf(n, rate));
      return begin.apply("GenerateSequence", numElements > 0 ? sequence.to(numElements) : sequence);
    }
  }

  /**
   * Element numbers in, one line per sensor and fixed window out:
   * {@code <window start> sensor-<i> sum=<sum of readings>}.
   */
  public static final class SumPerSensorAndWindow extends PTransform<PCollection<Long>, PCollection<String>> {
    private final Duration windowSize;

    /** @param windowSize the size of the fixed event-time windows */
    public SumPerSensorAndWindow(Duration windowSize) {
      this.windowSize = windowSize;
    }

    @Override
    public PCollection<String> expand(PCollection<Long> numbers) {
      return numbers
          .apply("ToReadings", MapElements
              .into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.longs()))
              .via((Long n) -> KV.of(sensorOf(n), readingOf(n))))
          .apply("FixedWindows", Window.<KV<String, Long>>into(FixedWindows.of(windowSize)))
          .apply("SumPerSensor", Combine.perKey(Sum.ofLongs()))
          .apply("Format", ParDo.of(new FormatWithWindow()));
    }
  }

  /** Formats a per-window sum with the start of its window (a DoFn can ask for its window). */
  static final class FormatWithWindow extends DoFn<KV<String, Long>, String> {
    @ProcessElement
    public void processElement(@Element KV<String, Long> sum, BoundedWindow window, OutputReceiver<String> out) {
      out.output(format(((IntervalWindow) window).start(), sum.getKey(), sum.getValue()));
    }
  }

  /** One output line. */
  public static String format(Instant windowStart, String sensor, long sum) {
    return windowStart + " " + sensor + " sum=" + sum;
  }

  /** Prints each line to standard output as it arrives (a real job would write to a sink). */
  static final class Print extends DoFn<String, Void> {
    @ProcessElement
    public void processElement(@Element String line) {
      System.out.println(line);
    }
  }

  /** Builds the pipeline on {@code options}: generate, window, sum, print. */
  public static Pipeline build(Options options) {
    Pipeline pipeline = Pipeline.create(options);
    pipeline
        .apply("Readings", new GenerateReadings(options.getNumElements(), options.getElementsPerSecond()))
        .apply("Sums", new SumPerSensorAndWindow(Duration.standardSeconds(options.getWindowSizeSec())))
        .apply("Print", ParDo.of(new Print()));
    return pipeline;
  }

  /**
   * Parses the command line, runs the pipeline and waits until it has finished, or cancels it
   * after {@code --runSeconds}.
   *
   * @throws IOException if cancelling the job fails
   */
  public static void main(String[] args) throws IOException {
    Options options = PipelineOptionsFactory.fromArgs(args).withValidation().as(Options.class);
    PipelineResult result = build(options).run();
    if (options.getRunSeconds() > 0) {
      PipelineResult.State state = result.waitUntilFinish(Duration.standardSeconds(options.getRunSeconds()));
      if (state == null || !state.isTerminal()) {
        result.cancel();
      }
    } else {
      result.waitUntilFinish();
    }
  }
}
