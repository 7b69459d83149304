package dev.weir.runner.checkpoint;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * One run of {@link CrashablePipelineMain} (or another test main) in a child JVM, seen from a crash test: its output
 * lines (standard output and error merged, kept in memory and appended to a log file), waits for
 * a line or for its end, and {@link #kill()} (SIGKILL on Linux: {@code destroyForcibly}).
 *
 * <p>Threading: one daemon thread per child reads its output; the other methods are called by
 * the test thread.
 */
final class ChildJob implements AutoCloseable {
  private final String name;
  private final Process process;
  private final long startNanos = System.nanoTime();
  private final List<String> lines = new ArrayList<>();
  private final List<Long> lineNanos = new ArrayList<>();
  private boolean ended;

  private ChildJob(String name, Process process, Path log) throws IOException {
    this.name = name;
    this.process = process;
    PrintWriter logWriter = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8,
        StandardOpenOption.CREATE, StandardOpenOption.APPEND), true);
    logWriter.println("=== " + name + " (pid " + process.pid() + ")");
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          logWriter.println(line);
          synchronized (this) {
            lines.add(line);
            lineNanos.add(System.nanoTime());
            notifyAll();
          }
        }
      } catch (IOException e) {
        // the child was killed: its pipe broke
      } finally {
        logWriter.close();
        synchronized (this) {
          ended = true;
          notifyAll();
        }
      }
    }, "child-output-" + name);
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts {@link CrashablePipelineMain} with {@code args} in a JVM of this one's class path and
   * {@code -Xmx512m}, appending its output to {@code log}.
   */
  static ChildJob start(String name, Path log, List<String> args) {
    return start(name, log, CrashablePipelineMain.class, args);
  }

  /**
   * Starts {@code main} (a class with a {@code main(String[])}) with {@code args} in a JVM of this
   * one's class path and {@code -Xmx512m}, appending its output to {@code log}.
   */
  static ChildJob start(String name, Path log, Class<?> main, List<String> args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx512m");
    command.add("-XX:+UseSerialGC");
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(main.getName());
    command.addAll(args);
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      return new ChildJob(name, process, log);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + command, e);
    }
  }

  /** Milliseconds since the child was started. */
  long ageMs() {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  /** The child's process id. */
  long pid() {
    return process.pid();
  }

  /** Whether the child process is alive. */
  boolean isAlive() {
    return process.isAlive();
  }

  /** Number of output lines read so far. */
  synchronized int lineCount() {
    return lines.size();
  }

  /** A copy of every output line read so far. */
  synchronized List<String> lines() {
    return new ArrayList<>(lines);
  }

  /** When line {@code i} was read ({@code System.nanoTime()}). */
  synchronized long lineNanos(int i) {
    return lineNanos.get(i);
  }

  /**
   * Waits until an output line at index {@code from} or later matches, the output ends, or
   * {@code deadlineNanos} ({@code System.nanoTime()}) passes.
   *
   * @return the index of the matching line, or -1
   */
  synchronized int awaitLine(int from, Predicate<String> match, long deadlineNanos) throws InterruptedException {
    int i = from;
    while (true) {
      for (; i < lines.size(); i++) {
        if (match.test(lines.get(i))) {
          return i;
        }
      }
      long leftMs = (deadlineNanos - System.nanoTime()) / 1_000_000;
      if (ended || leftMs <= 0) {
        return -1;
      }
      wait(leftMs);
    }
  }

  /** Kills the child with SIGKILL and waits until it is gone (and its output is read). */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      throw new IllegalStateException(name + ": still alive 60 s after SIGKILL");
    }
    awaitOutputEnd();
  }

  /**
   * Sends the child SIGTERM ({@code ProcessHandle.destroy()} on Linux) and waits up to {@code timeoutMs}
   * for it to exit.
   *
   * @return its exit code, or -1 if it was still running after {@code timeoutMs} (then it is killed)
   */
  int terminate(long timeoutMs) throws InterruptedException {
    process.toHandle().destroy(); // not Process.destroy(): that also closes the pipes, losing the child's last lines
    return awaitExit(timeoutMs);
  }

  /**
   * Waits for the child to exit by itself.
   *
   * @return its exit code, or -1 if it was still running after {@code timeoutMs} (then it is killed)
   */
  int awaitExit(long timeoutMs) throws InterruptedException {
    if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
      kill();
      return -1;
    }
    awaitOutputEnd();
    return process.exitValue();
  }

  private synchronized void awaitOutputEnd() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!ended && System.nanoTime() < deadline) {
      wait(100);
    }
  }

  /** The last {@code n} output lines, one per line, for failure messages. */
  synchronized String tail(int n) {
    return name + " (pid " + process.pid() + "), last output lines:\n  "
        + String.join("\n  ", lines.subList(Math.max(0, lines.size() - n), lines.size()));
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      kill();
    }
  }
}
