package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.testservices.KafkaBroker;
import dev.weir.testservices.KafkaBrokerExtension;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.kafka.KafkaIO;
import org.apache.beam.sdk.options.ExperimentalOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.joda.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Beam's {@code KafkaIO} on WeirRunner against a real Kafka broker (test-services' {@link
 * KafkaBroker}, a child JVM on loopback): a streaming pipeline reads a topic of several partitions
 * that the test filled, counts per key in a stateful DoFn, and writes every running count; the
 * results are checked exactly: unbounded (the job is cancelled once every count arrived in the
 * output topic) through both of KafkaIO's read expansions, and bounded by {@code
 * withMaxNumRecords} (Beam's {@code BoundedReadFromUnboundedSource}; the job ends and {@code
 * PAssert} checks), and a job pointed at an address where no broker listens. About 40 s on 2
 * cores (measured 41 s in {@code mvn verify}), of which ~10 s start the broker.
 */
class KafkaIOPipelineIT {

  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  private static final int PARTITIONS = 4;
  private static final int KEYS = 7;
  private static final int RECORDS = 280;

  /**
   * Records for the splittable-DoFn read: on Weir it delivers only ~10 records/s here (bursts about
   * 4 s apart, measured: 280 records in 45 s, against 280 in under 1 s through the primitive
   * read), so it reads fewer to keep this test short. Why it trickles is not known yet.
   */
  private static final int SDF_RECORDS = 56;
  // Measured with 56: ~35 s for that case alone. With --maxBundleTimeMs (which also bounds one
  // splittable-DoFn call) at 3,000 it took 22 s and at 10,000 16 s: a lead, not yet a diagnosis.

  /** Counts per key; emits {@code key=n} for the key's n-th element. */
  static final class CountPerKeyFn extends DoFn<KV<String, String>, KV<String, String>> {
    @StateId("count")
    private final StateSpec<ValueState<Long>> countSpec = StateSpecs.value(VarLongCoder.of());

    @ProcessElement
    public void process(
        @Element KV<String, String> element,
        @StateId("count") ValueState<Long> count,
        OutputReceiver<KV<String, String>> out) {
      Long before = count.read();
      long now = (before == null ? 0 : before) + 1;
      count.write(now);
      out.output(KV.of(element.getKey(), element.getKey() + "=" + now));
    }
  }

  /** The value of each KV. */
  static final class ValuesFn extends DoFn<KV<String, String>, String> {
    @ProcessElement
    public void process(@Element KV<String, String> kv, OutputReceiver<String> out) {
      out.output(kv.getValue());
    }
  }

  private static WeirPipelineOptions streamingOptions(String runner) {
    return PipelineOptionsFactory.fromArgs(
            "--runner=" + runner,
            "--streaming=true",
            "--parallelism=2",
            "--containers=2",
            "--stateBackend=MEMORY")
        .as(WeirPipelineOptions.class);
  }

