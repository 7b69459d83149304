package dev.weir.profiling;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Properties;

/**
 * Finds async-profiler's native library. The {@code tools.profiler:async-profiler} jar from Maven
 * Central carries {@code libasyncProfiler.so} for linux-x64, linux-arm64 and macOS; this class
 * extracts the one for this machine once into a cache folder ({@code -Dweir.profiler.cache}, else
 * {@code ~/.cache/weir}) so that it can be loaded with {@code -agentpath} or the Java API. No
 * download. Thread-safe (extraction is to a temporary name, then an atomic move).
 */
public final class AsyncProfilerLibrary {

  private AsyncProfilerLibrary() {}

  /** The async-profiler version on the classpath, e.g. {@code 4.6}. */
  public static String version() {
    try (InputStream in = AsyncProfilerLibrary.class.getClassLoader()
        .getResourceAsStream("META-INF/maven/tools.profiler/async-profiler/pom.properties")) {
      if (in == null) {
        throw new IllegalStateException("async-profiler (tools.profiler:async-profiler) is not on the classpath");
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the async-profiler version", e);
    }
  }

  /** The folder inside the jar for this OS and CPU, e.g. {@code linux-x64}. */
  public static String platform() {
    String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
    if (os.contains("mac")) {
      return "macos";
    }
    if (os.contains("linux")) {
      if (arch.equals("amd64") || arch.equals("x86_64")) {
        return "linux-x64";
      }
      if (arch.equals("aarch64") || arch.equals("arm64")) {
        return "linux-arm64";
      }
    }
    throw new UnsupportedOperationException(
        "async-profiler has no native library for os.name=" + os + " os.arch=" + arch
            + "; supported: linux-x64, linux-arm64, macos");
  }

  /**
   * Extracts (if not yet done) and returns the native library for this machine.
   *
   * @throws UnsupportedOperationException on a platform async-profiler does not support
   * @throws UncheckedIOException if the cache folder cannot be written
   */
  public static Path extract() {
    String platform = platform();
    String resource = platform + "/libasyncProfiler.so";
    Path cache = Path.of(System.getProperty("weir.profiler.cache",
        Path.of(System.getProperty("user.home"), ".cache", "weir").toString()));
    Path target = cache.resolve("async-profiler-" + version()).resolve(platform).resolve("libasyncProfiler.so");
    if (Files.isRegularFile(target)) {
      return target;
    }
    try (InputStream in = AsyncProfilerLibrary.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("the async-profiler jar has no " + resource);
      }
      Files.createDirectories(target.getParent());
      Path tmp = Files.createTempFile(target.getParent(), "libasyncProfiler", ".tmp");
      Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      return target;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot extract " + resource + " to " + target, e);
    }
  }
}
