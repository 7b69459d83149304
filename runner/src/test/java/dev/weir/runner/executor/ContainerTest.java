package dev.weir.runner.executor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.metrics.RunLoopMetrics;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.operators.FailureContext;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.stream.InProcessStream;
import dev.weir.runner.task.StageTask;
import dev.weir.runner.task.TaskOp;
import dev.weir.runner.task.WeirTaskFactory;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.samza.container.TaskName;
import org.junit.jupiter.api.Test;

/**
 * One container's run loop on its own, through its {@link ContainerContext}: in-memory state from
 * a state opener, a failure coordinator with a recording end hook, every task of a small job on
 * this one container, run on the test's thread (or a thread of its own, to be stopped). Nothing
 * here goes through {@link JobExecutor}.
 */
class ContainerTest {
  private static final AtomicInteger TEARDOWNS = new AtomicInteger();

  private final CompletableFuture<Void> completion = new CompletableFuture<>();
  private final List<Boolean> ends = new ArrayList<>();
  private final List<Integer> statesOpened = new ArrayList<>();

  /** Passes its input on; counts teardowns. */
  static final class PassOn extends DoFn<Long, Long> {
    @ProcessElement
    public void process(@Element Long x, OutputReceiver<Long> out) {
      out.output(x);
    }

    @Teardown
    public void teardown() {
      TEARDOWNS.incrementAndGet();
    }
  }

  /** Fails on element 3. */
  static final class FailsOnThree extends DoFn<Long, Long> {
    @ProcessElement
    public void process(@Element Long x, OutputReceiver<Long> out) {
      if (x == 3) {
        throw new IllegalStateException("element three");
      }
      out.output(x);
    }
  }

  /** A container with every task of {@code p}'s job, and its context. */
  private Container containerOf(Pipeline p, WeirPipelineOptions options) {
    WeirSettings settings = WeirSettings.from(options);
    JobPlan plan = WeirRunner.translate(p, settings);
    Map<Integer, InProcessStream> streams = new HashMap<>();
    for (StreamPlan stream : plan.streams()) {
      streams.put(stream.id(), new InProcessStream(stream, 1024));
    }
    StepMetrics metrics = new StepMetrics();
    WeirTaskFactory factory = new WeirTaskFactory(plan, streams, settings, metrics, JobClock.SYSTEM, null);
    List<StageTask> tasks = new ArrayList<>();
    for (TaskName name : factory.taskNames()) {
      tasks.add(factory.createTask(name));
    }
    FailureCoordinator failures = new FailureCoordinator("container-test", completion, ends::add);
    ContainerContext context = new ContainerContext(JobClock.SYSTEM, null, id -> {
      statesOpened.add(id);
      return ContainerState.inMemory(1_000);
    }, metrics, null, null, null, failures, settings.concurrency());
    Container container = new Container(0, tasks, context);
    failures.setContainers(List.of(container));
    return container;
  }

  private static WeirPipelineOptions options(String... more) {
    List<String> args = new ArrayList<>(List.of("--runner=WeirRunner", "--parallelism=2", "--stateBackend=MEMORY"));
    args.addAll(List.of(more));
    return PipelineOptionsFactory.fromArgs(args.toArray(new String[0])).as(WeirPipelineOptions.class);
  }

  @Test
  void aBoundedJob_runsToTheEndOfEveryTask_thenTearsDownAndCompletes() throws Exception {
    TEARDOWNS.set(0);
    WeirPipelineOptions options = options();
    Pipeline p = Pipeline.create(options);
    p.apply(Create.of(1L, 2L, 3L, 4L)).apply(ParDo.of(new PassOn()));
    Container container = containerOf(p, options);
    long startNs = System.nanoTime();

    container.run();

    long wallNs = System.nanoTime() - startNs;
    assertThat(statesOpened).as("its state opened once, through the context").containsExactly(0);
    for (StageTask task : tasksOf(container)) {
      assertThat(task.nextOp()).as(task + " done").isEqualTo(TaskOp.NONE);
    }
    assertThat(TEARDOWNS.get()).as("each DoFn instance torn down").isPositive();
    assertThat(ends).containsExactly(true);
    assertThat(completion).isCompletedWithValue(null);
    RunLoopMetrics.Snapshot loop = container.runLoop();
    assertThat(loop.iterations()).isPositive();
    assertThat(loop.busyNs() + loop.idleNs()).isLessThanOrEqualTo(wallNs);
    assertThat(container.tasks()).hasSameSizeAs(tasksOf(container));
    assertThat(container.tasks().stream().mapToLong(t -> t.stats().eventsIn()).sum())
        .as("the Create's elements went through the tasks").isPositive();
  }

  @Test
  void aDoFnThatThrows_failsTheLoopWithItsOwnException_namingTheTask() {
    WeirPipelineOptions options = options();
    Pipeline p = Pipeline.create(options);
    p.apply(Create.of(1L, 2L, 3L, 4L)).apply(ParDo.of(new FailsOnThree()));
    Container container = containerOf(p, options);

    container.run();

    assertThat(ends).containsExactly(false);
    assertThatThrownBy(completion::get).isInstanceOf(ExecutionException.class);
    Throwable user = FailureContext.userCause(completion.handle((v, t) -> t).join());
    assertThat(user).as("the user's own exception, under Beam's UserCodeException layers")
        .isInstanceOf(IllegalStateException.class).hasMessage("element three");
    assertThat(user.getSuppressed()).anySatisfy(s -> assertThat(s).isInstanceOf(FailureContext.class)
        .hasMessageContaining("task stage-"));
  }

  @Test
  void aStoppedContainer_endsItsLoopAndClosesItsTasks() throws Exception {
    TEARDOWNS.set(0);
    WeirPipelineOptions options = options("--streaming=true");
    Pipeline p = Pipeline.create(options);
    p.apply(GenerateSequence.from(0)).apply(ParDo.of(new PassOn())); // unbounded: never ends by itself
    Container container = containerOf(p, options);
    Thread thread = new Thread(container, container.threadName());
    thread.start();
    long deadline = System.currentTimeMillis() + 30_000;
    while (container.runLoop().iterations() < 10 && System.currentTimeMillis() < deadline) {
      Thread.sleep(5);
    }
    assertThat(container.runLoop().iterations()).as("the loop runs").isGreaterThanOrEqualTo(10);

    container.stop();
    thread.join(TimeUnit.SECONDS.toMillis(30));

    assertThat(thread.isAlive()).as("the loop ended").isFalse();
    assertThat(TEARDOWNS.get()).as("its DoFns torn down").isPositive();
    assertThat(ends).as("the job's end ran once").hasSize(1);
  }

  private static List<StageTask> tasksOf(Container container) {
    return container.taskList();
  }
}
