package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.executor.JobExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithTimestamps;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Executor properties: watermarks across uneven producers, back-pressure (also of a GroupByKey's
 * and a stateful ParDo's timer firings), cancel.
 */
class ExecutorBehaviourTest {

  @Test
  void watermark_acrossAShuffleIsTheMinimumOverUnevenProducers() {
    Pipeline p = Pipelines.create(true);
    // A tiny producer reaches +infinity at once; the big one is still emitting elements of the
    // same windows. Had the consumer taken anything but the minimum, those would be dropped late.
    List<Long> big = new ArrayList<>();
    for (long i = 0; i < 20_000; i++) {
      big.add(i);
    }
    PCollection<Long> tiny = p.apply("Tiny", Create.of(0L));
    PCollection<Long> many = p.apply("Big", Create.of(big)).apply("Slow", ParDo.of(new Slow(2_000)));
    PCollection<Long> counts = PCollectionList.of(tiny).and(many).apply(Flatten.pCollections())
        .apply(WithTimestamps.of((Long x) -> new Instant(x % 10_000)))
        .apply(Window.into(FixedWindows.of(Duration.millis(5_000))))
        .apply(org.apache.beam.sdk.transforms.Combine.globally(Count.<Long>combineFn()).withoutDefaults());
    PAssert.that(counts).inWindow(new IntervalWindow(new Instant(0), new Instant(5_000)))
        .containsInAnyOrder(10_001L);
    PAssert.that(counts).inWindow(new IntervalWindow(new Instant(5_000), new Instant(10_000)))
        .containsInAnyOrder(10_000L);
    p.run().waitUntilFinish();
  }

  static final AtomicLong PRODUCED = new AtomicLong();
  static final AtomicLong CONSUMED = new AtomicLong();
  static final AtomicLong MAX_IN_FLIGHT = new AtomicLong();

  @Test
  void backPressure_aSlowConsumerBoundsWhatIsInFlight() {
    PRODUCED.set(0);
    CONSUMED.set(0);
    MAX_IN_FLIGHT.set(0);
    WeirPipelineOptions options = Pipelines.options(false);
    options.setParallelism(1);
    options.setRunner(WeirRunner.class);
    Pipeline p = Pipeline.create(options);
    PCollection<Long> a = p.apply(GenerateSequence.from(0).to(30_000)).apply("CountProduced", ParDo.of(new Produced()));
    PCollection<Long> b = p.apply("Other", Create.of(-1L));
    PCollectionList.of(a).and(b).apply(Flatten.pCollections()).apply("SlowConsumer", ParDo.of(new Consumed()));
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
    assertThat(CONSUMED.get()).isEqualTo(30_001L);
    // Stream capacity plus what one loop burst and one outbox can hold, not the 30k produced.
    assertThat(MAX_IN_FLIGHT.get()).isLessThan(JobExecutor.STREAM_PARTITION_CAPACITY + 256L);
  }

  @Test
  void endOfInput_aGroupByKeyOverManyKeysFiresItsPanesWithoutFloodingItsOutbox() {
    // Global window, batch: every key's pane is ready only at the end of input, all at once.
    assertEveryKeyArrivesWithBoundedInFlight(
        keyed -> keyed.apply(GroupByKey.create()).apply("CountProduced", ParDo.of(new ProducedKey())));
  }

  @Test
  void endOfInput_aStatefulParDoOverManyKeysFiresItsTimersWithoutFloodingItsOutbox() {
    // Batch: the watermark jumps from -infinity to +infinity, making every key's timer ready at once.
    assertEveryKeyArrivesWithBoundedInFlight(keyed -> keyed.apply("TimerPerKey", ParDo.of(new TimerPerKey())));
  }

  /**
   * Runs 20k keys through {@code perKey} (one output per key, counted as produced) into a slow
   * consumer on another stage; asserts every output arrives while the produced-but-unconsumed
   * count stays within the stream's capacity plus one firing's output in the outbox.
   */
  private static void assertEveryKeyArrivesWithBoundedInFlight(
      Function<PCollection<KV<Long, Long>>, PCollection<Long>> perKey) {
    PRODUCED.set(0);
    CONSUMED.set(0);
    MAX_IN_FLIGHT.set(0);
    int keys = 20_000;
    List<KV<Long, Long>> input = new ArrayList<>(keys);
    for (long k = 0; k < keys; k++) {
      input.add(KV.of(k, k));
    }
    WeirPipelineOptions options = Pipelines.options(false);
    options.setParallelism(1);
    options.setRunner(WeirRunner.class);
    Pipeline p = Pipeline.create(options);
    PCollection<Long> outputs = perKey.apply(p.apply(Create.of(input)));
    PCollection<Long> other = p.apply("Other", Create.of(-1L));
    PCollectionList.of(outputs).and(other).apply(Flatten.pCollections()).apply("SlowConsumer", ParDo.of(new Consumed()));
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
    assertThat(CONSUMED.get()).as("every key's output arrives").isEqualTo(keys + 1L);
    assertThat(MAX_IN_FLIGHT.get()).isLessThan(JobExecutor.STREAM_PARTITION_CAPACITY + 256L);
  }

  @Test
  void cancel_stopsAnUnboundedJobWithinASecond() throws Exception {
    WeirPipelineOptions options = Pipelines.options(true);
    options.setRunner(WeirRunner.class);
    Pipeline p = Pipeline.create(options);
    p.apply(GenerateSequence.from(0)).apply(ParDo.of(new Slow(100)));
    PipelineResult result = p.run();
    assertThat(result.waitUntilFinish(Duration.millis(300))).isEqualTo(PipelineResult.State.RUNNING);
    long start = System.nanoTime();
    assertThat(result.cancel()).isEqualTo(PipelineResult.State.CANCELLED);
    assertThat(System.nanoTime() - start).isLessThan(1_000_000_000L);
    assertThat(result.waitUntilFinish()).isEqualTo(PipelineResult.State.CANCELLED);
    Thread.sleep(50);
    assertThat(WeirRunnerPipelineTest.weirThreads()).isZero();
  }

  /** Burns about {@code nanos} per element, passing it on. */
  static final class Slow extends DoFn<Long, Long> {
    private final long nanos;

    Slow(long nanos) {
      this.nanos = nanos;
    }

    @ProcessElement
    public void process(@Element Long x, OutputReceiver<Long> out) {
      long end = System.nanoTime() + nanos;
      while (System.nanoTime() < end) {
        Thread.onSpinWait();
      }
      out.output(x);
    }
  }

  static final class Produced extends DoFn<Long, Long> {
    @ProcessElement
    public void process(@Element Long x, OutputReceiver<Long> out) {
      PRODUCED.incrementAndGet();
      out.output(x);
    }
  }

  static final class ProducedKey extends DoFn<KV<Long, Iterable<Long>>, Long> {
    @ProcessElement
    public void process(@Element KV<Long, Iterable<Long>> pane, OutputReceiver<Long> out) {
      PRODUCED.incrementAndGet();
      out.output(pane.getKey());
    }
  }

  /** Sets an event-time timer per key at the key's value; its firing outputs the key. */
  static final class TimerPerKey extends DoFn<KV<Long, Long>, Long> {
    @TimerId("t")
    private final TimerSpec spec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    @ProcessElement
    public void process(@Element KV<Long, Long> element, @TimerId("t") Timer timer) {
      timer.set(new Instant(element.getValue()));
    }

    @OnTimer("t")
    public void onTimer(@Key Long key, OutputReceiver<Long> out) {
      PRODUCED.incrementAndGet();
      out.output(key);
    }
  }

  static final class Consumed extends DoFn<Long, Void> {
    @ProcessElement
    public void process(@Element Long x) {
      long consumed = CONSUMED.incrementAndGet();
      MAX_IN_FLIGHT.accumulateAndGet(PRODUCED.get() - consumed, Math::max);
      long end = System.nanoTime() + 10_000;
      while (System.nanoTime() < end) {
        Thread.onSpinWait();
      }
    }
  }
}
