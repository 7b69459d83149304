package dev.weir.runner.samza;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.WeirRunner;
import dev.weir.runner.application.InProcessApplicationDescriptor;
import dev.weir.runner.application.WeirTaskApplication;
import dev.weir.runner.stream.InProcessStream;
import dev.weir.runner.stream.ProducerEndOfStream;
import dev.weir.runner.stream.ProducerWatermark;
import dev.weir.runner.task.WeirTaskFactory;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.samza.Partition;
import org.apache.samza.config.Config;
import org.apache.samza.config.MapConfig;
import org.apache.samza.system.IncomingMessageEnvelope;
import org.apache.samza.system.OutgoingMessageEnvelope;
import org.apache.samza.system.SystemAdmin;
import org.apache.samza.system.SystemConsumer;
import org.apache.samza.system.SystemFactory;
import org.apache.samza.system.SystemProducer;
import org.apache.samza.system.SystemStream;
import org.apache.samza.system.SystemStreamMetadata;
import org.apache.samza.system.SystemStreamPartition;
import org.apache.samza.util.NoOpMetricsRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Weir's samza-api systems created as samza-core would create them: the factory class named in
 * the job's described config, instantiated by reflection, given only that config. The job: a
 * bounded sequence split into several partitions, keyed and grouped (so it has a shuffle stream).
 */
class WeirSamzaSystemsTest {
  private static final int ELEMENTS = 1000;
  private static final int PARALLELISM = 3;

  private JobPlan plan;
  private WeirTaskFactory tasks;
  private WeirTaskApplication application;
  private Config config;
  private WeirJobs.Binding binding;

