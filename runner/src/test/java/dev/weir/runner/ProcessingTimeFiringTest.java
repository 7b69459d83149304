package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.executor.JobExecutor;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.transforms.windowing.AfterProcessingTime;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Processing-time firings on the executor: what they emit is finished as a bundle of its own when
 * no input element opened the bundle, and many ready processing-time timers fire in bounded slices.
 */
class ProcessingTimeFiringTest {

  static final AtomicLong FINISHED_BUNDLE_OUTPUT = new AtomicLong();

  @Test
  void processingTimeFiring_outputHeldUntilFinishBundleDownstreamArrivesWhileTheJobRuns() throws Exception {
    FINISHED_BUNDLE_OUTPUT.set(0);
    long elements = 10;
    WeirPipelineOptions options = Pipelines.options(true);
    options.setRunner(WeirRunner.class);
    options.setParallelism(1);
    options.setMaxBundleSize(1); // every input bundle is finished at its element: only the firing opens the next one
    Pipeline p = Pipeline.create(options);
    // An unbounded source that goes quiet, watermark never moving: nothing but the firing's own
    // bundle can release what the buffering DoFn holds.
    p.apply(Read.from(new QuietAfterSource(elements)))
        .apply(WithKeys.of((Long x) -> x % 3).withKeyType(TypeDescriptors.longs()))
        .apply(Window.<KV<Long, Long>>into(new GlobalWindows())
            .triggering(Repeatedly.forever(AfterProcessingTime.pastFirstElementInPane().plusDelayOf(Duration.millis(20))))
            .discardingFiredPanes()
            .withAllowedLateness(Duration.ZERO))
        .apply(GroupByKey.create())
        .apply("BufferUntilFinishBundle", ParDo.of(new BufferUntilFinishBundle()))
        .apply("Record", ParDo.of(new RecordFinished()));
    PipelineResult result = p.run();
    try {
      for (int i = 0; i < 600 && FINISHED_BUNDLE_OUTPUT.get() < elements; i++) {
        assertThat(result.waitUntilFinish(Duration.millis(50))).isEqualTo(PipelineResult.State.RUNNING);
      }
      assertThat(FINISHED_BUNDLE_OUTPUT.get()).as("every value left @FinishBundle while the job runs").isEqualTo(elements);
      assertThat(result.getState()).isEqualTo(PipelineResult.State.RUNNING);
    } finally {
      result.cancel();
    }
  }

  static final AtomicLong PRODUCED = new AtomicLong();
  static final AtomicLong EARLY = new AtomicLong();
  static final AtomicLong CONSUMED = new AtomicLong();
  static final AtomicLong MAX_IN_FLIGHT = new AtomicLong();

  @Test
  void processingTimeTrigger_aGroupByKeyOverManyKeysFiresItsPanesWithoutFloodingItsOutbox() {
    PRODUCED.set(0);
    EARLY.set(0);
    CONSUMED.set(0);
    MAX_IN_FLIGHT.set(0);
    int keys = 5_000;
    TestStream.Builder<KV<Long, Long>> events = TestStream.create(KvCoder.of(VarLongCoder.of(), VarLongCoder.of()));
    List<TimestampedValue<KV<Long, Long>>> input = new ArrayList<>(keys);
    for (long k = 0; k < keys; k++) {
      input.add(TimestampedValue.of(KV.of(k, k), new Instant(0)));
    }
    // The manual clock moves once, past every key's pane timer: all of them are ready at one tick.
    TestStream<KV<Long, Long>> stream = events.addElements(input.get(0), input.subList(1, keys).toArray(new TimestampedValue[0]))
        .advanceProcessingTime(Duration.standardMinutes(1))
        .advanceWatermarkToInfinity();
    WeirPipelineOptions options = Pipelines.options(true);
    options.setParallelism(1);
    options.setRunner(WeirRunner.class);
    Pipeline p = Pipeline.create(options);
    PCollection<Long> panes = p.apply(stream)
        .apply(Window.<KV<Long, Long>>into(new GlobalWindows())
            .triggering(Repeatedly.forever(AfterProcessingTime.pastFirstElementInPane().plusDelayOf(Duration.standardSeconds(1))))
            .discardingFiredPanes()
            .withAllowedLateness(Duration.ZERO)
            .withOnTimeBehavior(Window.OnTimeBehavior.FIRE_IF_NON_EMPTY)) // no empty panes at the end of input
        .apply(GroupByKey.create())
        .apply("CountProduced", ParDo.of(new ProducedPane()))
        .apply("DefaultTrigger", Window.<Long>configure().triggering(DefaultTrigger.of())
            .withAllowedLateness(Duration.ZERO).discardingFiredPanes());
    PCollection<Long> other = p.apply("Other", Create.of(-1L));
    PCollectionList.of(panes).and(other).apply(Flatten.pCollections()).apply("SlowConsumer", ParDo.of(new Consumed()));
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
    assertThat(EARLY.get()).as("every key's pane fired by processing time").isEqualTo(keys);
    assertThat(CONSUMED.get()).as("every pane arrives").isEqualTo(keys + 1L);
    // The stream's capacity plus one firing's output in the outbox, not the 5k panes.
    assertThat(MAX_IN_FLIGHT.get()).isLessThan(JobExecutor.STREAM_PARTITION_CAPACITY + 256L);
  }

