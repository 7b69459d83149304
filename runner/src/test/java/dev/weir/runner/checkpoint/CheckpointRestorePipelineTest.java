package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import java.io.IOException;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A streaming job with per-key state is cancelled after a checkpoint and started again under the
 * same name: it resumes from the checkpoint (source mark, state), so every element is counted
 * exactly once over both runs; a job with another plan is refused naming the difference; and
 * {@code --restoreMode=NONE} starts fresh.
 */
class CheckpointRestorePipelineTest {
  /** Elements the source may emit now; raised by the test. */
  static final AtomicLong GATE = new AtomicLong();
  /** Where the source ends (watermark +infinity); Long.MAX_VALUE: never. */
  static final AtomicLong END = new AtomicLong(Long.MAX_VALUE);
  static final AtomicLong SEEN = new AtomicLong();
  static final AtomicLong STABLE_SEEN = new AtomicLong();
  static final AtomicLong SIDE_SEEN = new AtomicLong();
  static final java.util.concurrent.atomic.AtomicBoolean SIDE_OPEN = new java.util.concurrent.atomic.AtomicBoolean();
  static final Map<Long, Long> COUNTS = new ConcurrentHashMap<>();

  @TempDir Path stateDirectory;

  @Test
  void aRestartedJobResumesFromItsLastCheckpoint_countingEveryElementOnce() throws Exception {
    GATE.set(1000);
    END.set(Long.MAX_VALUE);
    SEEN.set(0);
    COUNTS.clear();
    PipelineResult first = pipeline("job-a", "LATEST", "count").run();
    awaitSeen(1000);
    awaitCheckpoint();
    first.cancel();
    assertThat(COUNTS.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(1000);

    GATE.set(2000);
    END.set(2000);
    PipelineResult second = pipeline("job-a", "LATEST", "count").run();
    assertThat(second.waitUntilFinish(Duration.standardMinutes(2))).isEqualTo(PipelineResult.State.DONE);
    assertThat(COUNTS).hasSize(5);
    assertThat(COUNTS.values()).containsOnly(400L); // 2,000 elements over 5 keys, each once
    org.apache.beam.sdk.metrics.MetricQueryResults metrics = second.metrics().queryMetrics(
        org.apache.beam.sdk.metrics.MetricsFilter.builder().addNameFilter(
            org.apache.beam.sdk.metrics.MetricNameFilter.named(CheckpointRestorePipelineTest.class, "counted")).build());
    assertThat(metrics.getCounters()).singleElement().satisfies(counter -> {
      assertThat(counter.getAttempted()).as("the checkpoint's count goes on").isEqualTo(2000L);
      assertThat(counter.getCommitted()).isEqualTo(2000L);
    });
  }

  @ParameterizedTest(name = "parallelism {0}, then {1}, then {2}")
  @CsvSource({"2, 2, 2", "2, 4, 1"})
  void aJobRestoredOnOtherNumbersOfContainersAndPartitions_keepsEveryKeysState(int first, int second,
      int third) throws Exception {
    GATE.set(1000);
    END.set(Long.MAX_VALUE);
    SEEN.set(0);
    COUNTS.clear();
    String job = "job-r" + first + second + third;
    PipelineResult one = pipeline(job, "LATEST", "count", 2, first).run();
    awaitSeen(1000);
    awaitCheckpoint();
    one.cancel();

    GATE.set(1500);
    PipelineResult two = pipeline(job, "LATEST", "count", 3, second).run();
    awaitSeen(1500);
    awaitCheckpoint();
    two.cancel();
    assertThat(COUNTS.values()).as("every key's count went on from the first run's").containsOnly(300L);

    GATE.set(2000);
    END.set(2000);
    PipelineResult three = pipeline(job, "LATEST", "count", 1, third).run();
    assertThat(three.waitUntilFinish(Duration.standardMinutes(2))).isEqualTo(PipelineResult.State.DONE);
    assertThat(COUNTS).hasSize(5);
    assertThat(COUNTS.values()).containsOnly(400L);
  }

  /**
   * Runs the counting job {@code job} over the source's first {@code elements} elements, then stops
   * it with a savepoint; returns the savepoint's directory.
   */
  private Path countToASavepoint(String job, long elements) throws Exception {
    GATE.set(elements);
    END.set(Long.MAX_VALUE);
    SEEN.set(0);
    COUNTS.clear();
    dev.weir.runner.WeirPipelineResult result = (dev.weir.runner.WeirPipelineResult) pipeline(job, "LATEST",
        "count").run();
    awaitSeen(elements);
    Path savepoint = result.stopWithSavepoint(Duration.standardSeconds(30));
    assertThat(result.getState()).isEqualTo(PipelineResult.State.CANCELLED);
    return savepoint;
  }

  @Test
  void aJobStoppedWithASavepoint_resumesThere_countingEveryElementOnce() throws Exception {
    Path savepoint = countToASavepoint("job-s", 1000);
    assertThat(savepoint.resolve(CheckpointStore.MANIFEST)).exists();
    assertThat(COUNTS.values()).containsOnly(200L);
    assertThat(newestCheckpoint(savepoint.getParent())).as("the savepoint is the newest checkpoint: the restart begins there")
        .isEqualTo(Long.parseLong(savepoint.getFileName().toString().substring(4)));

    GATE.set(2000);
    END.set(2000);
    PipelineResult second = pipeline("job-s", "LATEST", "count").run();
    assertThat(second.waitUntilFinish(Duration.standardMinutes(2))).isEqualTo(PipelineResult.State.DONE);
    assertThat(COUNTS.values()).hasSize(5).containsOnly(400L);
  }

  static final Map<String, Long> WINDOW_COUNTS = new ConcurrentHashMap<>();

  /** Adds each window's count per key to {@link #WINDOW_COUNTS}, under {@code key@windowMaxTimestamp}. */
  static final class RecordWindowCountFn extends DoFn<KV<Long, Long>, Void> {
    @ProcessElement
    public void process(@Element KV<Long, Long> count, BoundedWindow window) {
      WINDOW_COUNTS.merge(count.getKey() + "@" + window.maxTimestamp().getMillis(), count.getValue(), Long::sum);
    }
  }

  @Test
  void aDrainedJob_firesEveryWindow_andEndsDone_withTheResultsOfABoundedRun() throws Exception {
    GATE.set(1050);
    END.set(Long.MAX_VALUE); // the source itself never ends; its watermark stays at 1050
    SEEN.set(0);
    COUNTS.clear();
    WINDOW_COUNTS.clear();
    Pipeline p = pipeline("job-d", "LATEST", "count");
    p.apply("Read again", Read.from(new GatedSource()))
        .apply("Key again", WithKeys.of((Long n) -> n % 5).withKeyType(TypeDescriptors.longs()))
        .apply(org.apache.beam.sdk.transforms.windowing.Window.into(
            org.apache.beam.sdk.transforms.windowing.FixedWindows.of(Duration.millis(100))))
        .apply(org.apache.beam.sdk.transforms.Count.perKey())
        .apply(ParDo.of(new RecordWindowCountFn()));
    dev.weir.runner.WeirPipelineResult result = (dev.weir.runner.WeirPipelineResult) p.run();
    awaitSeen(1050);
    Thread.sleep(300);
    assertThat(WINDOW_COUNTS.keySet()).as("the window [1000, 1100) waits for the watermark")
        .noneMatch(k -> k.endsWith("@1099"));
    result.drain();
    assertThat(result.waitUntilFinish(Duration.standardMinutes(1))).isEqualTo(PipelineResult.State.DONE);
    // a bounded run over 0..1049: 10 windows of 100 ms x 5 keys with 20 elements each, and [1000, 1100) with
    // 10 per key, each fired once
    assertThat(WINDOW_COUNTS).hasSize(55);
    WINDOW_COUNTS.forEach((k, n) -> assertThat(n).as(k).isEqualTo(k.endsWith("@1099") ? 10L : 20L));
    assertThat(COUNTS.values()).containsOnly(210L);
    assertThat(stateDirectory.resolve("job-d")).as("a drained job ended normally: its state is gone").doesNotExist();
  }

  @Test
  void stateItsCoderCannotReadBack_failsTheJobAtItsFirstCheckpoint_namingIt_andNoCheckpointHoldsIt()
      throws Exception {
    GATE.set(100);
    END.set(Long.MAX_VALUE);
    SEEN.set(0);
    UnreadableStateFn.WRITE_UNREADABLE = true;
    PipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=" + WeirRunner.class.getName(),
        "--jobName=job-u", "--stateDirectory=" + stateDirectory, "--stateBackend=ROCKSDB", "--containers=2",
        "--parallelism=2", "--checkpointingIntervalMs=100", "--streaming").as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    p.apply(Read.from(new GatedSource()))
        .apply(WithKeys.of((Long n) -> n % 5).withKeyType(TypeDescriptors.longs()))
        .apply("Remember", ParDo.of(new UnreadableStateFn()));
    PipelineResult result = p.run();
    awaitSeen(100);
    awaitCheckpoint();
    Path checkpoints = stateDirectory.resolve("job-u").resolve("checkpoints");
    long good = newestCheckpoint(checkpoints);
    assertThat(good).isPositive();

    GATE.set(200); // elements from 100 on write state whose coder cannot decode it
    assertThatThrownBy(() -> result.waitUntilFinish(Duration.standardMinutes(1)))
        .isInstanceOf(Pipeline.PipelineExecutionException.class)
        .hasMessageContaining("'unreadable'")
        .hasMessageContaining("Remember")
        .hasMessageContaining("UnreadableCoder")
        .hasMessageMatching("(?s).*of key [0-4] .*");
    assertThat(newestCheckpoint(checkpoints)).isGreaterThanOrEqualTo(good);

    // The newest complete checkpoint holds nothing unreadable: a restart that reads every key's state from it
    // (the cache starts empty) runs to the end.
    END.set(200);
    UnreadableStateFn.WRITE_UNREADABLE = false;
    Pipeline restart = Pipeline.create(options);
    restart.apply(Read.from(new GatedSource()))
        .apply(WithKeys.of((Long n) -> n % 5).withKeyType(TypeDescriptors.longs()))
        .apply("Remember", ParDo.of(new UnreadableStateFn()));
    assertThat(restart.run().waitUntilFinish(Duration.standardMinutes(1))).isEqualTo(PipelineResult.State.DONE);
  }

