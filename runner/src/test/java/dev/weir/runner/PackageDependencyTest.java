package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Pins the runner's package layering: the samza-api face ({@code application}, {@code samza})
 * depends on the executor and the translation, never the reverse, and {@code samza} does not
 * depend on {@code application}. Checked on the compiled classes: a class's constant pool names
 * every class it refers to (as {@code dev/weir/runner/...}), whatever the source imports.
 */
class PackageDependencyTest {

  @Test
  void executorAndTranslation_referToNeitherTheApplicationNorTheSamzaSystems() throws Exception {
    for (String lower : List.of("executor", "translation")) {
      assertThat(referencesFrom(lower, "application")).as(lower + " -> application").isEmpty();
      assertThat(referencesFrom(lower, "samza")).as(lower + " -> samza").isEmpty();
    }
  }

  @Test
  void translation_doesNotReferToTheExecutor() throws Exception {
    assertThat(referencesFrom("translation", "executor")).isEmpty();
  }

  @Test
  void samzaSystems_doNotReferToTheApplication() throws Exception {
    assertThat(referencesFrom("samza", "application")).isEmpty();
  }

  @Test
  void theScanSeesReferences() throws Exception {
    // guards the test itself: application does refer to executor and samza
    assertThat(referencesFrom("application", "executor")).isNotEmpty();
    assertThat(referencesFrom("application", "samza")).isNotEmpty();
  }

  /** The compiled classes of package {@code from} whose constant pool names a class of {@code to}. */
  private static List<String> referencesFrom(String from, String to) throws IOException, URISyntaxException {
    Path classes = Path.of(WeirRunner.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path dir = classes.resolve("dev/weir/runner/" + from);
    assertThat(dir).isDirectory();
    String target = "dev/weir/runner/" + to + "/";
    List<String> offenders = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
        String pool = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        if (pool.contains(target)) {
          offenders.add(dir.relativize(file).toString());
        }
      }
    }
    return offenders;
  }
}