  /** Holds every value until {@code @FinishBundle}, then emits them all (a batching sink's shape). */
  static final class BufferUntilFinishBundle extends DoFn<KV<Long, Iterable<Long>>, Long> {
    private transient List<TimestampedValue<Long>> held;
    private transient List<BoundedWindow> windows;

    @StartBundle
    public void start() {
      held = new ArrayList<>();
      windows = new ArrayList<>();
    }

    @ProcessElement
    public void process(@Element KV<Long, Iterable<Long>> pane, @Timestamp Instant timestamp, BoundedWindow window) {
      for (Long value : pane.getValue()) {
        held.add(TimestampedValue.of(value, timestamp));
        windows.add(window);
      }
    }

    @FinishBundle
    public void finish(FinishBundleContext context) {
      for (int i = 0; i < held.size(); i++) {
        context.output(held.get(i).getValue(), held.get(i).getTimestamp(), windows.get(i));
      }
      held.clear();
      windows.clear();
    }
  }

  static final class RecordFinished extends DoFn<Long, Void> {
    @ProcessElement
    public void process(@Element Long x) {
      FINISHED_BUNDLE_OUTPUT.incrementAndGet();
    }
  }

  static final class ProducedPane extends DoFn<KV<Long, Iterable<Long>>, Long> {
    @ProcessElement
    public void process(@Element KV<Long, Iterable<Long>> pane, PaneInfo paneInfo, OutputReceiver<Long> out) {
      PRODUCED.incrementAndGet();
      if (paneInfo.getTiming() == PaneInfo.Timing.EARLY) {
        EARLY.incrementAndGet();
      }
      out.output(pane.getKey());
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

  /**
   * One split of the longs {@code 0..count-1} (timestamp = value), after which it has nothing more
   * and never ends; its watermark never leaves the minimum.
   */
  static final class QuietAfterSource extends UnboundedSource<Long, UnboundedSource.CheckpointMark> {
    private static final long serialVersionUID = 1L;
    private final long count;

    QuietAfterSource(long count) {
      this.count = count;
    }

    @Override
    public List<QuietAfterSource> split(int desiredNumSplits, PipelineOptions options) {
      return List.of(this);
    }

    @Override
    public UnboundedReader<Long> createReader(PipelineOptions options, CheckpointMark checkpointMark) {
      return new Reader();
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public Coder<CheckpointMark> getCheckpointMarkCoder() {
      return (Coder) SerializableCoder.of(NoMark.class);
    }

    @Override
    public Coder<Long> getOutputCoder() {
      return VarLongCoder.of();
    }

    /** Nothing to finalize. */
    static final class NoMark implements CheckpointMark, Serializable {
      private static final long serialVersionUID = 1L;

      @Override
      public void finalizeCheckpoint() {}
    }

    private final class Reader extends UnboundedReader<Long> {
      private long next;
      private Long current;

      @Override
      public boolean start() {
        return advance();
      }

      @Override
      public boolean advance() {
        if (next >= count) {
          current = null;
          return false;
        }
        current = next++;
        return true;
      }

      @Override
      public Long getCurrent() {
        if (current == null) {
          throw new NoSuchElementException();
        }
        return current;
      }

      @Override
      public Instant getCurrentTimestamp() {
        return new Instant(getCurrent());
      }

      @Override
      public Instant getWatermark() {
        return BoundedWindow.TIMESTAMP_MIN_VALUE;
      }

      @Override
      public CheckpointMark getCheckpointMark() {
        return new NoMark();
      }

      @Override
      public QuietAfterSource getCurrentSource() {
        return QuietAfterSource.this;
      }

      @Override
      public void close() {}
    }
  }
}
