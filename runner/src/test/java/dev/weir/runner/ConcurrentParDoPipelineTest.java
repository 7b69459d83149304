package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Concurrent {@code @ProcessElement} ({@code --containerThreadPoolSize}, {@code --taskMaxConcurrency}):
 * elements of one task really are in flight together; Beam's contract for a DoFn instance (one
 * thread at a time, {@code @Setup}/{@code @Teardown} per instance, {@code @FinishBundle} after its
 * bundle's elements completed) holds; metrics land on the ParDo; windowed results downstream are
 * exact (the in-flight hold keeps the watermark behind elements still running); a stateful DoFn
 * runs one call per key at a time, keys together, losing no state update, with its timers firing
 * in their windows; a DoFn that throws on a worker fails the job with its exception; selection by
 * name and the options' checks.
 */
class ConcurrentParDoPipelineTest {

  /** Per test run (DoFns are serialized, so they find their run's instruments by id). */
  private static final class Probe {
    final AtomicInteger inside = new AtomicInteger();
    final AtomicInteger mostInside = new AtomicInteger();
    final AtomicInteger overlaps = new AtomicInteger();
    final AtomicInteger setUps = new AtomicInteger();
    final AtomicInteger tearDowns = new AtomicInteger();
    final AtomicLong finishedElements = new AtomicLong();
    final AtomicInteger finishedWhileBusy = new AtomicInteger();
    final Map<String, Boolean> threads = new ConcurrentHashMap<>();
    volatile CountDownLatch together;
  }

  private static final Map<String, Probe> PROBES = new ConcurrentHashMap<>();

  private static String newProbe(int together) {
    String id = UUID.randomUUID().toString();
    Probe probe = new Probe();
    probe.together = new CountDownLatch(together);
    PROBES.put(id, probe);
    return id;
  }

  /**
   * Doubles each element; the first {@code together} elements wait (up to 20 s) until that many
   * are inside {@code @ProcessElement} at once, so the job fails unless they run concurrently.
   */
  static final class Probed extends DoFn<Long, Long> {
    private final String probeId;
    private final long maxSleepMs;
    private transient Probe probe;
    /** This instance's callers right now (Beam: never more than one). */
    private transient AtomicInteger busy;
    private transient long bundleElements;

    Probed(String probeId, long maxSleepMs) {
      this.probeId = probeId;
      this.maxSleepMs = maxSleepMs;
    }

    @Setup
    public void setUp() {
      probe = PROBES.get(probeId);
      busy = new AtomicInteger();
      probe.setUps.incrementAndGet();
    }

    @StartBundle
    public void startBundle() {
      bundleElements = 0;
    }

    @ProcessElement
    public void process(@Element Long x, OutputReceiver<Long> out) throws InterruptedException {
      if (busy.incrementAndGet() != 1) {
        probe.overlaps.incrementAndGet();
      }
      int now = probe.inside.incrementAndGet();
      probe.mostInside.accumulateAndGet(now, Math::max);
      probe.threads.put(Thread.currentThread().getName(), true);
      try {
        Metrics.counter("probe", "elements").inc();
        CountDownLatch together = probe.together;
        if (together.getCount() > 0) {
          together.countDown();
          if (!together.await(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("elements did not run concurrently: " + together.getCount()
                + " of the first ones never arrived while this one waited");
          }
        }
        if (maxSleepMs > 0) {
          Thread.sleep(ThreadLocalRandom.current().nextLong(maxSleepMs + 1));
        }
        bundleElements++;
        out.output(2 * x);
      } finally {
        probe.inside.decrementAndGet();
        busy.decrementAndGet();
      }
    }

    @FinishBundle
    public void finishBundle() {
      if (busy.get() != 0) {
        probe.finishedWhileBusy.incrementAndGet();
      }
      probe.finishedElements.addAndGet(bundleElements);
    }

    @Teardown
    public void tearDown() {
      probe.tearDowns.incrementAndGet();
    }
  }

  private static WeirPipelineOptions options(boolean streaming, int threads, int perTask, int parallelism) {
    WeirPipelineOptions options = Pipelines.options(streaming);
    options.setParallelism(parallelism);
    options.setContainers(1);
    options.setContainerThreadPoolSize(threads);
    options.setTaskMaxConcurrency(perTask);
    return options;
  }

  private static List<Long> range(long n) {
    List<Long> values = new ArrayList<>();
    for (long i = 0; i < n; i++) {
      values.add(i);
    }
    return values;
  }

  private static List<Long> doubled(long n) {
    List<Long> values = new ArrayList<>();
    for (long i = 0; i < n; i++) {
      values.add(2 * i);
    }
    return values;
  }

