package dev.weir.samza;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import dev.weir.testservices.KafkaBroker;
import dev.weir.testservices.KafkaBrokerExtension;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.kafka.clients.admin.Admin;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Pipelines on {@code --executionEnvironment=SAMZA_LOCAL}: samza-core's LocalApplicationRunner
 * runs the translated job, its intermediate streams (shuffles of GroupByKey and of lifted
 * combines, a side-input broadcast, a Flatten's forward streams) on topics of a real Kafka broker
 * (test-services' {@link KafkaBroker}, a child JVM on loopback). Results are checked exactly with
 * {@code PAssert}, whose success counters must all have counted (so no assertion was skipped), in
 * batch and in streaming mode (an unbounded, rate-limited source, event-time windows); the run's
 * topics are deleted after a normal end; an unreachable Kafka fails the run within the configured
 * time-out, naming the address, and so does a broker stopped while a streaming job runs; a user's
 * exception after a shuffle fails the job with it.
 *
 * <p>Measured on 2 cores: about 70 s for the class in failsafe, of which ~10 s start the shared
 * broker; batch 14-17 s (24 stages, 43 tasks), streaming 4-5 s, user failure 9-13 s (samza-core's
 * container shutdown), unreachable Kafka 3 s (time-out set to 3 s), broker stopped mid-run 26 s (its
 * own broker: ~7 s to start, 3 s of running, then the 5 s time-out and samza-core's shutdown).
 */
class SamzaLocalPipelineIT {

  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  private static final int KEYS = 5;

  private static WeirPipelineOptions options(String bootstrap, String... more) {
    List<String> args = new ArrayList<>(List.of("--runner=" + WeirRunner.class.getSimpleName(),
        "--executionEnvironment=SAMZA_LOCAL", "--parallelism=2", "--maxBundleTimeMs=50",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=" + bootstrap + ",weir.kafka.timeout.ms=5000"));
    args.addAll(List.of(more));
    return PipelineOptionsFactory.fromArgs(args.toArray(new String[0])).as(WeirPipelineOptions.class);
  }

  /** Appends its side input (a total) to each count: {@code key=count/total}. */
  static final class WithTotalFn extends DoFn<KV<String, Long>, String> {
    private final PCollectionView<Long> total;

    WithTotalFn(PCollectionView<Long> total) {
      this.total = total;
    }

    @ProcessElement
    public void process(ProcessContext c) {
      c.output(c.element().getKey() + "=" + c.element().getValue() + "/" + c.sideInput(total));
    }
  }

  /** {@code key@windowStart=count}. */
  static final class LabelFn extends DoFn<KV<String, Long>, String> {
    @ProcessElement
    public void process(ProcessContext c, IntervalWindow window) {
      c.output(c.element().getKey() + "@" + window.start().getMillis() + "=" + c.element().getValue());
    }
  }

  @Test
  void batch_groupByKeyCombineSideInputAndFlatten_exactResults() throws Exception {
    Pipeline p = Pipeline.create(options(KAFKA.broker().bootstrapServers(), "--stateBackend=rocksdb",
        "--stateDirectory=target/samza-it-state"));
    List<String> words = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      words.add("k" + (i % KEYS));
    }
    PCollection<String> input = p.apply("Words", Create.of(words));
    PCollection<KV<String, Long>> counts = input.apply("CountPerWord", Count.perElement());
    PCollectionView<Long> total = input.apply("Total", Count.globally()).apply(View.asSingleton());
    PCollection<String> withTotal = counts.apply("WithTotal", ParDo.of(new WithTotalFn(total)).withSideInputs(total));
    List<String> expected = new ArrayList<>();
    for (int k = 0; k < KEYS; k++) {
      expected.add("k" + k + "=200/1000");
    }
    PAssert.that(withTotal).containsInAnyOrder(expected);

    PCollection<KV<String, Iterable<Long>>> grouped = counts
        .apply("Swap", MapElements.into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.longs()))
            .via(kv -> KV.of("all", kv.getValue())))
        .apply("GroupAll", GroupByKey.create());
    PAssert.that(grouped.apply("SumGroup", MapElements.into(TypeDescriptors.longs())
        .via(kv -> { long s = 0; for (long v : kv.getValue()) { s += v; } return s; })))
        .containsInAnyOrder(1_000L);

    PCollection<Long> more = p.apply("More", Create.of(1L, 2L, 3L));
    PCollection<Long> flat = PCollectionList.of(more)
        .and(counts.apply("Values", MapElements.into(TypeDescriptors.longs()).via(KV::getValue)))
        .apply(Flatten.pCollections());
    PAssert.that(flat.apply("SumAll", Sum.longsGlobally())).containsInAnyOrder(1_006L);

    PipelineResult result = p.run();
    assertThat(result.waitUntilFinish(Duration.standardMinutes(2))).isEqualTo(PipelineResult.State.DONE);
    assertThat(passertSuccesses(result)).isEqualTo(3);
    String job = "." + SamzaJobConfig.sanitize(p.getOptions().getJobName()) + ".";
    assertThat(weirTopics()).as("topics left after a normal end").noneMatch(t -> t.contains(job));
    try (var left = java.nio.file.Files.list(java.nio.file.Path.of("target/samza-it-state"))) {
      assertThat(left.filter(d -> d.getFileName().toString().startsWith("samza-"))).as("run directories left").isEmpty();
    }
  }

  /** Fails on element "boom". */
  static final class FailingFn extends DoFn<KV<String, Long>, String> {
    @ProcessElement
    public void process(ProcessContext c) {
      if (c.element().getKey().equals("boom")) {
        throw new IllegalStateException("user failure on " + c.element());
      }
      c.output(c.element().getKey());
    }
  }

  @Test
  void userFailureAfterAShuffle_failsTheJobWithTheUsersException() {
    Pipeline p = Pipeline.create(options(KAFKA.broker().bootstrapServers(), "--stateBackend=memory"));
    p.apply(Create.of("a", "boom", "b")).apply(Count.perElement()).apply(ParDo.of(new FailingFn()));
    PipelineResult result = p.run();
    assertThatThrownBy(() -> result.waitUntilFinish(Duration.standardMinutes(2)))
        .isInstanceOf(Pipeline.PipelineExecutionException.class)
        .hasStackTraceContaining("user failure on KV{boom, 1}");
  }

  @Test
  void streaming_unboundedSourceWindowedCountsAndSideInput_exactResults() throws Exception {
    Pipeline p = Pipeline.create(options(KAFKA.broker().bootstrapServers(), "--streaming=true",
        "--stateBackend=memory"));
    // 2,000 numbers at 2,000/s from an unbounded source; event time n ms: windows of 500 ms
    PCollection<Long> numbers = p.apply("Numbers", GenerateSequence.from(0).to(2_000)
        .withRate(1_000, Duration.millis(500)).withTimestampFn(n -> new Instant(n)));
    PCollection<KV<String, Long>> counts = numbers
        .apply("Windows", Window.into(FixedWindows.of(Duration.millis(500))))
        .apply("Keys", MapElements.into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.longs()))
            .via(n -> KV.of("k" + (n % KEYS), n)))
        .apply("CountPerKey", Count.perKey());
    PCollection<String> labelled = counts.apply("Label", ParDo.of(new LabelFn()));
    List<String> expected = new ArrayList<>();
    for (long start = 0; start < 2_000; start += 500) {
      for (int k = 0; k < KEYS; k++) {
        expected.add("k" + k + "@" + start + "=100");
      }
    }
    PAssert.that(labelled).containsInAnyOrder(expected);
    PResultCheck check = new PResultCheck(p, numbers);
    PipelineResult result = p.run();
    assertThat(result.waitUntilFinish(Duration.standardMinutes(2))).isEqualTo(PipelineResult.State.DONE);
    assertThat(passertSuccesses(result)).isEqualTo(check.assertions);
  }

  /** A side-input PAssert on the global count of the numbers (in the global window). */
  private static final class PResultCheck {
    final int assertions;

    PResultCheck(Pipeline p, PCollection<Long> numbers) {
      PCollection<Long> global = numbers.apply("Global", Window.into(
          new org.apache.beam.sdk.transforms.windowing.GlobalWindows()));
      PCollectionView<Long> total = global.apply("Total", Count.globally()).apply(View.asSingleton());
      PCollection<String> perKey = global
          .apply("KeysGlobal", MapElements.into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.longs()))
              .via(n -> KV.of("k" + (n % KEYS), n)))
          .apply("CountGlobal", Count.perKey())
          .apply("WithTotal", ParDo.of(new WithTotalFn(total)).withSideInputs(total));
      List<String> expected = new ArrayList<>();
      for (int k = 0; k < KEYS; k++) {
        expected.add("k" + k + "=400/2000");
      }
      PAssert.that(perKey).containsInAnyOrder(expected);
      this.assertions = 2;
    }
  }

  @Test
  void unreachableKafka_failsWithinTheTimeOutNamingTheAddress() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort(); // closed again: nothing listens there
    }
    String address = "127.0.0.1:" + port;
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=WeirRunner",
        "--executionEnvironment=SAMZA_LOCAL", "--parallelism=2", "--stateBackend=memory",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=" + address + ",weir.kafka.timeout.ms=3000")
        .as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    p.apply(Create.of("a", "b")).apply(Count.perElement());
    long startNs = System.nanoTime();
    assertThatThrownBy(p::run).hasMessageContaining("Kafka at " + address);
    assertThat((System.nanoTime() - startNs) / 1_000_000L).isLessThan(60_000L);
  }

  @Test
  void brokerStoppedMidRun_failsTheJobWithinTheTimeOutNamingTheAddress() throws Exception {
    KafkaBroker own = KafkaBroker.start(KafkaBroker.Config.in(java.nio.file.Path.of("target", "kafka-broker",
        "stopped-" + System.currentTimeMillis())));
    PipelineResult result;
    try {
      Pipeline p = Pipeline.create(options(own.bootstrapServers(), "--streaming=true", "--stateBackend=memory"));
      p.apply("Forever", GenerateSequence.from(0).withRate(200, Duration.millis(100)))
          .apply("Keys", MapElements.into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.longs()))
              .via(n -> KV.of("k" + (n % KEYS), n)))
          .apply("Windows", Window.into(FixedWindows.of(Duration.millis(200))))
          .apply("CountPerKey", Count.perKey());
      result = p.run();
      assertThat(result.waitUntilFinish(Duration.standardSeconds(3))).isEqualTo(PipelineResult.State.RUNNING);
    } finally {
      own.close();
    }
    long stoppedNs = System.nanoTime();
    String address = own.bootstrapServers();
    assertThatThrownBy(() -> result.waitUntilFinish(Duration.standardSeconds(60)))
        .isInstanceOf(Pipeline.PipelineExecutionException.class)
        .hasStackTraceContaining("Kafka at " + address);
    assertThat((System.nanoTime() - stoppedNs) / 1_000_000L).isLessThan(60_000L);
  }

  private static long passertSuccesses(PipelineResult result) {
    MetricQueryResults metrics = result.metrics().queryMetrics(MetricsFilter.builder()
        .addNameFilter(MetricNameFilter.named(PAssert.class, PAssert.SUCCESS_COUNTER)).build());
    long total = 0;
    for (MetricResult<Long> counter : metrics.getCounters()) {
      total += counter.getAttempted();
    }
    return total;
  }

  private static Set<String> weirTopics() throws Exception {
    try (Admin admin = KAFKA.broker().admin()) {
      Map<String, Boolean> topics = new TreeMap<>();
      for (String name : admin.listTopics().names().get()) {
        if (name.startsWith("weir.")) {
          topics.put(name, true);
        }
      }
      return topics.keySet();
    }
  }
}
