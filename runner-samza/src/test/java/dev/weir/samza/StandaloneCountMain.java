package dev.weir.samza;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.io.kafka.KafkaIO;
import org.apache.beam.sdk.io.kafka.KafkaRecord;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.ReadableState;
import org.apache.beam.sdk.state.SetState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The job of {@link SamzaStandaloneKillIT}, one process of it: reads the input topic with KafkaIO
 * (every partition from the earliest offset), keys each record by its Kafka key with its source
 * position ({@code partition:offset}) as value, and counts per key in a stateful ParDo whose state
 * is the set of positions seen: the count is the set's size, so a record delivered again (after a
 * restart a source task resumes its split at its checkpointed position, and what it had sent after
 * that checkpoint reaches the counting stage again) is not counted twice, while a lost state would count less. Every
 * update appends {@code key=count} to the output file (flushed per line, so SIGKILL loses no
 * written line).
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
        .apply("Position", MapElements.into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.strings()))
            .via((KafkaRecord<String, String> r) -> KV.of(r.getKV().getKey(), r.getPartition() + ":" + r.getOffset())))
        .apply("Count", ParDo.of(new DedupCountFn(output)));
    p.run().waitUntilFinish();
  }

  /** Counts the distinct positions per key and appends {@code key=count} to the output file. */
  static final class DedupCountFn extends DoFn<KV<String, String>, Void> {
    private static final Map<String, Writer> WRITERS = new HashMap<>();

    @StateId("seen")
    private final StateSpec<SetState<String>> seenSpec = StateSpecs.set(StringUtf8Coder.of());

    private final String output;

    DedupCountFn(String output) {
      this.output = output;
    }

    @ProcessElement
    public void process(@Element KV<String, String> element, @StateId("seen") SetState<String> seen) {
      ReadableState<Boolean> added = seen.addIfAbsent(element.getValue());
      if (!added.read()) {
        return;
      }
      long count = 0;
      for (String ignored : seen.read()) {
        count++;
      }
      write(element.getKey() + "=" + count);
    }

    private void write(String line) {
      synchronized (WRITERS) {
        try {
          Writer w = WRITERS.get(output);
          if (w == null) {
            w = Files.newBufferedWriter(Path.of(output), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
            WRITERS.put(output, w);
          }
          w.write(line);
          w.write('\n');
          w.flush();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
  }
}