  @ParameterizedTest(name = "streaming={0} threads={1} taskMaxConcurrency={2} parallelism={3}")
  @CsvSource({"false, 4, 4, 1", "false, 8, 3, 2", "true, 4, 4, 1", "true, 2, 8, 2"})
  @Timeout(120)
  void elementsOfOneTaskRunTogetherYetEachInstanceOnOneThreadAtATime(boolean streaming, int threads, int perTask,
      int parallelism) {
    int together = Math.min(threads, perTask);
    String id = newProbe(together);
    Pipeline p = Pipeline.create(options(streaming, threads, perTask, parallelism));
    long n = 400;
    PCollection<Long> out = p.apply(Create.of(range(n))).apply("Probe", ParDo.of(new Probed(id, 3)));
    PAssert.that(out).containsInAnyOrder(doubled(n));
    PipelineResult result = p.run();
    result.waitUntilFinish();

    Probe probe = PROBES.remove(id);
    assertThat(probe.overlaps).as("calls into one DoFn instance that overlapped").hasValue(0);
    assertThat(probe.mostInside.get()).as("elements in @ProcessElement at once")
        .isGreaterThanOrEqualTo(together).isLessThanOrEqualTo(threads);
    assertThat(probe.threads.keySet()).as("threads that ran @ProcessElement")
        .allMatch(name -> name.startsWith("weir-container-0-worker-"));
    assertThat(probe.setUps.get()).as("instances: at most taskMaxConcurrency per task")
        .isBetween(together, perTask * parallelism);
    assertThat(probe.tearDowns.get()).as("every instance set up is torn down").isEqualTo(probe.setUps.get());
    assertThat(probe.finishedWhileBusy).as("@FinishBundle while the instance ran an element").hasValue(0);
    assertThat(probe.finishedElements).as("every element in a bundle that finished").hasValue(n);

    MetricQueryResults metrics = result.metrics().queryMetrics(MetricsFilter.builder()
        .addNameFilter(MetricNameFilter.named("probe", "elements")).build());
    List<MetricResult<Long>> counters = new ArrayList<>();
    metrics.getCounters().forEach(counters::add);
    assertThat(counters).as("the counter, once, on the ParDo").hasSize(1);
    assertThat(counters.get(0).getKey().stepName()).isEqualTo("Probe/ParMultiDo(Probed)");
    assertThat(counters.get(0).getAttempted()).as("counted on worker threads").isEqualTo(n);
    assertThat(counters.get(0).getCommitted()).isEqualTo(n);
  }

  @Test
  @Timeout(120)
  void windowedCountsDownstreamAreExactWhileElementsCompleteOutOfOrder() {
    String id = newProbe(0);
    Pipeline p = Pipeline.create(options(true, 8, 8, 2));
    List<TimestampedValue<Long>> input = new ArrayList<>();
    for (long i = 0; i < 600; i++) {
      input.add(TimestampedValue.of(i % 6, new Instant(i * 100))); // 10 windows of 6 s, 60 elements each
    }
    PCollection<KV<Long, Long>> counts = p.apply(Create.timestamped(input))
        .apply(Window.into(FixedWindows.of(Duration.standardSeconds(6))))
        .apply(ParDo.of(new Probed(id, 5)))
        .apply(Count.perElement());
    List<KV<Long, Long>> expected = new ArrayList<>();
    for (long v = 0; v < 6; v++) {
      expected.add(KV.of(2 * v, 100L)); // 10 per window, 10 windows: counted over the global pane set
    }
    PAssert.that(counts.apply(Window.into(new org.apache.beam.sdk.transforms.windowing.GlobalWindows()))
        .apply(Count.perElement())).satisfies(actual -> {
          List<KV<KV<Long, Long>, Long>> list = new ArrayList<>();
          actual.forEach(list::add);
          assertThat(list).as("every (value, window) counted once, with all 10 of its elements")
              .containsExactlyInAnyOrder(expected.stream().map(kv -> KV.of(KV.of(kv.getKey(), 10L), 10L))
                  .toArray(KV[]::new));
          return null;
        });
    p.run().waitUntilFinish();
    PROBES.remove(id);
  }

  /** Fails on element 7, on a worker thread. */
  static final class FailsOnSeven extends DoFn<Long, Long> {
    @ProcessElement
    public void process(@Element Long x, OutputReceiver<Long> out) throws InterruptedException {
      Thread.sleep(2);
      if (x == 7) {
        throw new IllegalArgumentException("element seven on " + Thread.currentThread().getName());
      }
      out.output(x);
    }
  }

