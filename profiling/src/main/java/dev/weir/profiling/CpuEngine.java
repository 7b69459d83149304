package dev.weir.profiling;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import one.profiler.AsyncProfiler;

/**
 * async-profiler's CPU sampling engines, best first (see async-profiler's
 * {@code docs/CpuSamplingEngines.md}): {@code cpu} uses perf_events (the most accurate, and the
 * only one with kernel frames) but containers and {@code perf_event_paranoid} often forbid it;
 * {@code ctimer} uses per-thread CPU-time timers and needs no perf_events; {@code itimer} is the
 * portable fallback.
 */
public enum CpuEngine {
  CPU("cpu"),
  CTIMER("ctimer"),
  ITIMER("itimer");

  private final String event;

  CpuEngine(String event) {
    this.event = event;
  }

  /** The async-profiler event name. */
  public String event() {
    return event;
  }

  /**
   * The best engine this machine allows: each is started and stopped once in this JVM through the
   * Java API (async-profiler's {@code start} fails when an engine is unavailable), so the answer
   * reflects the kernel settings and seccomp rules in force. Thread-safe but slow (milliseconds);
   * call once per process.
   *
   * @param library the native library ({@link AsyncProfilerLibrary#extract()})
   * @return the first engine that starts, and why the better ones did not
   * @throws IllegalStateException if none starts
   */
  public static Probe probe(Path library) {
    AsyncProfiler profiler = AsyncProfiler.getInstance(library.toString());
    List<String> rejected = new ArrayList<>();
    for (CpuEngine engine : values()) {
      Path out = null;
      try {
        out = Files.createTempFile("weir-engine-probe", ".txt");
        profiler.execute("start,event=" + engine.event + ",file=" + out);
        profiler.execute("stop,file=" + out);
        return new Probe(engine, List.copyOf(rejected));
      } catch (IllegalStateException | IllegalArgumentException | IOException e) {
        rejected.add(engine.event + ": " + e.getMessage());
      } finally {
        if (out != null) {
          try {
            Files.deleteIfExists(out);
          } catch (IOException ignored) {
            // a temp file left behind is harmless
          }
        }
      }
    }
    throw new IllegalStateException("no async-profiler CPU engine works here: " + rejected);
  }

  /**
   * The result of {@link #probe}.
   *
   * @param engine the engine chosen
   * @param rejected why each better engine was rejected, e.g. {@code cpu: Perf events unavailable}
   */
  public record Probe(CpuEngine engine, List<String> rejected) {}

  /**
   * Parses a user's choice.
   *
   * @param option the option name, for the error message
   * @param value {@code cpu}, {@code ctimer} or {@code itimer}
   * @throws IllegalArgumentException naming the option and the allowed values
   */
  public static CpuEngine parse(String option, String value) {
    for (CpuEngine e : values()) {
      if (e.event.equalsIgnoreCase(value == null ? "" : value.trim())) {
        return e;
      }
    }
    throw new IllegalArgumentException("--" + option + "=" + value + " is not a CPU engine; allowed values: "
        + Arrays.stream(values()).map(CpuEngine::event).collect(Collectors.joining(", ")) + " (or auto)");
  }

  @Override
  public String toString() {
    return event.toLowerCase(Locale.ROOT);
  }
}
