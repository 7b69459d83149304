// Role: freezes the build outputs a suite runs on. Classpath entries that a rebuild can replace
// (anything under the repository, e.g. harness/target/*.jar, runner/target/*.jar, and SNAPSHOT
// jars) are copied into the results folder once, before the first run, and the runners'
// classpaths are rewritten to the copies: a concurrent `mvn install` cannot break a run halfway,
// and the results folder keeps exactly the code that was measured.
// Threading: used once from the driver's main thread before the runs start.
package dev.weir.nexmark.driver;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** Copies mutable classpath entries into {@code <results>/classpath/} and rewrites classpaths. */
public final class ClasspathSnapshot {
  private final Path home;
  private final Path dir;
  private final Map<Path, Path> copied = new HashMap<>();

  /**
   * @param home repository root (entries under it are copied)
   * @param dir folder that receives the copies
   */
  public ClasspathSnapshot(Path home, Path dir) {
    this.home = home.toAbsolutePath().normalize();
    this.dir = dir;
  }

  /** The classpath with every mutable entry replaced by its frozen copy. */
  public String freeze(String classpath) throws IOException {
    List<String> out = new ArrayList<>();
    for (String entry : classpath.split(File.pathSeparator)) {
      if (entry.isBlank()) {
        continue;
      }
      Path p = Path.of(entry).toAbsolutePath().normalize();
      boolean mutable = p.startsWith(home) || p.getFileName().toString().contains("-SNAPSHOT");
      if (!mutable || !Files.exists(p)) {
        out.add(entry);
        continue;
      }
      Path copy = copied.get(p);
      if (copy == null) {
        copy = dir.resolve(copied.size() + "-" + p.getFileName());
        Files.createDirectories(dir);
        if (Files.isDirectory(p)) {
          copyTree(p, copy);
        } else {
          Files.copy(p, copy, StandardCopyOption.REPLACE_EXISTING);
        }
        copied.put(p, copy);
      }
      out.add(copy.toString());
    }
    return String.join(File.pathSeparator, out);
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> walk = Files.walk(from)) {
      walk.forEach(src -> {
        try {
          Path dst = to.resolve(from.relativize(src).toString());
          if (Files.isDirectory(src)) {
            Files.createDirectories(dst);
          } else {
            Files.copy(src, dst, StandardCopyOption.REPLACE_EXISTING);
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
  }
}
