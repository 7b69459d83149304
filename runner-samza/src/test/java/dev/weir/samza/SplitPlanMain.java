package dev.weir.samza;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TypeDescriptors;

/**
 * The job of {@link SamzaSplitPlanIT}, one process of it: reads {@link ProcessDependentSource}
 * {@code [0, N)} (whose splits depend on the process), shuffles the longs by {@code v mod 5}
 * (a GroupByKey, so they cross processes on Kafka) and appends every value, one per line, to the
 * output file (flushed per line).
 *
 * <p>Args: {@code OUTPUT_FILE N} then Weir's pipeline options.
 */
public final class SplitPlanMain {
  private SplitPlanMain() {}

  public static void main(String[] args) {
    String output = args[0];
    long n = Long.parseLong(args[1]);
    Pipeline p = Pipeline.create(PipelineOptionsFactory.fromArgs(Arrays.copyOfRange(args, 2, args.length)).create());
    p.apply("Read", Read.from(new ProcessDependentSource(0, n)))
        .apply("Key", WithKeys.<Long, Long>of(v -> v % 5).withKeyType(TypeDescriptors.longs()))
        .apply("Group", GroupByKey.create())
        .apply("Write", ParDo.of(new WriteFn(output)));
    p.run().waitUntilFinish();
  }

  /** Appends each grouped value to the output file, one per line. */
  static final class WriteFn extends DoFn<KV<Long, Iterable<Long>>, Void> {
    private final String output;
    private transient Writer writer;

    WriteFn(String output) {
      this.output = output;
    }

    @ProcessElement
    public void process(@Element KV<Long, Iterable<Long>> group) {
      synchronized (WriteFn.class) {
        try {
          if (writer == null) {
            writer = Files.newBufferedWriter(Path.of(output), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
          }
          for (long v : group.getValue()) {
            writer.write(Long.toString(v));
            writer.write('\n');
          }
          writer.flush();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
  }
}