  @Test
  @Timeout(60)
  void aDoFnThatThrowsOnAWorkerFailsTheJobWithItsException() {
    Pipeline p = Pipeline.create(options(false, 4, 4, 2));
    p.apply(Create.of(range(200))).apply(ParDo.of(new FailsOnSeven()));
    assertThatThrownBy(() -> p.run().waitUntilFinish())
        .hasStackTraceContaining("IllegalArgumentException: element seven on weir-container-0-worker-");
  }

  /**
   * Counts each key's elements in state (read, then write: a second call of the same key running
   * at the same time would lose an update) and emits the count when the window's end-of-window
   * timer fires; the first {@code together} calls of different keys wait until that many are
   * inside at once, so the job fails unless keys run concurrently.
   */
  static final class CountPerKey extends DoFn<KV<Long, Long>, KV<Long, Long>> {
    private final String probeId;
    @StateId("n")
    private final StateSpec<ValueState<Long>> n = StateSpecs.value();
    @StateId("seen")
    private final StateSpec<org.apache.beam.sdk.state.BagState<Long>> seen = StateSpecs.bag();
    @TimerId("end")
    private final org.apache.beam.sdk.state.TimerSpec end =
        org.apache.beam.sdk.state.TimerSpecs.timer(org.apache.beam.sdk.state.TimeDomain.EVENT_TIME);
    private transient Probe probe;
    private transient AtomicInteger busy;
    private static final Map<String, Map<Long, AtomicInteger>> PER_KEY = new ConcurrentHashMap<>();

    CountPerKey(String probeId) {
      this.probeId = probeId;
    }

    @Setup
    public void setUp() {
      probe = PROBES.get(probeId);
      busy = new AtomicInteger();
      probe.setUps.incrementAndGet();
    }

    private AtomicInteger keyInside(long key) {
      return PER_KEY.computeIfAbsent(probeId, k -> new ConcurrentHashMap<>()).computeIfAbsent(key,
          k -> new AtomicInteger());
    }

    @ProcessElement
    public void process(@Element KV<Long, Long> kv, @StateId("n") ValueState<Long> n,
        @StateId("seen") org.apache.beam.sdk.state.BagState<Long> seen, @TimerId("end") org.apache.beam.sdk.state.Timer end,
        org.apache.beam.sdk.transforms.windowing.BoundedWindow window) throws InterruptedException {
      if (busy.incrementAndGet() != 1 | keyInside(kv.getKey()).incrementAndGet() != 1) {
        probe.overlaps.incrementAndGet();
      }
      int now = probe.inside.incrementAndGet();
      probe.mostInside.accumulateAndGet(now, Math::max);
      probe.threads.put(Thread.currentThread().getName(), true);
      try {
        CountDownLatch together = probe.together;
        if (together.getCount() > 0 && kv.getValue() == 0) { // the first element of each key
          together.countDown();
          if (!together.await(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("keys did not run concurrently");
          }
        }
        Long before = n.read();
        Thread.sleep(ThreadLocalRandom.current().nextLong(3));
        n.write((before == null ? 0 : before) + 1);
        seen.add(kv.getValue());
        end.set(window.maxTimestamp());
      } finally {
        probe.inside.decrementAndGet();
        keyInside(kv.getKey()).decrementAndGet();
        busy.decrementAndGet();
      }
    }

    @OnTimer("end")
    public void onEnd(@Key Long key, @StateId("n") ValueState<Long> n,
        @StateId("seen") org.apache.beam.sdk.state.BagState<Long> seen, OutputReceiver<KV<Long, Long>> out) {
      long distinct = java.util.stream.StreamSupport.stream(seen.read().spliterator(), false).distinct().count();
      out.output(KV.of(key, n.read() * 1000 + distinct));
    }

    @Teardown
    public void tearDown() {
      probe.tearDowns.incrementAndGet();
    }
  }

  @ParameterizedTest(name = "streaming={0}")
  @CsvSource({"false", "true"})
  @Timeout(120)
  void aStatefulDoFnRunsOneCallAtATimePerKeyWhileKeysRunTogetherAndLosesNoUpdate(boolean streaming) {
    int keys = 6;
    long perKey = 40;
    String id = newProbe(3);
    Pipeline p = Pipeline.create(options(streaming, 4, 4, 2));
    List<KV<Long, Long>> input = new ArrayList<>();
    for (long i = 0; i < perKey; i++) {
      for (long k = 0; k < keys; k++) {
        input.add(KV.of(k, i));
      }
    }
    PCollection<KV<Long, Long>> counts = p.apply(Create.of(input)).apply("Count", ParDo.of(new CountPerKey(id)));
    List<KV<Long, Long>> expected = new ArrayList<>();
    for (long k = 0; k < keys; k++) {
      expected.add(KV.of(k, perKey * 1000 + perKey)); // every update kept, every element seen once
    }
    PAssert.that(counts).containsInAnyOrder(expected);
    p.run().waitUntilFinish();

    Probe probe = PROBES.remove(id);
    assertThat(probe.overlaps).as("calls of one key, or into one instance, that overlapped").hasValue(0);
    assertThat(probe.mostInside.get()).as("keys in @ProcessElement at once").isGreaterThanOrEqualTo(3);
    assertThat(probe.threads.keySet()).allMatch(name -> name.contains("-worker-"));
    assertThat(probe.tearDowns.get()).isEqualTo(probe.setUps.get());
  }