  @BeforeEach
  void translateDescribeAndBind() {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=WeirRunner",
        "--parallelism=" + PARALLELISM, "--stateBackend=MEMORY").as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    p.apply(GenerateSequence.from(0).to(ELEMENTS))
        .apply(MapElements.into(TypeDescriptors.kvs(TypeDescriptors.longs(), TypeDescriptors.longs()))
            .via((Long i) -> KV.of(i % 10, i)))
        .apply(GroupByKey.create());
    plan = WeirRunner.translate(p, options);
    Map<Integer, InProcessStream> streams = new HashMap<>();
    for (StreamPlan stream : plan.streams()) {
      streams.put(stream.id(), new InProcessStream(stream, 64));
    }
    tasks = new WeirTaskFactory(plan, streams, WeirSettings.from(options), new StepMetrics(), JobClock.SYSTEM, null);
    application = new WeirTaskApplication(plan, tasks);
    InProcessApplicationDescriptor description = new InProcessApplicationDescriptor(Map.of());
    application.describe(description);
    config = new MapConfig(description.toConfig());
    binding = application.bindSystems();
  }

  @AfterEach
  void unbind() {
    binding.close();
  }

  /** What samza-core does: the factory class from {@code systems.<name>.samza.factory}, by reflection. */
  private SystemFactory factoryOf(String system) throws ReflectiveOperationException {
    String className = config.get("systems." + system + ".samza.factory");
    assertThat(className).as("factory of %s in the described config", system).isNotNull();
    return (SystemFactory) Class.forName(className).getDeclaredConstructor().newInstance();
  }

  private StagePlan sourceStage() {
    return plan.stages().get(0);
  }

  private StreamPlan shuffle() {
    assertThat(plan.streams()).hasSize(1);
    return plan.streams().get(0);
  }

  @Test
  void describedConfigNamesBothFactoriesAndTheJobId() {
    assertThat(config.get("systems." + WeirTaskApplication.SOURCE_SYSTEM + ".samza.factory"))
        .isEqualTo(BeamSourceSystemFactory.class.getName());
    assertThat(config.get("systems." + InProcessStream.SYSTEM + ".samza.factory"))
        .isEqualTo(InProcessSystemFactory.class.getName());
    assertThat(config.get("systems." + WeirTaskApplication.SOURCE_SYSTEM + "." + WeirJobs.JOB_ID_CONFIG))
        .isEqualTo(application.jobId());
    assertThat(config.get("systems." + InProcessStream.SYSTEM + "." + WeirJobs.JOB_ID_CONFIG))
        .isEqualTo(application.jobId());
    assertThat(config.get("streams." + JobPlan.sourceStreamName(sourceStage()) + ".samza.bounded"))
        .isEqualTo("true");
  }

  @Test
  void adminsReportOnePartitionPerSplitAndTheShufflesPartitionCount() throws Exception {
    String source = JobPlan.sourceStreamName(sourceStage());
    SystemAdmin sources = factoryOf(WeirTaskApplication.SOURCE_SYSTEM).getAdmin(WeirTaskApplication.SOURCE_SYSTEM, config);
    Map<String, SystemStreamMetadata> sourceMetadata = sources.getSystemStreamMetadata(Set.of(source));
    assertThat(sourceStage().partitions()).isGreaterThan(1);
    assertThat(sourceMetadata.get(source).getSystemStreamPartitionMetadata())
        .hasSize(sourceStage().partitions())
        .containsKeys(new Partition(0), new Partition(sourceStage().partitions() - 1));

    SystemAdmin streams = factoryOf(InProcessStream.SYSTEM).getAdmin(InProcessStream.SYSTEM, config);
    Map<String, SystemStreamMetadata> streamMetadata = streams.getSystemStreamMetadata(Set.of(shuffle().name()));
    assertThat(streamMetadata.get(shuffle().name()).getSystemStreamPartitionMetadata()).hasSize(PARALLELISM);

    assertThatThrownBy(() -> streams.getSystemStreamMetadata(Set.of("no-such-stream")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(shuffle().name());
  }

  @Test
  void sourceConsumerReadsEverySplitToEndOfStreamThroughPoll() throws Exception {
    String source = JobPlan.sourceStreamName(sourceStage());
    SystemConsumer consumer = factoryOf(WeirTaskApplication.SOURCE_SYSTEM)
        .getConsumer(WeirTaskApplication.SOURCE_SYSTEM, config, new NoOpMetricsRegistry());
    Set<SystemStreamPartition> ssps = new HashSet<>();
    for (int p = 0; p < sourceStage().partitions(); p++) {
      SystemStreamPartition ssp = new SystemStreamPartition(WeirTaskApplication.SOURCE_SYSTEM, source, new Partition(p));
      ssps.add(ssp);
      consumer.register(ssp, null);
    }
    consumer.start();

    Map<SystemStreamPartition, List<IncomingMessageEnvelope>> received = new HashMap<>();
    Set<SystemStreamPartition> ended = new HashSet<>();
    while (ended.size() < ssps.size()) {
      Map<SystemStreamPartition, List<IncomingMessageEnvelope>> polled = consumer.poll(ssps, 100);
      polled.forEach((ssp, envelopes) -> {
        assertThat(ended).as("envelopes after the end of %s", ssp).doesNotContain(ssp);
        received.computeIfAbsent(ssp, s -> new ArrayList<>()).addAll(envelopes);
        if (envelopes.get(envelopes.size() - 1).isEndOfStream()) {
          ended.add(ssp);
        }
      });
    }
    assertThat(consumer.poll(ssps, 100)).as("a poll after every partition ended").isEmpty();
    consumer.stop();

    List<Long> values = new ArrayList<>();
    for (SystemStreamPartition ssp : ssps) {
      List<IncomingMessageEnvelope> envelopes = received.get(ssp);
      int n = envelopes.size();
      // ... elements, then Weir's final watermark and end-of-stream, then samza-core's end-of-stream.
      assertThat(envelopes.get(n - 3).getMessage()).isInstanceOfSatisfying(ProducerWatermark.class,
          w -> assertThat(w.getTimestamp()).isEqualTo(BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis()));
      assertThat(envelopes.get(n - 2).getMessage()).isInstanceOf(ProducerEndOfStream.class);
      assertThat(envelopes.get(n - 1).isEndOfStream()).isTrue();
      for (IncomingMessageEnvelope envelope : envelopes.subList(0, n - 3)) {
        assertThat(envelope.getSystemStreamPartition()).isEqualTo(ssp);
        assertThat(envelope.getMessage()).isInstanceOf(WindowedValue.class);
        values.add((Long) ((WindowedValue<?>) envelope.getMessage()).getValue());
      }
    }
    List<Long> expected = new ArrayList<>();
    for (long i = 0; i < ELEMENTS; i++) {
      expected.add(i);
    }
    assertThat(values).containsExactlyInAnyOrderElementsOf(expected);
  }

  @Test
  void inProcessProducerFeedsTheConsumerWhichEndsAfterEveryProducersEndOfStream() throws Exception {
    SystemFactory factory = factoryOf(InProcessStream.SYSTEM);
    SystemProducer producer = factory.getProducer(InProcessStream.SYSTEM, config, new NoOpMetricsRegistry());
    SystemConsumer consumer = factory.getConsumer(InProcessStream.SYSTEM, config, new NoOpMetricsRegistry());
    SystemStream stream = new SystemStream(InProcessStream.SYSTEM, shuffle().name());
    SystemStreamPartition partition1 = new SystemStreamPartition(stream, new Partition(1));
    consumer.register(partition1, null);
    producer.register("test");
    producer.start();
    consumer.start();

    byte[] key = {7};
    WindowedValue<KV<Long, Long>> element = WindowedValues.valueInGlobalWindow(KV.of(7L, 70L));
    producer.send("test", new OutgoingMessageEnvelope(stream, 1, key, element));
    int producers = shuffle().producers();
    for (int p = 0; p < producers; p++) {
      producer.send("test", new OutgoingMessageEnvelope(stream, 1, null, new ProducerEndOfStream(p, "stage-0-p" + p)));
    }
    producer.flush("test");

    List<IncomingMessageEnvelope> envelopes = new ArrayList<>();
    while (envelopes.isEmpty() || !envelopes.get(envelopes.size() - 1).isEndOfStream()) {
      envelopes.addAll(consumer.poll(Set.of(partition1), 100).getOrDefault(partition1, List.of()));
    }
    assertThat(envelopes).hasSize(1 + producers + 1);
    assertThat(envelopes.get(0).getMessage()).isSameAs(element);
    assertThat(envelopes.get(0).getKey()).isSameAs(key);
    assertThat(envelopes.get(0).getSystemStreamPartition()).isEqualTo(partition1);
    assertThat(envelopes.subList(1, 1 + producers)).allMatch(e -> e.getMessage() instanceof ProducerEndOfStream);

    assertThatThrownBy(() -> producer.send("test", new OutgoingMessageEnvelope(stream, PARALLELISM, key, element)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partition index");
    producer.stop();
    consumer.stop();
  }

  @Test
  void sourceSystemIsInputOnly() throws Exception {
    SystemProducer producer = factoryOf(WeirTaskApplication.SOURCE_SYSTEM)
        .getProducer(WeirTaskApplication.SOURCE_SYSTEM, config, new NoOpMetricsRegistry());
    SystemStream source = new SystemStream(WeirTaskApplication.SOURCE_SYSTEM, JobPlan.sourceStreamName(sourceStage()));
    assertThatThrownBy(() -> producer.send("test", new OutgoingMessageEnvelope(source, 1L)))
        .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("input-only");
  }

  @Test
  void sourceConsumerRejectsATestStreamSplitNamingTheReason() throws Exception {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=WeirRunner", "--stateBackend=MEMORY")
        .as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    p.apply(TestStream.create(VarLongCoder.of()).addElements(1L).advanceWatermarkToInfinity());
    JobPlan testPlan = WeirRunner.translate(p, options);
    WeirTaskFactory testTasks = new WeirTaskFactory(testPlan, Map.of(), WeirSettings.from(options), new StepMetrics(),
        JobClock.SYSTEM, null);
    WeirTaskApplication testApplication = new WeirTaskApplication(testPlan, testTasks);
    InProcessApplicationDescriptor description = new InProcessApplicationDescriptor(Map.of());
    testApplication.describe(description);
    Config testConfig = new MapConfig(description.toConfig());
    try (WeirJobs.Binding ignored = testApplication.bindSystems()) {
      SystemConsumer consumer = new BeamSourceSystemFactory()
          .getConsumer(WeirTaskApplication.SOURCE_SYSTEM, testConfig, new NoOpMetricsRegistry());
      SystemStreamPartition ssp = new SystemStreamPartition(WeirTaskApplication.SOURCE_SYSTEM,
          JobPlan.sourceStreamName(testPlan.stages().get(0)), new Partition(0));
      assertThatThrownBy(() -> consumer.register(ssp, null)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("TestStream");
    }
  }

  @Test
  void factoriesFailClearlyWhenTheJobIsNotBoundOrTheSystemIsMisnamed() throws Exception {
    binding.close();
    assertThatThrownBy(() -> factoryOf(InProcessStream.SYSTEM).getAdmin(InProcessStream.SYSTEM, config))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining(application.jobId())
        .hasMessageContaining("bindSystems");
    binding = application.bindSystems();
    assertThatThrownBy(() -> factoryOf(WeirTaskApplication.SOURCE_SYSTEM).getConsumer("kafka", config,
        new NoOpMetricsRegistry())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(WeirTaskApplication.SOURCE_SYSTEM);
    assertThatThrownBy(() -> new InProcessSystemFactory().getAdmin(InProcessStream.SYSTEM, new MapConfig(Map.of())))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(WeirJobs.JOB_ID_CONFIG);
    assertThatThrownBy(application::bindSystems).isInstanceOf(IllegalStateException.class);
  }
}
