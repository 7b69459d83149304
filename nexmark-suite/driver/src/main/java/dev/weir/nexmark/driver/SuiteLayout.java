// Role: finds the repository root and each runner's resolved classpath file
// (nexmark-suite/classpath-<runner>/target/classpath.txt, written by the Maven build).
// Threading: immutable; safe from any thread.
package dev.weir.nexmark.driver;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Where the suite's build outputs live. The root comes from -Dweir.home or the working directory. */
public final class SuiteLayout {
  private final Path home;

  public SuiteLayout(Path home) {
    this.home = home.toAbsolutePath().normalize();
  }

  /** The root named by -Dweir.home, else the nearest ancestor of the working directory holding nexmark-suite/. */
  public static SuiteLayout discover() {
    String prop = System.getProperty("weir.home");
    if (prop != null && !prop.isBlank()) {
      return new SuiteLayout(Path.of(prop));
    }
    Path p = Path.of("").toAbsolutePath();
    for (Path q = p; q != null; q = q.getParent()) {
      if (Files.isDirectory(q.resolve("nexmark-suite"))) {
        return new SuiteLayout(q);
      }
    }
    return new SuiteLayout(p);
  }

  /** Repository root. */
  public Path home() {
    return home;
  }

  /** The classpath file of a runner (may not exist yet). */
  public Path classpathFile(RunnerKind runner) {
    return home.resolve("nexmark-suite").resolve(runner.classpathModule()).resolve("target/classpath.txt");
  }

  /**
   * The runner's classpath, as written by the build.
   *
   * @throws IllegalStateException when the file is missing or empty (module not built)
   */
  public String classpath(RunnerKind runner) throws IOException {
    Path f = classpathFile(runner);
    if (!Files.isRegularFile(f)) {
      throw new IllegalStateException(runner.id() + " classpath not built: " + f
          + " is missing (build nexmark-suite/" + runner.classpathModule() + ", e.g. run bin/weir)");
    }
    String cp = Files.readString(f, StandardCharsets.UTF_8).trim();
    if (cp.isEmpty()) {
      throw new IllegalStateException(runner.id() + " classpath file is empty: " + f);
    }
    return cp;
  }
}