  /** Writes {@code records} records, key {@code user-(i % KEYS)}, round-robin over partitions. */
  private static Map<String, Integer> fill(KafkaBroker broker, String topic, int records)
      throws Exception {
    broker.createTopic(topic, PARTITIONS);
    Map<String, Integer> perKey = new TreeMap<>();
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < records; i++) {
        String key = "user-" + (i % KEYS);
        producer.send(new ProducerRecord<>(topic, i % PARTITIONS, key, "click-" + i)).get();
        perKey.merge(key, 1, Integer::sum);
      }
    }
    return perKey;
  }

  private static List<String> expectedCounts(Map<String, Integer> perKey) {
    List<String> expected = new ArrayList<>();
    perKey.forEach(
        (key, n) -> {
          for (int i = 1; i <= n; i++) {
            expected.add(key + "=" + i);
          }
        });
    expected.sort(null);
    return expected;
  }

  private static KafkaIO.Read<String, String> read(KafkaBroker broker, String topic) {
    return KafkaIO.<String, String>read()
        .withBootstrapServers(broker.bootstrapServers())
        .withTopic(topic)
        .withKeyDeserializer(StringDeserializer.class)
        .withValueDeserializer(StringDeserializer.class)
        .withConsumerConfigUpdates(
            Map.<String, Object>of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"));
  }

  /**
   * {@code experiments}: none (KafkaIO 2.70 then expands to {@code ReadFromKafkaViaUnbounded}, a
   * {@code Read.Unbounded} of {@code KafkaUnboundedSource} that Weir runs as its primitive
   * unbounded read, one split per task) or {@code use_sdf_read} (KafkaIO's {@code
   * ReadFromKafkaViaSDF}: {@code ReadFromKafkaDoFn}, an unbounded-per-element splittable DoFn with
   * its own watermark estimator, run by Weir's {@code SplittableProcessOperator}).
   */
  @ParameterizedTest(name = "experiments={0}")
  @ValueSource(strings = {"", "use_sdf_read"})
  void unboundedReadCountsPerKeyAndWritesEveryCountToKafkaExactlyOnce(String experiments)
      throws Exception {
    KafkaBroker broker = KAFKA.broker();
    String in = "clicks" + experiments;
    String outTopic = "counts" + experiments;
    Map<String, Integer> perKey = fill(broker, in, experiments.isEmpty() ? RECORDS : SDF_RECORDS);
    broker.createTopic(outTopic, 1);

    WeirPipelineOptions options = streamingOptions("WeirRunner");
    if (!experiments.isEmpty()) {
      options.as(ExperimentalOptions.class).setExperiments(List.of(experiments));
    }
    Pipeline p = Pipeline.create(options);
    p.apply("ReadClicks", read(broker, in).withoutMetadata())
        .apply("CountPerKey", ParDo.of(new CountPerKeyFn()))
        .apply(
            "WriteCounts",
            KafkaIO.<String, String>write()
                .withBootstrapServers(broker.bootstrapServers())
                .withTopic(outTopic)
                .withKeySerializer(StringSerializer.class)
                .withValueSerializer(StringSerializer.class));
    PipelineResult result = p.run();
    List<String> expected = expectedCounts(perKey);
    List<String> actual;
    try {
      actual = consume(broker, outTopic, expected.size(), result);
      assertThat(result.getState()).isEqualTo(PipelineResult.State.RUNNING);
    } finally {
      result.cancel();
    }
    assertThat(result.waitUntilFinish(Duration.standardSeconds(30)))
        .isEqualTo(PipelineResult.State.CANCELLED);
    actual.sort(null);
    assertThat(actual).containsExactlyElementsOf(expected);
  }

  @Test
  void readBoundedByMaxNumRecordsEndsTheJobWithExactCounts(KafkaBroker broker) throws Exception {
    Map<String, Integer> perKey = fill(broker, "clicks-bounded", RECORDS);
    Pipeline p = Pipeline.create(streamingOptions("TestWeirRunner"));
    PCollection<String> counts =
        p.apply(
                "ReadClicks",
                read(broker, "clicks-bounded").withMaxNumRecords(RECORDS).withoutMetadata())
            .apply("CountPerKey", ParDo.of(new CountPerKeyFn()))
            .apply("Values", ParDo.of(new ValuesFn()));
    PAssert.that(counts).containsInAnyOrder(expectedCounts(perKey));
    assertThat(p.run().getState()).isEqualTo(PipelineResult.State.DONE);
  }

  /**
   * Issue 15's "Kafka unreachable" rule, as KafkaIO behaves on Weir today: KafkaIO's primitive read
   * asks the broker for the topic's partitions when Weir splits the source at job start; with no
   * broker at the address, the consumer gives up after its {@code default.api.timeout.ms} (60 s by
   * default; 5 s here) and {@code run()} throws. The failure names the transform ({@code cannot
   * split the unbounded source of ReadNowhere/...}) and Kafka's cause ({@code Timeout expired while
   * fetching topic metadata}), but not the address: that part of the rule is not met yet.
   */
  @Test
  void aBootstrapAddressWithoutABrokerFailsTheJob() throws Exception {
    int port;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    String address = "127.0.0.1:" + port;
    Pipeline p = Pipeline.create(streamingOptions("WeirRunner"));
    p.apply(
            "ReadNowhere",
            KafkaIO.<String, String>read()
                .withBootstrapServers(address)
                .withTopic("nowhere")
                .withKeyDeserializer(StringDeserializer.class)
                .withValueDeserializer(StringDeserializer.class)
                .withConsumerConfigUpdates(
                    Map.<String, Object>of(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000))
                .withoutMetadata())
        .apply("CountPerKey", ParDo.of(new CountPerKeyFn()));
    Throwable failure = null;
    PipelineResult result = null;
    try {
      result = p.run();
      result.waitUntilFinish(Duration.standardSeconds(90));
    } catch (RuntimeException e) {
      failure = e;
    } finally {
      if (result != null) {
        result.cancel();
      }
    }
    StringBuilder chain = new StringBuilder();
    for (Throwable t = failure; t != null && chain.length() < 10_000; t = t.getCause()) {
      chain.append(t).append('\n');
    }
    System.err.println("KafkaIO with no broker at " + address + " failed with:\n" + chain);
    assertThat(failure).as("the job's failure").isNotNull();
    assertThat(chain.toString())
        .contains("ReadNowhere")
        .contains("Timeout expired while fetching topic metadata");
  }

  /**
   * Reads {@code topic} from its start until {@code expected} records arrived, then half a second
   * more (so that duplicates would show); gives up after 90 s or when the job stops running.
   */
  private static List<String> consume(
      KafkaBroker broker, String topic, int expected, PipelineResult job) {
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    List<String> values = new ArrayList<>();
    Map<String, Integer> seen = new HashMap<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
      TopicPartition partition = new TopicPartition(topic, 0);
      consumer.assign(List.of(partition));
      consumer.seekToBeginning(List.of(partition));
      long deadlineNs = System.nanoTime() + 90_000_000_000L;
      long settleUntilNs = Long.MAX_VALUE;
      while (System.nanoTime() < Math.min(deadlineNs, settleUntilNs)) {
        assertThat(job.getState())
            .as("the job's state while its results are awaited")
            .isEqualTo(PipelineResult.State.RUNNING);
        for (ConsumerRecord<String, String> r : consumer.poll(java.time.Duration.ofMillis(200))) {
          values.add(r.value());
          seen.merge(r.value(), 1, Integer::sum);

        }
        if (values.size() >= expected && settleUntilNs == Long.MAX_VALUE) {
          settleUntilNs = System.nanoTime() + 500_000_000L;
        }
      }
    }
    return values;
  }
}
