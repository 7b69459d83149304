package dev.weir.runner.monitoring;

import dev.weir.runner.executor.JobExecutor;
import dev.weir.runner.task.StageWatermarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.translation.JobPlan;
import java.lang.management.ManagementFactory;
import java.util.Set;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Instant;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A running streaming job's live metrics, read as a JMX client would: from the platform MBean
 * server, by the names {@link WeirMXBeans} documents. Watermarks advance, the object cache's
 * counters move, events and user metrics show, the periodic log writes, and every MBean is gone
 * once the job ended. Waits poll with a generous deadline; nothing asserts how fast the job runs.
 */
class JobMonitoringTest {
  private static final long DEADLINE_MS = 60_000;
  private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();
  private static final long ELEMENTS = 10;
  private static final long WATERMARK_MS = 5_000;

  @Test
  void aRunningStreamingJobsMBeansShowAdvancingWatermarksMovingCacheCountersAndUserMetrics() throws Exception {
    String job = "jmx-test-" + UUID.randomUUID();
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=WeirRunner", "--streaming=true",
        "--parallelism=2", "--containers=2", "--stateBackend=MEMORY", "--jobName=" + job,
        "--metricsLogIntervalMs=50").as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    p.apply(GenerateSequence.from(0).withRate(200, Duration.millis(100)))
        .apply("Counted", ParDo.of(new Counted()))
        .apply(WithKeys.of((Long x) -> x % 8).withKeyType(TypeDescriptors.longs()))
        .apply(Window.into(FixedWindows.of(Duration.millis(100))))
        .apply("RunningCount", ParDo.of(new RunningCount()));
    WeirSettings settings = WeirSettings.from(options);
    JobPlan plan = WeirRunner.translate(p, settings);
    MetricsEnvironment.setMetricsSupported(true);
    JobExecutor executor = new JobExecutor(plan, settings);
    executor.start();
    try {
      ObjectName jobName = new ObjectName("dev.weir:type=Job,job=" + job);
      assertThat(SERVER.isRegistered(jobName)).isTrue();
      assertThat(SERVER.getAttribute(jobName, "Stages")).isEqualTo(plan.stages().size());
      assertThat(SERVER.getAttribute(jobName, "StateBackend")).isEqualTo("memory");
      Set<ObjectName> containers = SERVER.queryNames(new ObjectName("dev.weir:type=Container,job=" + job + ",*"), null);
      assertThat(containers).hasSize(2);
      String lastStage = "stage-" + (plan.stages().size() - 1);
      ObjectName stage = new ObjectName("dev.weir:type=Stage,job=" + job + ",stage=" + lastStage);
      ObjectName task = new ObjectName("dev.weir:type=Task,job=" + job + ",stage=" + lastStage + ",partition=0");
      ObjectName transform = JobMonitoring.name("Transform", job, "transform", "Counted/ParMultiDo(Counted)");

      awaitTrue("the stateful stage's input watermark is set",
          () -> (long) attribute(stage, "InputWatermarkMs") > StageWatermarks.MIN_WATERMARK_MS);
      long firstWatermark = (long) attribute(stage, "InputWatermarkMs");
      long firstCacheReads = cacheReads(containers);
      awaitTrue("the watermark advances", () -> (long) attribute(stage, "InputWatermarkMs") > firstWatermark);
      awaitTrue("the object cache's counters move", () -> cacheReads(containers) > firstCacheReads);
      awaitTrue("the sink stage's output watermark follows",
          () -> (long) attribute(stage, "OutputWatermarkMs") > StageWatermarks.MIN_WATERMARK_MS);
      awaitTrue("events reach a task of the stateful stage", () -> (long) attribute(task, "EventsIn") > 0);
      assertThat((long) attribute(task, "Bundles")).isPositive();
      assertThat((long) attribute(task, "MaxBundleSize")).isPositive();
      awaitTrue("the user counter shows on the transform's MBean",
          () -> SERVER.isRegistered(transform) && (long) attribute(transform, "test:elements") > 0);
      ObjectName firstStage = new ObjectName("dev.weir:type=Stage,job=" + job + ",stage=stage-0");
      awaitTrue("the source stage sends events downstream", () -> (long) attribute(firstStage, "EventsOut") > 0);
      for (ObjectName container : containers) {
        assertThat((long) SERVER.getAttribute(container, "Iterations")).isPositive();
        assertThat((double) SERVER.getAttribute(container, "Utilization")).isBetween(0.0, 1.0);
        assertThat(SERVER.getAttribute(container, "Checkpoints")).isEqualTo(0L);
      }

      awaitTrue("the periodic metrics log writes", () -> executor.monitoring().reportsLogged() >= 2);
      assertThat(executor.monitoring().report())
          .contains("Weir metrics of job " + job)
          .contains("container-0: iterations=")
          .contains(lastStage + " [2 partition(s)]: in=")
          .contains("'Counted/ParMultiDo(Counted)': {ElementsIn=")
          .contains("test:elements=");
    } finally {
      executor.cancel();
    }
    awaitTrue("the MBeans are unregistered when the job ends",
        () -> queryCount("dev.weir:job=" + job + ",*") == 0);
  }

  /**
   * Relations the MBeans must keep with what the test itself did: a test stream sends ten elements,
   * moves the watermark to a time the test picks, then sends one element that a stateful DoFn holds
   * (its container blocks until the test lets go). While it is held, the job is still registered
   * and every count is known exactly.
   */
  @Test
  void theMBeansReportExactlyTheElementsAndTheWatermarkTheTestSent() throws Exception {
    String job = "jmx-exact-" + UUID.randomUUID();
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=WeirRunner", "--streaming=true",
        "--parallelism=2", "--containers=2", "--stateBackend=MEMORY", "--jobName=" + job)
        .as(WeirPipelineOptions.class);
    TestStream.Builder<KV<String, Long>> events = TestStream.create(KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of()));
    for (long i = 0; i < ELEMENTS; i++) {
      events = events.addElements(TimestampedValue.of(KV.of("k" + (i % 3), i), new Instant(1_000 + i)));
    }
    Pipeline p = Pipeline.create(options);
    p.apply(events.advanceWatermarkTo(new Instant(WATERMARK_MS))
            .addElements(TimestampedValue.of(KV.of(HeldByGate.KEY, -1L), new Instant(WATERMARK_MS + 1_000)))
            .advanceWatermarkToInfinity())
        .apply("Counted", ParDo.of(new CountedKv()))
        .apply("Gate", ParDo.of(new HeldByGate()));
    WeirSettings settings = WeirSettings.from(options);
    JobPlan plan = WeirRunner.translate(p, settings);
    assertThat(plan.stages()).as("the test stream's stage and the gate's keyed stage").hasSize(2);
    MetricsEnvironment.setMetricsSupported(true);
    HeldByGate.reset();
    long startNs = System.nanoTime();
    JobExecutor executor = new JobExecutor(plan, settings);
    executor.start();
    try {
      assertThat(HeldByGate.held.await(DEADLINE_MS, TimeUnit.MILLISECONDS)).as("the gate holds the last element").isTrue();
      ObjectName source = new ObjectName("dev.weir:type=Stage,job=" + job + ",stage=stage-0");
      ObjectName gate = new ObjectName("dev.weir:type=Stage,job=" + job + ",stage=stage-1");
      ObjectName counted = JobMonitoring.name("Transform", job, "transform", "Counted/ParMultiDo(CountedKv)");
      awaitTrue("the test stream's stage sent every element", () -> (long) attribute(source, "EventsOut") >= ELEMENTS + 1);
      awaitTrue("the user counter counts every element",
          () -> SERVER.isRegistered(counted) && (long) attribute(counted, "test:elements") >= ELEMENTS + 1);
      awaitTrue("the gate's stage took the first ten in finished bundles", () -> (long) attribute(gate, "EventsIn") >= ELEMENTS);

      assertThat((long) attribute(source, "EventsOut")).as("events out of the source stage").isEqualTo(ELEMENTS + 1);
      assertThat((long) attribute(counted, "test:elements")).as("the user counter").isEqualTo(ELEMENTS + 1);
      assertThat((long) attribute(counted, "ElementsIn")).as("elements into the transform").isEqualTo(ELEMENTS + 1);
      assertThat((long) attribute(counted, "ElementsOut")).as("elements out of it, to the gate's stage")
          .isEqualTo(ELEMENTS + 1);
      assertThat((long) attribute(gate, "EventsIn")).as("events in: the held element's bundle is open")
          .isEqualTo(ELEMENTS);
      assertThat((long) attribute(gate, "InputWatermarkMs")).as("the watermark the test stream set")
          .isEqualTo(WATERMARK_MS);
      long taskEventsIn = 0;
      for (int partition = 0; partition < 2; partition++) {
        taskEventsIn += (long) attribute(new ObjectName("dev.weir:type=Task,job=" + job + ",stage=stage-1,partition="
            + partition), "EventsIn");
      }
      assertThat(taskEventsIn).as("a stage's events are its tasks' events").isEqualTo(ELEMENTS);

      Set<ObjectName> containers = SERVER.queryNames(new ObjectName("dev.weir:type=Container,job=" + job + ",*"), null);
      assertThat(containers).hasSize(2);
      for (ObjectName container : containers) {
        long phasesNs = 0;
        for (String phase : List.of("DrainOutboxesNs", "FireTimersNs", "ProcessEnvelopesNs", "TickNs", "CommitPhaseNs",
            "IdleNs")) {
          long ns = (long) attribute(container, phase);
          assertThat(ns).as(phase).isNotNegative();
          phasesNs += ns;
        }
        long wallNs = System.nanoTime() - startNs;
        assertThat(phasesNs).as("%s: phase times add up to no more than the wall time", container)
            .isLessThanOrEqualTo(wallNs);
        assertThat((double) attribute(container, "Utilization")).isBetween(0.0, 1.0);
        assertThat((long) attribute(container, "Iterations")).isPositive();
        assertThat((long) attribute(container, "Checkpoints")).as("a job on the heap takes no checkpoints").isZero();
      }
    } finally {
      HeldByGate.release.countDown();
    }
    executor.completion().get(DEADLINE_MS, TimeUnit.MILLISECONDS);
    assertThat(queryCount("dev.weir:job=" + job + ",*")).as("no MBean outlives the job").isZero();
  }

  @Test
  void aSecondJobWithTheSameNameGetsASuffixAndBothUnregister() throws Exception {
    String job = "jmx-twice-" + UUID.randomUUID();
    JobExecutor first = startBounded(job);
    JobExecutor second = startBounded(job);
    try {
      assertThat(first.monitoring().jobName()).isEqualTo(job);
      assertThat(second.monitoring().jobName()).isEqualTo(job + "-2");
      assertThat(SERVER.isRegistered(new ObjectName("dev.weir:type=Job,job=" + job + "-2"))).isTrue();
    } finally {
      first.cancel();
      second.cancel();
    }
    awaitTrue("both jobs' MBeans are unregistered", () -> queryCount("dev.weir:job=" + job + ",*") == 0
        && queryCount("dev.weir:job=" + job + "-2,*") == 0);
  }

  private static JobExecutor startBounded(String job) {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=WeirRunner", "--streaming=true",
        "--parallelism=1", "--containers=1", "--stateBackend=MEMORY", "--jobName=" + job)
        .as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    p.apply(GenerateSequence.from(0).withRate(10, Duration.millis(100)));
    WeirSettings settings = WeirSettings.from(options);
    JobExecutor executor = new JobExecutor(WeirRunner.translate(p, settings), settings);
    executor.start();
    return executor;
  }

  private static Object attribute(ObjectName name, String attribute) {
    try {
      return SERVER.getAttribute(name, attribute);
    } catch (Exception e) {
      throw new AssertionError("reading " + name + " " + attribute, e);
    }
  }

  private static long cacheReads(Set<ObjectName> containers) {
    long reads = 0;
    for (ObjectName container : containers) {
      reads += (long) attribute(container, "CacheHits") + (long) attribute(container, "CacheMisses");
    }
    return reads;
  }

  private static int queryCount(String pattern) {
    try {
      return SERVER.queryNames(new ObjectName(pattern), null).size();
    } catch (Exception e) {
      throw new AssertionError(pattern, e);
    }
  }

  private static void awaitTrue(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.currentTimeMillis() + DEADLINE_MS;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("not within " + DEADLINE_MS + " ms: " + what);
      }
      Thread.sleep(20);
    }
  }

  /** Counts its elements in a user counter. */
  static final class Counted extends DoFn<Long, Long> {
    private final Counter elements = Metrics.counter("test", "elements");

    @ProcessElement
    public void process(@Element Long x, OutputReceiver<Long> out) {
      elements.inc();
      out.output(x);
    }
  }

  /** Counts its elements in a user counter. */
  static final class CountedKv extends DoFn<KV<String, Long>, KV<String, Long>> {
    private final Counter elements = Metrics.counter("test", "elements");

    @ProcessElement
    public void process(@Element KV<String, Long> x, OutputReceiver<KV<String, Long>> out) {
      elements.inc();
      out.output(x);
    }
  }

  /**
   * A stateful DoFn that holds the element of key {@link #KEY}: it tells the test it holds it, then
   * blocks its container's thread until the test lets go (static latches: the DoFn is serialized).
   */
  static final class HeldByGate extends DoFn<KV<String, Long>, Long> {
    static final String KEY = "held";
    static volatile CountDownLatch held = new CountDownLatch(1);
    static volatile CountDownLatch release = new CountDownLatch(1);

    @StateId("seen")
    private final StateSpec<ValueState<Long>> seen = StateSpecs.value();

    static void reset() {
      held = new CountDownLatch(1);
      release = new CountDownLatch(1);
    }

    @ProcessElement
    public void process(@Element KV<String, Long> element, @StateId("seen") ValueState<Long> state)
        throws InterruptedException {
      state.write(element.getValue());
      if (KEY.equals(element.getKey())) {
        held.countDown();
        release.await(DEADLINE_MS, TimeUnit.MILLISECONDS);
      }
    }
  }

  /** Keeps a running count per key and window in a ValueState (object-cache reads and writes). */
  static final class RunningCount extends DoFn<KV<Long, Long>, Long> {
    @StateId("count")
    private final StateSpec<ValueState<Long>> count = StateSpecs.value();

    @ProcessElement
    public void process(@StateId("count") ValueState<Long> state, OutputReceiver<Long> out) {
      Long previous = state.read();
      long next = previous == null ? 1 : previous + 1;
      state.write(next);
      out.output(next);
    }
  }
}