  /** Encodes a long as VarLongCoder does; cannot decode anything. */
  static final class UnreadableCoder extends org.apache.beam.sdk.coders.AtomicCoder<Long> {
    @Override
    public void encode(Long value, java.io.OutputStream out) throws IOException {
      VarLongCoder.of().encode(value, out);
    }

    @Override
    public Long decode(java.io.InputStream in) throws IOException {
      throw new org.apache.beam.sdk.coders.CoderException("this coder cannot decode");
    }

    @Override
    public String toString() {
      return "UnreadableCoder";
    }
  }

  /**
   * Remembers the last element per key, and while {@link #WRITE_UNREADABLE}, from element 100 on,
   * also in state whose coder cannot decode; reads that state first (from the store after a restore).
   */
  static final class UnreadableStateFn extends DoFn<KV<Long, Long>, Void> {
    static volatile boolean WRITE_UNREADABLE = true;

    @StateId("fine")
    private final StateSpec<ValueState<Long>> fine = StateSpecs.value(VarLongCoder.of());

    @StateId("unreadable")
    private final StateSpec<ValueState<Long>> unreadable = StateSpecs.value(new UnreadableCoder());

    @ProcessElement
    public void process(@Element KV<Long, Long> element, @StateId("fine") ValueState<Long> fine,
        @StateId("unreadable") ValueState<Long> unreadable) {
      unreadable.read(); // after a restore, decoded from the checkpoint: throws if it holds a value
      fine.write(element.getValue());
      if (WRITE_UNREADABLE && element.getValue() >= 100) {
        unreadable.write(element.getValue());
      }
      SEEN.incrementAndGet();
    }
  }

