package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Pins the runner's package layering (runner/ARCHITECTURE.md draws it): each package may refer
 * only to the packages listed for it below, so dependencies point down and no cycle can form. The
 * samza-api face ({@code application}, {@code samza}) sits on top: nothing below refers to it.
 * Checked on the compiled classes: a class's constant pool names every class it refers to (as
 * {@code dev/weir/runner/<package>/...}), whatever the source imports. The runner's root package
 * (the API a pipeline author uses, and {@code WeirSettings}) is not checked here.
 */
class PackageDependencyTest {
  /** A reference to a runner class: its package below {@code dev/weir/runner/}, e.g. {@code operators/keyed}. */
  private static final Pattern REFERENCE = Pattern.compile("dev/weir/runner/([a-z]+(?:/[a-z]+)*)/[A-Z]");

  /** Every package of the runner and what it may refer to; a package not listed fails the test. */
  private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
      Map.entry("application", Set.of("samza", "executor", "task", "stream", "source", "translation", "metrics")),
      Map.entry("samza", Set.of("executor", "task", "stream", "source", "translation", "metrics", "time")),
      Map.entry("executor", Set.of("monitoring", "task", "checkpoint", "source", "stream", "metrics", "operators",
          "state", "time", "translation")),
      Map.entry("monitoring", Set.of("task", "checkpoint", "metrics", "translation")),
      Map.entry("task", Set.of("checkpoint", "source", "stream", "metrics", "operators", "state", "time",
          "translation", "sideinput")),
      Map.entry("source", Set.of("stream", "metrics", "operators", "time", "translation")),
      Map.entry("stream", Set.of("operators", "state", "time", "translation")),
      Map.entry("checkpoint", Set.of("state", "translation")),
      Map.entry("translation", Set.of("operators", "operators.keyed", "sideinput", "state", "time")),
      Map.entry("metrics", Set.of("operators")),
      Map.entry("operators.keyed", Set.of("compat", "operators", "sideinput", "state", "timers", "time")),
      Map.entry("operators", Set.of("compat", "sideinput", "state", "time")),
      Map.entry("timers", Set.of("state")),
      Map.entry("sideinput", Set.of("state")),
      Map.entry("state", Set.of()),
      Map.entry("time", Set.of()),
      // one copy per Beam minor (runner/src/beam-<minor>/java), on runners-core only
      Map.entry("compat", Set.of()));

  @Test
  void everyPackageRefersOnlyToThePackagesBelowIt() throws Exception {
    Map<String, Set<String>> violations = new TreeMap<>();
    for (Map.Entry<String, Set<String>> e : references().entrySet()) {
      Set<String> allowed = ALLOWED.get(e.getKey());
      assertThat(allowed).as("package %s is not in the layering: add it to ALLOWED and ARCHITECTURE.md", e.getKey())
          .isNotNull();
      Set<String> extra = new TreeSet<>(e.getValue());
      extra.removeAll(allowed);
      extra.remove(e.getKey());
      if (!extra.isEmpty()) {
        violations.put(e.getKey(), extra);
      }
    }
    assertThat(violations).as("references not allowed by the layering").isEmpty();
  }

  @Test
  void theLayeringHasNoCycle() {
    for (String start : ALLOWED.keySet()) {
      assertThat(reachable(start, start, new TreeSet<>())).as("a cycle through " + start).isFalse();
    }
  }

  @Test
  void nothingBelowTheSamzaFaceRefersToIt() {
    for (Map.Entry<String, Set<String>> e : ALLOWED.entrySet()) {
      if (!e.getKey().equals("application") && !e.getKey().equals("samza")) {
        assertThat(e.getValue()).as(e.getKey()).doesNotContain("application", "samza");
      }
    }
    assertThat(ALLOWED.get("samza")).doesNotContain("application");
  }

  @Test
  void theScanSeesReferences() throws Exception {
    // guards the test itself: the executor does refer to the task and the checkpoint packages
    assertThat(references().get("executor")).contains("task", "checkpoint", "monitoring");
  }

  private static boolean reachable(String from, String target, Set<String> seen) {
    for (String next : ALLOWED.getOrDefault(from, Set.of())) {
      if (next.equals(target)) {
        return true;
      }
      if (seen.add(next) && reachable(next, target, seen)) {
        return true;
      }
    }
    return false;
  }

  /** Per package of compiled runner classes, the runner packages its classes refer to. */
  private static Map<String, Set<String>> references() throws IOException, URISyntaxException {
    Path classes = Path.of(WeirRunner.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path root = classes.resolve("dev/weir/runner");
    Map<String, Set<String>> result = new TreeMap<>();
    try (Stream<Path> dirs = Files.walk(root)) {
      for (Path dir : (Iterable<Path>) dirs.filter(d -> Files.isDirectory(d) && !d.equals(root))::iterator) {
        Set<String> referred = new TreeSet<>();
        try (Stream<Path> files = Files.list(dir)) {
          for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
            Matcher m = REFERENCE.matcher(new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1));
            while (m.find()) {
              referred.add(m.group(1).replace('/', '.'));
            }
          }
        }
        result.put(root.relativize(dir).toString().replace('/', '.'), referred);
      }
    }
    return result;
  }
}
