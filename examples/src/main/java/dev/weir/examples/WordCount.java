package dev.weir.examples;

import java.util.Arrays;
import java.util.Locale;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.TextIO;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.options.Validation;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Filter;
import org.apache.beam.sdk.transforms.FlatMapElements;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;

/**
 * Batch WordCount: reads a local text file, counts how often each word occurs and writes one
 * {@code word: count} line per word, sorted by nothing (Beam gives no order), to one output file.
 *
 * <p>What it shows: a bounded file source ({@code TextIO.read}), element-wise transforms, a
 * {@code Count.perElement} (a GroupByKey with a combiner, which Weir lifts into a partial combine
 * before the shuffle) and a file sink ({@code TextIO.write}). Nothing in it names Weir: the runner
 * is chosen on the command line.
 *
 * <p>Run it from the repository root (after {@code mvn -B install -DskipTests -pl examples -am}):
 * <pre>
 * mvn -pl examples exec:java -Dexec.mainClass=dev.weir.examples.WordCount \
 *   -Dexec.args="--runner=WeirRunner --inputFile=examples/src/test/resources/words.txt --output=/tmp/weir-wordcount/counts.txt"
 * </pre>
 * Relative paths are resolved against the directory {@code mvn} runs in.
 */
public final class WordCount {
  private WordCount() {}

  /** The example's own options; Weir's ({@code --parallelism}, ...) are accepted alongside. */
  public interface Options extends PipelineOptions {
    @Description("The text file to count the words of (a local path or a glob).")
    @Validation.Required
    String getInputFile();

    void setInputFile(String inputFile);

    @Description("The output file: one line 'word: count' per distinct word, in no particular order.")
    @Validation.Required
    String getOutput();

    void setOutput(String output);
  }

  /**
   * Lines of text in, {@code KV<word, count>} out. Words are runs of letters and apostrophes,
   * lower-cased; everything else separates them.
   */
  public static final class CountWords
      extends PTransform<PCollection<String>, PCollection<KV<String, Long>>> {
    @Override
    public PCollection<KV<String, Long>> expand(PCollection<String> lines) {
      return lines
          .apply("Split", FlatMapElements.into(TypeDescriptors.strings())
              .via((String line) -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("[^\\p{L}']+"))))
          .apply("DropEmpty", Filter.by((String word) -> !word.isEmpty()))
          .apply("Count", Count.perElement());
    }
  }

  /** Formats one count as its output line, {@code word: count}. */
  public static String format(KV<String, Long> wordCount) {
    return wordCount.getKey() + ": " + wordCount.getValue();
  }

  /** Builds the whole pipeline, file in and file out, on {@code options}. */
  public static Pipeline build(Options options) {
    Pipeline pipeline = Pipeline.create(options);
    pipeline
        .apply("ReadLines", TextIO.read().from(options.getInputFile()))
        .apply("CountWords", new CountWords())
        .apply("Format", MapElements.into(TypeDescriptors.strings()).via(WordCount::format))
        // One file named exactly --output; drop withoutSharding() for large outputs (one file per shard).
        .apply("WriteCounts", TextIO.write().to(options.getOutput()).withoutSharding());
    return pipeline;
  }

  /** Parses the command line, runs the pipeline and waits until it has finished. */
  public static void main(String[] args) {
    Options options = PipelineOptionsFactory.fromArgs(args).withValidation().as(Options.class);
    build(options).run().waitUntilFinish();
  }
}
