package dev.weir.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs {@link WordCount} on Weir over the shipped text and checks the file it writes. */
class WordCountTest {
  private static final Path INPUT = Path.of("src/test/resources/words.txt");

  @TempDir
  Path tmp;

  @Test
  void countsEveryWordOfTheInputFile() throws IOException {
    Path output = tmp.resolve("counts.txt");
    WordCount.Options options = PipelineOptionsFactory
        .fromArgs(OnWeir.args("--inputFile=" + INPUT, "--output=" + output))
        .withValidation().as(WordCount.Options.class);

    PipelineResult.State state = WordCount.build(options).run().waitUntilFinish();

    assertThat(state).isEqualTo(PipelineResult.State.DONE);
    assertThat(Files.readAllLines(output, StandardCharsets.UTF_8))
        .containsExactlyInAnyOrderElementsOf(expectedLines());
    assertThat(Files.readAllLines(output, StandardCharsets.UTF_8)).contains("weir: 5", "the: 10");
  }

  /** The expected output, counted here without Beam. */
  private static Iterable<String> expectedLines() throws IOException {
    Map<String, Long> counts = new TreeMap<>();
    for (String line : Files.readAllLines(INPUT, StandardCharsets.UTF_8)) {
      for (String word : line.toLowerCase(Locale.ROOT).split("[^\\p{L}']+")) {
        if (!word.isEmpty()) {
          counts.merge(word, 1L, Long::sum);
        }
      }
    }
    return counts.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue()).collect(Collectors.toList());
  }
}
