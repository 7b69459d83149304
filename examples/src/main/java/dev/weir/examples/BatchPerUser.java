package dev.weir.examples;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.options.StreamingOptions;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * A stateful DoFn with a timer: buffers each user's events and emits them in batches, a batch
 * leaving when it holds {@code --maxBatchSize} events or, at the latest, when the event-time
 * timer set by its first event fires {@code --maxDelayMs} later. This is how one batches calls
 * to an external service per key (Beam's {@code GroupIntoBatches} does the same).
 *
 * <p>What it shows: per-key state ({@code BagState} for the buffer, {@code ValueState} for its
 * size), an event-time timer ({@code @TimerId}/{@code @OnTimer}) and the key in a timer callback
 * ({@code @Key}). On Weir, a stateful ParDo runs in a keyed stage of {@code --parallelism} tasks
 * fed by a shuffle; its state lives in the state backend ({@code --stateBackend}, RocksDB by
 * default) behind the object cache, and its timers fire as the watermark passes them. The
 * input's last partial batches are flushed by their timers when the input ends (the watermark
 * then jumps to the end of time).
 *
 * <p>Input: element {@code n} is an event of {@code user-(n % 4)} stamped
 * {@code n * 10 ms} after a fixed instant, generated at {@code --elementsPerSecond}.
 *
 * <p>Run it from the repository root (after {@code mvn -B install -DskipTests -pl examples -am});
 * it generates events without end, prints each batch as it leaves, and cancels the job after
 * {@code --runSeconds} (0: runs until stopped with Ctrl-C):
 * <pre>
 * mvn -pl examples exec:java -Dexec.mainClass=dev.weir.examples.BatchPerUser \
 *   -Dexec.args="--runner=WeirRunner --streaming=true --maxBatchSize=10 --maxDelayMs=200 --runSeconds=10"
 * </pre>
 * With {@code --numElements=N} it generates N events and ends by itself, the last partial
 * batches flushed by their timers (Beam then reads the unbounded source as a bounded one, and
 * logs a harmless warning about its {@code Shard} coder).
 */
public final class BatchPerUser {
  private BatchPerUser() {}

  /** Event time of element 0. */
  public static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

  /** Number of simulated users; element {@code n} belongs to {@code user-(n % USERS)}. */
  public static final int USERS = 4;

  /** The example's options. */
  public interface Options extends StreamingOptions {
    @Description("How many events to generate; 0 generates events until the job is stopped.")
    @Default.Long(0)
    long getNumElements();

    void setNumElements(long numElements);

    @Description("Events generated per second of wall time.")
    @Default.Long(500)
    long getElementsPerSecond();

    void setElementsPerSecond(long elementsPerSecond);

    @Description("A batch leaves as soon as it holds this many events.")
    @Default.Integer(10)
    int getMaxBatchSize();

    void setMaxBatchSize(int maxBatchSize);

    @Description("A batch leaves at the latest this many milliseconds of event time after its first event.")
    @Default.Long(500)
    long getMaxDelayMs();

    void setMaxDelayMs(long maxDelayMs);

    @Description("Cancel the job after this many seconds of wall time; 0 waits until it ends by itself.")
    @Default.Long(0)
    long getRunSeconds();

    void setRunSeconds(long runSeconds);
  }

  /** The user that event {@code n} belongs to. */
  public static String userOf(long n) {
    return "user-" + (n % USERS);
  }

  /**
   * Per key: buffers values and emits {@code KV<key, batch>} when a batch is full or its timer
   * fires. State and timers are per key and window (here the global window).
   *
   * <p>Threading: as for any DoFn, the runner calls an instance from one thread at a time;
   * Weir calls it on the run-loop thread of the container that owns the key's task.
   */
  public static final class BatchFn extends DoFn<KV<String, Long>, KV<String, List<Long>>> {
    private final int maxBatchSize;
    private final Duration maxDelay;

    @StateId("buffer")
    private final StateSpec<BagState<Long>> bufferSpec = StateSpecs.bag(VarLongCoder.of());

    @StateId("size")
    private final StateSpec<ValueState<Integer>> sizeSpec = StateSpecs.value(VarIntCoder.of());

    @TimerId("flush")
    private final TimerSpec flushSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    /**
     * @param maxBatchSize a batch leaves as soon as it holds this many values
     * @param maxDelay a batch leaves at the latest this much event time after its first value
     */
    public BatchFn(int maxBatchSize, Duration maxDelay) {
      this.maxBatchSize = maxBatchSize;
      this.maxDelay = maxDelay;
    }

    @ProcessElement
    public void processElement(
        @Element KV<String, Long> event,
        @Timestamp Instant timestamp,
        @StateId("buffer") BagState<Long> buffer,
        @StateId("size") ValueState<Integer> size,
        @TimerId("flush") Timer flush,
        OutputReceiver<KV<String, List<Long>>> out) {
      Integer stored = size.read();
      int count = stored == null ? 0 : stored;
      if (count == 0) {
        // The first event of a batch: it leaves at the latest maxDelay later (in event time).
        // Setting the timer again replaces it, so a timer left by an earlier full batch is moved.
        flush.set(timestamp.plus(maxDelay));
      }
      buffer.add(event.getValue());
      count++;
      if (count >= maxBatchSize) {
        emit(event.getKey(), buffer, size, out);
      } else {
        size.write(count);
      }
    }

    @OnTimer("flush")
    public void onFlush(
        @Key String user,
        @StateId("buffer") BagState<Long> buffer,
        @StateId("size") ValueState<Integer> size,
        OutputReceiver<KV<String, List<Long>>> out) {
      Integer stored = size.read();
      if (stored != null && stored > 0) {
        emit(user, buffer, size, out);
      }
    }

    private static void emit(String user, BagState<Long> buffer, ValueState<Integer> size,
        OutputReceiver<KV<String, List<Long>>> out) {
      List<Long> batch = new ArrayList<>();
      buffer.read().forEach(batch::add);
      out.output(KV.of(user, batch));
      buffer.clear();
      size.clear();
    }
  }

  /** Generated events keyed by user: {@code KV<user, event number>}, stamped in event time. */
  public static PCollection<KV<String, Long>> events(Pipeline pipeline, long numElements, long elementsPerSecond) {
    GenerateSequence sequence = GenerateSequence.from(0)
        .withRate(elementsPerSecond, Duration.standardSeconds(1))
        .withTimestampFn(n -> START.plus(Duration.millis(n * 10)));
    return pipeline
        .apply("GenerateSequence", numElements > 0 ? sequence.to(numElements) : sequence)
        .apply("KeyByUser", MapElements
            .into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.longs()))
            .via((Long n) -> KV.of(userOf(n), n)));
  }

  /** Builds the pipeline on {@code options}: generate, batch per user, print each batch. */
  public static Pipeline build(Options options) {
    Pipeline pipeline = Pipeline.create(options);
    events(pipeline, options.getNumElements(), options.getElementsPerSecond())
        .apply("BatchPerUser", ParDo.of(new BatchFn(options.getMaxBatchSize(), Duration.millis(options.getMaxDelayMs()))))
        .apply("Print", ParDo.of(new DoFn<KV<String, List<Long>>, Void>() {
          @ProcessElement
          public void processElement(@Element KV<String, List<Long>> batch) {
            System.out.println(batch.getKey() + " batch of " + batch.getValue().size() + ": " + batch.getValue());
          }
        }));
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
