package dev.weir.runner.task;

import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.stream.InProcessStream;
import dev.weir.runner.stream.KeyedElement;
import dev.weir.runner.stream.ProducerEndOfStream;
import dev.weir.runner.stream.ProducerWatermark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.WeirRunner;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.samza.container.TaskName;
import org.apache.samza.system.SystemStreamPartition;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A {@link StageTask} driven by hand, the way its container drives it: the phases a watermark and
 * the end of input take it through, and what {@link StageTask#nextOp()} tells the container
 * meanwhile. The task is the GroupByKey stage of {@code Create | Window | GroupByKey | Count}: its
 * input is the shuffle, fed here envelope by envelope on partition 0.
 */
class StageTaskPhaseTest {
  private static final int KEYS = 200; // more than fit in one slice: TIMERS_PER_PASS is 64
  private static final AtomicInteger GROUPS = new AtomicInteger();

  private StageTask task;
  private WeirTaskFactory factory;
  private TaskName taskName;
  private ContainerState state;
  private SystemStreamPartition ssp;
  private int producers;

  /** Counts the groups the GroupByKey emitted. */
  static final class CountGroups extends DoFn<KV<String, Iterable<Integer>>, Void> {
    @ProcessElement
    public void process() {
      GROUPS.incrementAndGet();
    }
  }

  @BeforeEach
  void openTheGroupByKeyTask() {
    GROUPS.set(0);
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=WeirRunner", "--parallelism=2",
        "--stateBackend=MEMORY").as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    p.apply(Create.of(KV.of("k", 1)).withCoder(KvCoder.of(StringUtf8Coder.of(), VarIntCoder.of())))
        .apply(Window.into(FixedWindows.of(Duration.millis(10))))
        .apply(GroupByKey.create())
        .apply(ParDo.of(new CountGroups()));
    JobPlan plan = WeirRunner.translate(p, options);
    StreamPlan shuffle = plan.streams().get(0);
    Map<Integer, InProcessStream> streams = new HashMap<>();
    for (StreamPlan stream : plan.streams()) {
      streams.put(stream.id(), new InProcessStream(stream, 1024));
    }
    factory = new WeirTaskFactory(plan, streams, WeirSettings.from(options), new StepMetrics(), JobClock.SYSTEM, null);
    StagePlan grouping = plan.stages().get(plan.stages().size() - 1);
    taskName = new TaskName(grouping.name() + "-p0");
    task = factory.createTask(taskName);
    ssp = streams.get(shuffle.id()).partition(0).ssp();
    producers = streams.get(shuffle.id()).partition(0).producers();
    state = ContainerState.inMemory(10_000);
    ContainerCommit commit = new ContainerCommit(state, new StepMetrics().newCommitter(), task::committed);
    task.open(new StepScope(), commit);
  }

  @AfterEach
  void close() throws Exception {
    task.close();
    state.close();
  }

  private void deliver(Object message, byte[] key) {
    task.process(task.inputIndex(ssp), KeyedElement.of(key, message));
  }

  private void elementsOfOneWindowOverManyKeys() throws Exception {
    IntervalWindow window = new IntervalWindow(new Instant(0), new Instant(10));
    for (int k = 0; k < KEYS; k++) {
      String key = "k" + k;
      deliver(WindowedValues.of(KV.of(key, k), new Instant(1), window, PaneInfo.NO_FIRING),
          CoderUtils.encodeToByteArray(StringUtf8Coder.of(), key));
    }
  }

  /** Resumes the firing as the container does while the task asks for it; returns the passes. */
  private int fireWhileAsked() {
    int passes = 0;
    while (task.nextOp() == TaskOp.FIRE_TIMERS) {
      assertThat(task.continueTimers()).as("a slice").isBetween(1, StageTask.TIMERS_PER_PASS);
      passes++;
    }
    return passes;
  }

  @Test
  void aWatermarkThatMakesManyTimersReady_firesThemInSlicesTakingNoInputMeanwhile() throws Exception {
    assertThat(task.phase()).isEqualTo(TaskPhase.RUNNING);
    assertThat(task.nextOp()).isEqualTo(TaskOp.PROCESS);
    elementsOfOneWindowOverManyKeys();
    for (int producer = 0; producer < producers; producer++) {
      assertThat(task.phase()).as("the minimum over producers has not moved yet").isEqualTo(TaskPhase.RUNNING);
      deliver(new ProducerWatermark(100, producer, "upstream"), null);
    }

    assertThat(task.phase()).isEqualTo(TaskPhase.FIRING);
    assertThat(task.nextOp()).as("no input, no tick while firing").isEqualTo(TaskOp.FIRE_TIMERS);
    assertThat(GROUPS.get()).as("the watermark's own pass fired one slice").isEqualTo(StageTask.TIMERS_PER_PASS);

    int passes = fireWhileAsked();
    assertThat(passes).isEqualTo((KEYS - 1) / StageTask.TIMERS_PER_PASS);
    assertThat(GROUPS.get()).isEqualTo(KEYS);
    assertThat(task.phase()).isEqualTo(TaskPhase.RUNNING);
    assertThat(task.nextOp()).isEqualTo(TaskOp.PROCESS);
  }

  @Test
  void theEndOfInput_waitsForItsFiringsThenTheTaskIsDone() throws Exception {
    elementsOfOneWindowOverManyKeys();
    for (int producer = 0; producer < producers - 1; producer++) {
      deliver(new ProducerEndOfStream(producer, "upstream"), null);
    }
    assertThat(task.phase()).as("one producer has not ended").isEqualTo(TaskPhase.RUNNING);

    deliver(new ProducerEndOfStream(producers - 1, "upstream"), null);
    assertThat(task.phase()).isEqualTo(TaskPhase.ENDING);
    assertThat(task.nextOp()).isEqualTo(TaskOp.FIRE_TIMERS);

    fireWhileAsked();
    assertThat(GROUPS.get()).isEqualTo(KEYS);
    assertThat(task.phase()).isEqualTo(TaskPhase.DONE);
    assertThat(task.nextOp()).isEqualTo(TaskOp.NONE);

    task.endOfInput();
    assertThat(task.phase()).as("a second end of input changes nothing").isEqualTo(TaskPhase.DONE);
  }

  @Test
  void aTickWithNothingToDoReportsNoWork() {
    assertThat(task.tick(false)).isZero();
    assertThat(task.phase()).isEqualTo(TaskPhase.RUNNING);
  }

  @Test
  void aCheckpointFirstFinishesTheOpenBundle_andATaskIsNotQuietWhileItFires() throws Exception {
    elementsOfOneWindowOverManyKeys();
    assertThat(task.quietForCheckpoint()).as("a bundle is open").isFalse();
    assertThat(task.finishBundleForCheckpoint()).as("the open bundle finished").isEqualTo(1);
    assertThat(task.finishBundleForCheckpoint()).as("no bundle left").isZero();
    assertThat(task.quietForCheckpoint()).as("buffered elements are state, not work in flight").isTrue();

    for (int producer = 0; producer < producers; producer++) {
      deliver(new ProducerWatermark(100, producer, "upstream"), null);
    }
    assertThat(task.phase()).isEqualTo(TaskPhase.FIRING);
    assertThat(task.quietForCheckpoint()).as("firings pending").isFalse();
    fireWhileAsked();
    assertThat(task.quietForCheckpoint()).isTrue();
  }

  @Test
  void aTaskRestoredFromASnapshot_resumesTheWatermarksItHadReached() throws Exception {
    for (int producer = 0; producer < producers; producer++) {
      deliver(new ProducerWatermark(100 + producer, producer, "upstream"), null);
    }
    assertThat(task.stats().inputWatermarkMs()).as("the minimum over producers").isEqualTo(100);
    Map<String, byte[]> metadata = new HashMap<>();
    task.snapshot(metadata);
    assertThat(metadata).containsKey("task/" + taskName.getTaskName() + "/watermarks");

    StageTask restored = factory.createTask(taskName);
    ContainerState restoredState = ContainerState.inMemory(10_000);
    try {
      restored.restore(metadata);
      restored.open(new StepScope(), new ContainerCommit(restoredState, new StepMetrics().newCommitter(),
          restored::committed), true);
      assertThat(restored.stats().inputWatermarkMs()).as("resumed where the snapshot was").isEqualTo(100);
      assertThat(restored.phase()).isEqualTo(TaskPhase.RUNNING);
      deliver(restored, new ProducerWatermark(50, 0, "upstream"));
      assertThat(restored.stats().inputWatermarkMs())
          .as("each producer's watermark was restored: an older one replayed does not move it back").isEqualTo(100);
    } finally {
      restored.close();
      restoredState.close();
    }
  }

  private void deliver(StageTask target, Object message) {
    target.process(target.inputIndex(ssp), KeyedElement.of(null, message));
  }
}
