// Role: one planned benchmark run (runner x query x mode x sweep values x repeat index).
// Threading: immutable record; safe from any thread.
package dev.weir.nexmark.driver;

import java.util.Map;

/**
 * One planned run. {@code events} is Nexmark's numEvents; {@code sweep} maps option names to the
 * values of this run (empty without --sweep); {@code repeat} counts from 1; {@code warmupEvents}
 * is the event count of the first warm-up pass the child JVM runs before the measured one (0 =
 * none), {@code warmupSeconds} the least wall time of all its warm-up passes together (more
 * passes run until it is reached; the harness's {@code WarmupPass}), and {@code warmupMaxSeconds}
 * the most they may take while more passes wait for the JIT compilers to settle (at or below
 * {@code warmupSeconds}: no such passes); {@code measuredSeconds} is the least wall time of its
 * measured passes together (the measured pass repeats over the same events until it is reached;
 * the harness's {@code MeasuredPasses}; 0 = one pass); {@code checkEvents} is the event count of a
 * check pass run before the warm-up, whose result count is compared with the reference runner's
 * run over as many events (the harness's {@code CheckPass}; 0 = none).
 */
public record RunSpec(RunnerKind runner, int query, String mode, long events,
                      Map<String, String> sweep, int repeat, long warmupEvents, long warmupSeconds,
                      long warmupMaxSeconds, long measuredSeconds, long checkEvents) {
  public RunSpec {
    sweep = Map.copyOf(sweep);
    if (checkEvents < 0) {
      throw new IllegalArgumentException("checkEvents must be >= 0, not " + checkEvents);
    }
    if (warmupEvents < 0) {
      throw new IllegalArgumentException("warmupEvents must be >= 0, not " + warmupEvents);
    }
    if (warmupSeconds < 0) {
      throw new IllegalArgumentException("warmupSeconds must be >= 0, not " + warmupSeconds);
    }
    if (warmupMaxSeconds < 0) {
      throw new IllegalArgumentException("warmupMaxSeconds must be >= 0, not " + warmupMaxSeconds);
    }
    if (measuredSeconds < 0) {
      throw new IllegalArgumentException("measuredSeconds must be >= 0, not " + measuredSeconds);
    }
  }

  /** A run without a check pass. */
  public RunSpec(RunnerKind runner, int query, String mode, long events, Map<String, String> sweep, int repeat,
      long warmupEvents, long warmupSeconds, long warmupMaxSeconds, long measuredSeconds) {
    this(runner, query, mode, events, sweep, repeat, warmupEvents, warmupSeconds, warmupMaxSeconds,
        measuredSeconds, 0);
  }

  /** The same run with a check pass over {@code events} events (0 = none). */
  public RunSpec withCheckEvents(long events) {
    return new RunSpec(runner, query, mode, this.events, sweep, repeat, warmupEvents, warmupSeconds,
        warmupMaxSeconds, measuredSeconds, events);
  }

  /** A run whose warm-up does not wait for the compilers to settle, with one measured pass. */
  public RunSpec(RunnerKind runner, int query, String mode, long events, Map<String, String> sweep, int repeat,
      long warmupEvents, long warmupSeconds) {
    this(runner, query, mode, events, sweep, repeat, warmupEvents, warmupSeconds, 0, 0);
  }

  /** A run without a warm-up pass. */
  public RunSpec(RunnerKind runner, int query, String mode, long events, Map<String, String> sweep, int repeat) {
    this(runner, query, mode, events, sweep, repeat, 0, 0);
  }

  /** Whether the run is in streaming mode. */
  public boolean streaming() {
    return "streaming".equals(mode);
  }

  /** A file-system-safe name, unique within one suite run. */
  public String dirName(int index) {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format("%03d-%s-q%d-%s", index, runner.id(), query, mode));
    sweep.entrySet().stream().sorted(Map.Entry.comparingByKey())
        .forEach(e -> sb.append('-').append(e.getKey()).append('=').append(e.getValue()));
    if (repeat > 1) {
      sb.append("-r").append(repeat);
    }
    return sb.toString().replaceAll("[^A-Za-z0-9=._-]", "_");
  }

  /** Sweep values as "a=1,b=2" (sorted), or "" without a sweep. */
  public String sweepLabel() {
    StringBuilder sb = new StringBuilder();
    sweep.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
      if (sb.length() > 0) {
        sb.append(',');
      }
      sb.append(e.getKey()).append('=').append(e.getValue());
    });
    return sb.toString();
  }
}