  /** Sets one event-time timer a second after each element and outputs the window it fires in. */
  static final class WindowOfTimer extends DoFn<KV<String, Integer>, String> {
    @TimerId("t")
    private final org.apache.beam.sdk.state.TimerSpec t =
        org.apache.beam.sdk.state.TimerSpecs.timer(org.apache.beam.sdk.state.TimeDomain.EVENT_TIME);

    @ProcessElement
    public void process(@TimerId("t") org.apache.beam.sdk.state.Timer timer) {
      timer.offset(Duration.standardSeconds(1)).setRelative();
    }

    @OnTimer("t")
    public void onTimer(org.apache.beam.sdk.transforms.windowing.BoundedWindow window, OutputReceiver<String> out) {
      out.output(window.toString());
    }
  }

  @ParameterizedTest(name = "streaming={0}")
  @CsvSource({"false", "true"})
  @Timeout(60)
  void anElementInThreeSlidingWindowsFiresItsTimerOnceInEach(boolean streaming) {
    WeirPipelineOptions options = options(streaming, 4, 3, 2);
    options.setContainers(2);
    Pipeline p = Pipeline.create(options);
    PCollection<String> fired = p.apply(Create.timestamped(TimestampedValue.of(KV.of("hello", 37), new Instant(0))))
        .apply(Window.into(org.apache.beam.sdk.transforms.windowing.SlidingWindows.of(Duration.standardMinutes(3))
            .every(Duration.standardMinutes(1))))
        .apply(ParDo.of(new WindowOfTimer()));
    PAssert.that(fired).containsInAnyOrder(
        new org.apache.beam.sdk.transforms.windowing.IntervalWindow(new Instant(-120_000), new Instant(60_000)).toString(),
        new org.apache.beam.sdk.transforms.windowing.IntervalWindow(new Instant(-60_000), new Instant(120_000)).toString(),
        new org.apache.beam.sdk.transforms.windowing.IntervalWindow(new Instant(0), new Instant(180_000)).toString());
    p.run().waitUntilFinish();
  }

  /**
   * Counts per key in a value state and sums in a combining state; outputs the count so far. On a
   * key space far larger than the object cache every read misses and workers load it from RocksDB.
   */
  static final class CountAndSum extends DoFn<KV<Long, Long>, KV<Long, Long>> {
    @StateId("n")
    private final StateSpec<ValueState<Long>> n = StateSpecs.value(org.apache.beam.sdk.coders.VarLongCoder.of());
    @StateId("sum")
    private final StateSpec<org.apache.beam.sdk.state.CombiningState<Long, long[], Long>> sum =
        StateSpecs.combining(org.apache.beam.sdk.transforms.Sum.ofLongs());

    @ProcessElement
    public void process(@Element KV<Long, Long> kv, @StateId("n") ValueState<Long> n,
        @StateId("sum") org.apache.beam.sdk.state.CombiningState<Long, long[], Long> sum,
        OutputReceiver<KV<Long, Long>> out) {
      Long before = n.read();
      long count = (before == null ? 0 : before) + 1;
      n.write(count);
      sum.add(kv.getValue());
      out.output(KV.of(kv.getKey(), count * 1_000_000 + sum.read()));
    }
  }

  @ParameterizedTest(name = "streaming={0}")
  @CsvSource({"false", "true"})
  @Timeout(120)
  void valuesThatMissTheObjectCacheAreLoadedFromRocksDbOnWorkersAndNoUpdateIsLost(boolean streaming) {
    int keys = 3000;
    int perKey = 3;
    WeirPipelineOptions options = options(streaming, 4, 3, 2);
    options.setStateBackend(dev.weir.state.StateBackend.ROCKSDB);
    options.setObjectCacheSize(64); // every task's cache far smaller than its keys' cells
    Pipeline p = Pipeline.create(options);
    List<KV<Long, Long>> input = new ArrayList<>();
    List<KV<Long, Long>> expected = new ArrayList<>();
    for (long k = 0; k < keys; k++) {
      long sum = 0;
      for (long i = 1; i <= perKey; i++) {
        input.add(KV.of(k, i));
        sum += i;
      }
      expected.add(KV.of(k, perKey * 1_000_000L + sum));
    }
    PCollection<KV<Long, Long>> latest = p.apply(Create.of(input))
        .apply("Count", ParDo.of(new CountAndSum()))
        .apply(org.apache.beam.sdk.transforms.Max.longsPerKey());
    PAssert.that(latest).containsInAnyOrder(expected);
    p.run().waitUntilFinish();
  }