  @Test
  void aJobStartedFromAnotherJobsSavepoint_resumesThere_underItsOwnName() throws Exception {
    Path savepoint = countToASavepoint("job-old", 1000);

    GATE.set(2000);
    END.set(2000);
    Pipeline p = pipeline("job-new", "LATEST", "count");
    p.getOptions().as(WeirPipelineOptions.class).setRestoreFrom(savepoint.toString());
    assertThat(p.run().waitUntilFinish(Duration.standardMinutes(2))).isEqualTo(PipelineResult.State.DONE);
    assertThat(COUNTS.values()).hasSize(5).containsOnly(400L);
    assertThat(savepoint.resolve(CheckpointStore.MANIFEST)).as("the savepoint is left as it was").exists();
  }

  @Test
  void restoreFromADirectoryWithoutACheckpoint_failsNamingTheOptionAndThePath() {
    Pipeline p = pipeline("job-x", "LATEST", "count");
    p.getOptions().as(WeirPipelineOptions.class).setRestoreFrom(stateDirectory.toString());
    assertThatThrownBy(p::run).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--restoreFrom=" + stateDirectory).hasMessageContaining("checkpoint.json");
  }

  @Test
  void aJobWithoutCheckpoints_cannotStopWithASavepoint_andSaysWhy() throws Exception {
    PipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=" + WeirRunner.class.getName(),
        "--jobName=job-n", "--stateBackend=MEMORY", "--streaming").as(WeirPipelineOptions.class);
    GATE.set(10);
    END.set(Long.MAX_VALUE);
    Pipeline p = Pipeline.create(options);
    p.apply(Read.from(new GatedSource()));
    dev.weir.runner.WeirPipelineResult result = (dev.weir.runner.WeirPipelineResult) p.run();
    try {
      assertThatThrownBy(() -> result.stopWithSavepoint(Duration.standardSeconds(5)))
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("takes no checkpoints")
          .hasMessageContaining("--stateBackend=MEMORY");
    } finally {
      result.cancel();
    }
  }

  @Test
  void aRestoredJobGoesOnTakingCheckpoints() throws Exception {
    GATE.set(100);
    END.set(Long.MAX_VALUE);
    SEEN.set(0);
    COUNTS.clear();
    PipelineResult first = pipeline("job-f", "LATEST", "count").run();
    awaitSeen(100);
    awaitCheckpoint();
    first.cancel();
    Path checkpoints = stateDirectory.resolve("job-f").resolve("checkpoints");
    long before = newestCheckpoint(checkpoints);
    PipelineResult second = pipeline("job-f", "LATEST", "count").run();
    Thread.sleep(1000);
    long after = newestCheckpoint(checkpoints);
    second.cancel();
    assertThat(after).as("checkpoints after the restore of %s", before).isGreaterThan(before);
  }

  private static long newestCheckpoint(Path checkpoints) throws IOException {
    try (Stream<Path> dirs = Files.list(checkpoints)) {
      return dirs.filter(d -> Files.exists(d.resolve(CheckpointStore.MANIFEST)))
          .mapToLong(d -> Long.parseLong(d.getFileName().toString().substring(4))).max().orElse(0);
    }
  }

  @Test
  void aJobWithAnotherPlanIsRefused_unlessRestoreModeIsNone() throws Exception {
    GATE.set(100);
    END.set(Long.MAX_VALUE);
    SEEN.set(0);
    COUNTS.clear();
    PipelineResult first = pipeline("job-b", "LATEST", "count").run();
    awaitSeen(100);
    awaitCheckpoint();
    first.cancel();

    assertThatThrownBy(() -> pipeline("job-b", "LATEST", "renamed").run())
        .hasMessageContaining("keyed state of PTransform 'count/ParMultiDo(Count)'")
        .hasMessageContaining("which the job does not have")
        .hasMessageContaining("--allowNonRestoredState=true")
        .hasMessageContaining("--restoreMode=NONE");

    GATE.set(100);
    END.set(100);
    COUNTS.clear();
    PipelineResult fresh = pipeline("job-b", "NONE", "renamed").run();
    assertThat(fresh.waitUntilFinish(Duration.standardMinutes(2))).isEqualTo(PipelineResult.State.DONE);
    assertThat(COUNTS.values()).containsOnly(20L); // started over: 100 elements, 5 keys
  }

  @Test
  void anUpgradedPipeline_withAStepAddedAndItsDoFnsCodeChanged_keepsEveryKeysState() throws Exception {
    countToASavepoint("job-u", 1000);
    assertThat(COUNTS.values()).containsOnly(200L);

    GATE.set(2000);
    END.set(2000);
    UPGRADED_SEEN.set(0);
    PipelineResult upgraded = pipeline("job-u", new CountFnV2(), true, 2, 2).run();
    assertThat(upgraded.waitUntilFinish(Duration.standardMinutes(2))).isEqualTo(PipelineResult.State.DONE);
    assertThat(UPGRADED_SEEN.get()).as("the new code ran, on the elements after the savepoint").isEqualTo(1000);
    assertThat(COUNTS.values()).as("every key's count went on from the savepoint's").hasSize(5).containsOnly(400L);
  }

  @Test
  void anUpgradedPipelineWhoseStateCoderChanged_failsNamingTheTransform_unlessTheStateIsDropped()
      throws Exception {
    countToASavepoint("job-c", 1000);

    assertThatThrownBy(() -> pipeline("job-c", new BigEndianCountFn(), false, 2, 2).run())
        .hasMessageContaining("PTransform 'count/ParMultiDo(Count)' holds keyed state of another shape in the checkpoint")
        .hasMessageContaining("count=value(VarLongCoder)")
        .hasMessageContaining("count=value(BigEndianLongCoder)")
        .hasMessageContaining("--allowNonRestoredState=true");

    GATE.set(2000);
    END.set(2000);
    COUNTS.clear();
    PipelineResult dropped = pipeline("job-c", new BigEndianCountFn(), false, 2, 2,
        "--allowNonRestoredState=true").run();
    assertThat(dropped.waitUntilFinish(Duration.standardMinutes(2))).isEqualTo(PipelineResult.State.DONE);
    assertThat(COUNTS.values()).as("counts start over; the source resumed at the savepoint's position")
        .hasSize(5).containsOnly(200L);
  }

  @Test
  void aRequiresStableInputDoFnSeesItsInputOnlyOnceACheckpointHoldingItCompleted() throws Exception {
    GATE.set(100);
    END.set(Long.MAX_VALUE);
    SEEN.set(0);
    STABLE_SEEN.set(0);
    COUNTS.clear();
    PipelineResult rare = stablePipeline("job-c", 3_600_000L).run(); // no checkpoint during the test
    awaitSeen(100);
    Thread.sleep(500);
    assertThat(STABLE_SEEN.get()).as("held until a checkpoint contains it").isZero();
    rare.cancel();

    SEEN.set(0);
    END.set(100);
    PipelineResult frequent = stablePipeline("job-d", 100L).run();
    assertThat(frequent.waitUntilFinish(Duration.standardMinutes(2))).isEqualTo(PipelineResult.State.DONE);
    assertThat(STABLE_SEEN.get()).isEqualTo(100);
  }

  private Pipeline stablePipeline(String jobName, long intervalMs) {
    PipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=" + WeirRunner.class.getName(),
        "--jobName=" + jobName, "--stateDirectory=" + stateDirectory, "--stateBackend=ROCKSDB",
        "--checkpointingIntervalMs=" + intervalMs, "--streaming").as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    org.apache.beam.sdk.values.PCollection<KV<Long, Long>> keyed = p.apply(Read.from(new GatedSource()))
        .apply(WithKeys.of((Long n) -> n % 5).withKeyType(TypeDescriptors.longs()));
    keyed.apply("count", ParDo.of(new CountFn()));
    keyed.apply("stable", ParDo.of(new StableFn()));
    return p;
  }

  /** Counts what it is given; its input must be stable. */
  static final class StableFn extends DoFn<KV<Long, Long>, Void> {
    @RequiresStableInput
    @ProcessElement
    public void process(@Element KV<Long, Long> element) {
      STABLE_SEEN.incrementAndGet();
    }
  }

  @Test
  void aCheckpointThatCannotBeWritten_failsTheJobNamingThePath() throws Exception {
    GATE.set(100);
    END.set(Long.MAX_VALUE);
    SEEN.set(0);
    COUNTS.clear();
    Path checkpoints = stateDirectory.resolve("job-e").resolve("checkpoints");
    Files.createDirectories(checkpoints.getParent());
    Files.writeString(checkpoints, "not a directory"); // every checkpoint fails (ENOTDIR)
    PipelineResult job = pipeline("job-e", "LATEST", "count").run();
    assertThatThrownBy(() -> job.waitUntilFinish(Duration.standardMinutes(1)))
        .hasStackTraceContaining(checkpoints.toString());
    assertThat(job.getState()).isEqualTo(PipelineResult.State.FAILED);
  }

  @Test
  void elementsPushedBackForASideInputAreInTheCheckpoint_andRunOnceTheSideInputIsReady() throws Exception {
    GATE.set(100);
    END.set(Long.MAX_VALUE);
    SEEN.set(0);
    SIDE_SEEN.set(0);
    SIDE_OPEN.set(false);
    COUNTS.clear();
    PipelineResult first = sidePipeline("job-g").run();
    awaitSeen(100); // read, and pushed back: the side input's window is not ready
    awaitCheckpoint();
    first.cancel();
    assertThat(SIDE_SEEN.get()).isZero();

    SEEN.set(0);
    SIDE_OPEN.set(true);
    END.set(100);
    PipelineResult second = sidePipeline("job-g").run();
    assertThat(second.waitUntilFinish(Duration.standardMinutes(2))).isEqualTo(PipelineResult.State.DONE);
    assertThat(SEEN.get()).as("nothing read again: the checkpoint holds all 100 elements").isZero();
    assertThat(SIDE_SEEN.get()).as("every pushed-back element ran once, with the side input").isEqualTo(100);
  }

  private Pipeline sidePipeline(String jobName) {
    PipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=" + WeirRunner.class.getName(),
        "--jobName=" + jobName, "--stateDirectory=" + stateDirectory, "--stateBackend=ROCKSDB",
        "--checkpointingIntervalMs=100", "--streaming").as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    org.apache.beam.sdk.transforms.windowing.Window<Long> window = org.apache.beam.sdk.transforms.windowing.Window
        .into(org.apache.beam.sdk.transforms.windowing.FixedWindows.of(Duration.standardSeconds(1)));
    org.apache.beam.sdk.values.PCollectionView<Long> side = p.apply("side", Read.from(new SideSource()))
        .apply("side window", window).apply(org.apache.beam.sdk.transforms.View.asSingleton());
    org.apache.beam.sdk.values.PCollection<Long> main = p.apply(Read.from(new GatedSource())).apply(window);
    main.apply(WithKeys.of((Long n) -> n % 5).withKeyType(TypeDescriptors.longs())).apply(ParDo.of(new CountFn()));
    main.apply("join", ParDo.of(new JoinFn(side)).withSideInputs(side));
    return p;
  }

  /** Counts the elements that saw the side input's value. */
  static final class JoinFn extends DoFn<Long, Void> {
    private final org.apache.beam.sdk.values.PCollectionView<Long> side;

    JoinFn(org.apache.beam.sdk.values.PCollectionView<Long> side) {
      this.side = side;
    }

    @ProcessElement
    public void process(ProcessContext c) {
      if (c.sideInput(side) == 42L) {
        SIDE_SEEN.incrementAndGet();
      }
    }
  }

  /** One element, 42 at time 0, once {@link #SIDE_OPEN}; until then no data and no watermark. */
  static final class SideSource extends UnboundedSource<Long, GatedSource.Mark> {
    @Override
    public List<SideSource> split(int desiredNumSplits, PipelineOptions options) {
      return List.of(this);
    }

    @Override
    public UnboundedReader<Long> createReader(PipelineOptions options, GatedSource.Mark mark) {
      return new UnboundedReader<>() {
        private boolean emitted = mark != null && mark.next() > 0;

        @Override
        public boolean start() {
          return advance();
        }

        @Override
        public boolean advance() {
          if (emitted || !SIDE_OPEN.get()) {
            return false;
          }
          emitted = true;
          return true;
        }

        @Override
        public Long getCurrent() {
          return 42L;
        }

        @Override
        public Instant getCurrentTimestamp() {
          return new Instant(0);
        }

        @Override
        public void close() {}

        @Override
        public Instant getWatermark() {
          return emitted ? BoundedWindow.TIMESTAMP_MAX_VALUE : BoundedWindow.TIMESTAMP_MIN_VALUE;
        }

        @Override
        public UnboundedSource.CheckpointMark getCheckpointMark() {
          return new GatedSource.Mark(emitted ? 1 : 0);
        }

        @Override
        public UnboundedSource<Long, ?> getCurrentSource() {
          return SideSource.this;
        }
      };
    }

    @Override
    public Coder<GatedSource.Mark> getCheckpointMarkCoder() {
      return SerializableCoder.of(GatedSource.Mark.class);
    }

    @Override
    public Coder<Long> getOutputCoder() {
      return VarLongCoder.of();
    }
  }

  private void awaitSeen(long n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (SEEN.get() < n && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(SEEN.get()).isEqualTo(n);
  }

  /** Waits until two more checkpoints completed after everything was seen (the second one holds it all). */
  private void awaitCheckpoint() throws Exception {
    Thread.sleep(600); // checkpoints every 100 ms
    try (Stream<Path> jobs = Files.list(stateDirectory)) {
      assertThat(jobs.anyMatch(job -> Files.isDirectory(job.resolve("checkpoints")))).isTrue();
    }
  }

  private Pipeline pipeline(String jobName, String restoreMode, String countName) {
    return pipeline(jobName, restoreMode, countName, 2, 2);
  }

  private Pipeline pipeline(String jobName, String restoreMode, String countName, int containers,
      int parallelism) {
    return pipeline(jobName, countName, new CountFn(), false, containers, parallelism, "--restoreMode=" + restoreMode);
  }

  /** The counting job, its "count" step running {@code countFn}; upgraded with a step before the keys if {@code addedStep}. */
  private Pipeline pipeline(String jobName, DoFn<KV<Long, Long>, Void> countFn, boolean addedStep, int containers,
      int parallelism, String... args) {
    return pipeline(jobName, "count", countFn, addedStep, containers, parallelism, args);
  }

  private Pipeline pipeline(String jobName, String countName, DoFn<KV<Long, Long>, Void> countFn, boolean addedStep,
      int containers, int parallelism, String... args) {
    List<String> all = new java.util.ArrayList<>(List.of("--runner=" + WeirRunner.class.getName(),
        "--jobName=" + jobName, "--stateDirectory=" + stateDirectory, "--stateBackend=ROCKSDB",
        "--containers=" + containers, "--parallelism=" + parallelism, "--checkpointingIntervalMs=100", "--streaming"));
    all.addAll(List.of(args));
    PipelineOptions options = PipelineOptionsFactory.fromArgs(all.toArray(String[]::new)).as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    org.apache.beam.sdk.values.PCollection<Long> read = p.apply(Read.from(new GatedSource()));
    if (addedStep) {
      read = read.apply("AddedStep", org.apache.beam.sdk.transforms.Filter.by((Long n) -> n >= 0));
    }
    read.apply(WithKeys.of((Long n) -> n % 5).withKeyType(TypeDescriptors.longs()))
        .apply(countName, ParDo.of(countFn));
    return p;
  }

  static final AtomicLong UPGRADED_SEEN = new AtomicLong();

  /** The counting DoFn's next version: the same state, other code. */
  static final class CountFnV2 extends DoFn<KV<Long, Long>, Void> {
    @StateId("count")
    private final StateSpec<ValueState<Long>> count = StateSpecs.value(VarLongCoder.of());

    @ProcessElement
    public void process(@Element KV<Long, Long> element, @StateId("count") ValueState<Long> count) {
      long next = java.util.Objects.requireNonNullElse(count.read(), 0L) + 1;
      count.write(next);
      COUNTS.put(element.getKey(), next);
      UPGRADED_SEEN.incrementAndGet();
    }
  }

  /** The counting DoFn with its state in another coder: the checkpoint's bytes mean something else to it. */
  static final class BigEndianCountFn extends DoFn<KV<Long, Long>, Void> {
    @StateId("count")
    private final StateSpec<ValueState<Long>> count = StateSpecs.value(org.apache.beam.sdk.coders.BigEndianLongCoder.of());

    @ProcessElement
    public void process(@Element KV<Long, Long> element, @StateId("count") ValueState<Long> count) {
      long next = java.util.Objects.requireNonNullElse(count.read(), 0L) + 1;
      count.write(next);
      COUNTS.put(element.getKey(), next);
    }
  }

  /** Counts per key in state and records the running count. */
  static final class CountFn extends DoFn<KV<Long, Long>, Void> {
    private final org.apache.beam.sdk.metrics.Counter COUNTED =
        org.apache.beam.sdk.metrics.Metrics.counter(CheckpointRestorePipelineTest.class, "counted");

    @StateId("count")
    private final StateSpec<ValueState<Long>> count = StateSpecs.value(VarLongCoder.of());

    @ProcessElement
    public void process(@Element KV<Long, Long> element, @StateId("count") ValueState<Long> count) {
      Long old = count.read();
      long next = (old == null ? 0 : old) + 1;
      count.write(next);
      COUNTS.put(element.getKey(), next);
      SEEN.incrementAndGet();
      COUNTED.inc();
    }
  }

  /** One split of 0, 1, 2, ... up to {@link #GATE} now, ending at {@link #END}; the mark is the next index. */
  static final class GatedSource extends UnboundedSource<Long, GatedSource.Mark> {
    record Mark(long next) implements UnboundedSource.CheckpointMark, Serializable {
      @Override
      public void finalizeCheckpoint() {}
    }

    @Override
    public List<GatedSource> split(int desiredNumSplits, PipelineOptions options) {
      return List.of(this);
    }

    @Override
    public UnboundedReader<Long> createReader(PipelineOptions options, Mark mark) {
      return new Reader(this, mark == null ? 0 : mark.next());
    }

    @Override
    public Coder<Mark> getCheckpointMarkCoder() {
      return SerializableCoder.of(Mark.class);
    }

    @Override
    public Coder<Long> getOutputCoder() {
      return VarLongCoder.of();
    }

    static final class Reader extends UnboundedReader<Long> {
      private final GatedSource source;
      private long next;
      private Long current;

      Reader(GatedSource source, long next) {
        this.source = source;
        this.next = next;
      }

      @Override
      public boolean start() {
        return advance();
      }

      @Override
      public boolean advance() {
        if (next >= GATE.get() || next >= END.get()) {
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
      public void close() throws IOException {}

      @Override
      public Instant getWatermark() {
        return next >= END.get() ? BoundedWindow.TIMESTAMP_MAX_VALUE : new Instant(next);
      }

      @Override
      public UnboundedSource.CheckpointMark getCheckpointMark() {
        return new Mark(next);
      }

      @Override
      public UnboundedSource<Long, ?> getCurrentSource() {
        return source;
      }
    }
  }
}
