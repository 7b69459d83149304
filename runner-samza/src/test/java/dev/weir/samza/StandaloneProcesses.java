// Role: child-JVM plumbing shared by the SAMZA_STANDALONE crash ITs: start one process of a job's
// main with Weir's options, SIGKILL it, wipe its local state; the jobs' line-per-result output.
// Threading: static helpers, called from the test thread.
package dev.weir.samza;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/** Starting, killing and wiping the child processes of a SAMZA_STANDALONE job in an IT. */
final class StandaloneProcesses {
  private StandaloneProcesses() {}

  /**
   * Starts {@code mainClass} in a child JVM (384 MiB heap, serial GC, C1 only: three of them share a
   * 2-core machine) with the test's class path; stdout and stderr appended to {@code log}.
   *
   * @param logLevels extra {@code -Dorg.slf4j.simpleLogger.log.<name>=info} names
   * @param args the main's arguments (then Weir's pipeline options)
   */
  static Process start(Class<?> mainClass, Path log, List<String> logLevels, List<String> args) throws IOException {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.showDateTime=true",
        "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS"));
    for (String name : logLevels) {
      command.add("-Dorg.slf4j.simpleLogger.log." + name + "=info");
    }
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass.getName());
    command.addAll(args);
    return new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
  }

  /**
   * The arguments of a streaming main that reads {@code topic} and writes {@code out-<n>.txt} in
   * {@code dir} ({@code StandaloneCountMain}, {@code ExactlyOnceCrashMain}), as process {@code n} of a
   * SAMZA_STANDALONE job with RocksDB state in {@code state-<n>}: the output file, the broker and
   * the topic, then Weir's options.
   *
   * @param samzaConfig {@code --samzaConfigOverride} entries after the broker's address, starting
   *     with a comma (e.g. {@code ",processor.id=0,job.id=1"})
   */
  static List<String> streamingJobArgs(Path dir, int n, String bootstrap, String topic, int parallelism,
      String jobName, String samzaConfig) {
    return List.of(dir.resolve("out-" + n + ".txt").toString(), bootstrap, topic,
        "--runner=WeirRunner", "--executionEnvironment=SAMZA_STANDALONE", "--streaming=true",
        "--parallelism=" + parallelism, "--jobName=" + jobName, "--stateBackend=rocksdb",
        "--stateDirectory=" + dir.resolve("state-" + n),
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=" + bootstrap + samzaConfig);
  }

  /** SIGKILL (on Linux) and wait for the process to be gone. */
  static void kill(Process process) throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  /** Kills every process still alive; waits for all. */
  static void killAll(Process[] processes) throws InterruptedException {
    for (Process p : processes) {
      if (p != null) {
        p.destroyForcibly();
      }
    }
    for (Process p : processes) {
      if (p != null) {
        p.waitFor();
      }
    }
  }

  /** Deletes {@code root} and everything under it (a process's local state directory). */
  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  private static final java.util.Map<String, java.io.Writer> WRITERS = new java.util.HashMap<>();

  /**
   * Appends {@code line} and a newline to {@code output} and flushes, so that SIGKILL loses no
   * written line; for the child jobs' DoFns (any thread).
   *
   * @throws UncheckedIOException if the file cannot be written
   */
  static void appendLine(String output, String line) {
    synchronized (WRITERS) {
      try {
        java.io.Writer w = WRITERS.get(output);
        if (w == null) {
          w = Files.newBufferedWriter(Path.of(output), java.nio.charset.StandardCharsets.UTF_8,
              java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
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

  /** The whole lines of {@code file} (a line cut by SIGKILL has no newline yet); none if it does not exist. */
  static List<String> wholeLines(Path file) throws IOException {
    if (!Files.exists(file)) {
      return List.of();
    }
    String text = Files.readString(file);
    String whole = text.substring(0, text.lastIndexOf('\n') + 1);
    return whole.isEmpty() ? List.of() : List.of(whole.split("\n"));
  }
}