  /** A stateful DoFn with a side input: must stay on its container's thread. */
  static final class CountWithSide extends DoFn<KV<Long, Long>, Long> {
    private final org.apache.beam.sdk.values.PCollectionView<Long> side;
    @StateId("n")
    private final StateSpec<ValueState<Long>> n = StateSpecs.value();

    CountWithSide(org.apache.beam.sdk.values.PCollectionView<Long> side) {
      this.side = side;
    }

    @ProcessElement
    public void process(ProcessContext c, @StateId("n") ValueState<Long> n) {
      n.write(c.sideInput(side));
      c.output(c.sideInput(side));
    }
  }

  @Test
  void aNameThatSelectsOnlyAParDoThatMustStayOnItsThreadFailsTheJobNamingItAndWhy() {
    WeirPipelineOptions options = options(false, 2, 2, 1);
    options.setConcurrentParDos(List.of("Counted"));
    Pipeline p = Pipeline.create(options);
    org.apache.beam.sdk.values.PCollectionView<Long> side =
        p.apply("Side", Create.of(1L)).apply(org.apache.beam.sdk.transforms.View.asSingleton());
    p.apply(Create.of(range(4))).apply(WithKeys.of(1L))
        .apply("Counted", ParDo.of(new CountWithSide(side)).withSideInputs(side));
    assertThatThrownBy(p::run).hasStackTraceContaining("--concurrentParDos entry 'Counted' selects no ParDo")
        .hasStackTraceContaining("Counted/ParMultiDo(CountWithSide)=stateful DoFn with side inputs");
  }

  @Test
  void aNameThatMatchesNothingFailsTheJobNamingIt() {
    WeirPipelineOptions options = options(false, 2, 2, 1);
    options.setConcurrentParDos(List.of("NoSuchStep"));
    Pipeline p = Pipeline.create(options);
    p.apply(Create.of(range(4))).apply("Probe", ParDo.of(new FailsOnSeven()));
    assertThatThrownBy(p::run).hasStackTraceContaining("'NoSuchStep' selects no ParDo that can run concurrently: "
        + "no transform has that name");
  }

  @Test
  @Timeout(120)
  void onlyTheNamedParDoRunsOnWorkersTheOthersStayOnTheContainerThread() {
    String named = newProbe(2);
    String other = newProbe(0);
    WeirPipelineOptions options = options(false, 2, 2, 1);
    options.setConcurrentParDos(List.of("Named"));
    Pipeline p = Pipeline.create(options);
    PCollection<Long> out = p.apply(Create.of(range(50)))
        .apply("Named", ParDo.of(new Probed(named, 1)))
        .apply("Other", ParDo.of(new Probed(other, 0)));
    PAssert.that(out).containsInAnyOrder(range(50).stream().map(x -> 4 * x).toList());
    p.run().waitUntilFinish();
    assertThat(PROBES.remove(named).threads.keySet()).allMatch(name -> name.contains("-worker-"));
    assertThat(PROBES.remove(other).threads.keySet()).containsExactly("weir-container-0");
  }

  @Test
  void theOptionsAreCheckedNamingTheOptionAndTheAllowedRange() {
    assertThatThrownBy(() -> WeirSettings.from(options(false, -1, 1, 1)))
        .hasMessageContaining("--containerThreadPoolSize=-1 is out of range; allowed: 0");
    assertThatThrownBy(() -> WeirSettings.from(options(false, 2, 0, 1)))
        .hasMessageContaining("--taskMaxConcurrency=0 is out of range; allowed: 1 to 100000");
    WeirPipelineOptions noThreads = options(false, 0, 1, 1);
    noThreads.setConcurrentParDos(List.of("Enrich"));
    assertThatThrownBy(() -> WeirSettings.from(noThreads))
        .hasMessageContaining("--concurrentParDos=Enrich needs --containerThreadPoolSize above 0");
    assertThat(WeirSettings.from(options(false, 0, 1, 1)).concurrency().enabled()).as("off by default").isFalse();
  }
}
