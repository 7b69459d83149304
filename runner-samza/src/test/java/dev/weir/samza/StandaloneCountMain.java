package dev.weir.samza;

import java.util.Arrays;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.kafka.KafkaIO;
import org.apache.beam.sdk.io.kafka.KafkaRecord;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The job of {@link SamzaStandaloneKillIT}, one process of it: reads the input topic with KafkaIO
 * (every partition from the earliest offset on a fresh start; from the checkpointed positions after
 * a restart), keys each record by its Kafka key and counts per key in a stateful ParDo adding 1 per
 * record to a {@code ValueState<Long>}: no deduplication, so a record delivered twice is counted
 * twice and a lost state counts less. Every update appends {@code key=count} to the output file
 * (flushed per line, so SIGKILL loses no written line).
 *
 * <p>Args: {@code OUTPUT_FILE BOOTSTRAP TOPIC} then Weir's pipeline options.
 */
public final class StandaloneCountMain {
  private StandaloneCountMain() {}

  public static void main(String[] args) throws Exception {
    String output = args[0];
    String bootstrap = args[1];
    String topic = args[2];
    Pipeline p = Pipeline.create(PipelineOptionsFactory.fromArgs(Arrays.copyOfRange(args, 3, args.length)).create());
    p.apply("Read", KafkaIO.<String, String>read()
            .withBootstrapServers(bootstrap)
            .withTopic(topic)
            .withKeyDeserializer(StringDeserializer.class)
            .withValueDeserializer(StringDeserializer.class)
            .withConsumerConfigUpdates(Map.of("auto.offset.reset", "earliest")))
        .apply("Key", MapElements.into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.strings()))
            .via((KafkaRecord<String, String> r) -> KV.of(r.getKV().getKey(), r.getKV().getValue())))
        .apply("Count", ParDo.of(new CountFn(output)));
    p.run().waitUntilFinish();
  }

  /** Counts the records per key and appends {@code key=count} to the output file. */
  static final class CountFn extends DoFn<KV<String, String>, Void> {
    @StateId("count")
    private final StateSpec<ValueState<Long>> countSpec = StateSpecs.value(VarLongCoder.of());

    private final String output;

    CountFn(String output) {
      this.output = output;
    }

    @ProcessElement
    public void process(@Element KV<String, String> element, @StateId("count") ValueState<Long> count) {
      Long before = count.read();
      long now = (before == null ? 0 : before) + 1;
      count.write(now);
      write(element.getKey() + "=" + now);
    }

    private void write(String line) {
      StandaloneProcesses.appendLine(output, line);
    }
  }
}
