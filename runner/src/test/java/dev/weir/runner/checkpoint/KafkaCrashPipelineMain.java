package dev.weir.runner.checkpoint;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.kafka.KafkaIO;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.beam.sdk.values.KV;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Child-JVM entry point of {@link KafkaCrashRecoveryIT}: a streaming pipeline reading a Kafka
 * topic with Beam's {@code KafkaIO} ({@code withoutMetadata()}, no consumer group: the position
 * of each partition lives only in Weir's checkpoints, as the source's checkpoint marks), counting
 * per key in a {@code ValueState} and writing the count after every element to
 * {@code <outputDirectory>/<key>} (a temporary file, then an atomic rename: a replayed element
 * rewrites the same content, and the last write is the key's final count).
 *
 * <p>Arguments: {@code <outputDirectory> <bootstrapServers> <topic> <pipeline options...>} (the
 * test passes {@code --experiments=use_deprecated_read}, KafkaIO's primitive
 * {@code Read.from(UnboundedSource)} expansion). Prints {@code STARTED} once {@code run()}
 * returned; KafkaIO's reader logs {@code reading from <topic>-<partition> starting at offset <n>}
 * for each partition it opens (its logger is set to INFO here). The job runs until it is killed.
 */
public final class KafkaCrashPipelineMain {
  private KafkaCrashPipelineMain() {}

  public static void main(String[] args) {
    // before any logger exists: slf4j-simple reads its levels once
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.beam.sdk.io.kafka.KafkaUnboundedReader", "info");
    try {
      Path out = Path.of(args[0]);
      String bootstrapServers = args[1];
      String topic = args[2];
      PipelineOptions options = PipelineOptionsFactory.fromArgs(Arrays.copyOfRange(args, 3, args.length))
          .withValidation().create();
      Pipeline p = Pipeline.create(options);
      p.apply("ReadKafka", KafkaIO.<String, String>read()
              .withBootstrapServers(bootstrapServers)
              .withTopic(topic)
              .withKeyDeserializer(StringDeserializer.class)
              .withValueDeserializer(StringDeserializer.class)
              // small fetches per partition: with Kafka's default (1 MiB) one fetch holds a whole
              // partition's backlog and the consumer hands it out before the next partition's, so
              // a short run reads one partition per reader; the crash test wants every partition
              // mid-read when it kills
              .withConsumerConfigUpdates(Map.<String, Object>of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                  ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 4096))
              .withoutMetadata())
          .apply("CountPerKey", ParDo.of(new CountPerKeyFn()))
          .apply("Format", MapElements.into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.strings()))
              .via((KV<String, Long> count) -> KV.of(count.getKey(), "count=" + count.getValue())))
          .apply("WriteCount", ParDo.of(new CrashablePipeline.WriteFileFn(out.toAbsolutePath().toString())));
      PipelineResult result = p.run();
      System.out.println("STARTED");
      System.out.flush();
      PipelineResult.State state = result.waitUntilFinish();
      System.out.println("DONE " + state);
      System.out.flush();
      System.exit(1); // an unbounded read does not end by itself
    } catch (Throwable t) {
      System.out.println("FAILED " + t);
      System.out.flush();
      t.printStackTrace();
      System.err.flush();
      System.exit(2);
    }
  }

  /** Counts per key ({@code ValueState}); emits {@code KV(key, count so far)}. */
  static final class CountPerKeyFn extends DoFn<KV<String, String>, KV<String, Long>> {
    @StateId("count")
    private final StateSpec<ValueState<Long>> countSpec = StateSpecs.value(VarLongCoder.of());

    @ProcessElement
    public void process(@Element KV<String, String> element, @StateId("count") ValueState<Long> count,
        OutputReceiver<KV<String, Long>> out) {
      Long before = count.read();
      long now = (before == null ? 0 : before) + 1;
      count.write(now);
      out.output(KV.of(element.getKey(), now));
    }
  }
}
