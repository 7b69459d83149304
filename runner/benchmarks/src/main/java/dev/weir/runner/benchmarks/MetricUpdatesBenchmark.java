package dev.weir.runner.benchmarks;

import dev.weir.runner.metrics.MetricsSwitch;
import java.util.concurrent.TimeUnit;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Distribution;
import org.apache.beam.sdk.metrics.Metrics;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What one element's metric updates cost in a Weir step, as user code makes them: the updates of
 * Beam Nexmark's event monitor and snoop step per event (four counter increments, two
 * distribution updates, through Beam's {@code Metrics.counter}/{@code Metrics.distribution}
 * objects, each resolving the thread's current container) into one step's cells, either
 * runners-core's own cells ({@code cells=WRITE_THROUGH}: atomic adds, compare-and-set and a
 * volatile dirty flag per update; Weir before session 15) or Weir's single-writer buffered cells
 * ({@code cells=BUFFERED}: plain fields, flushed into runners-core's cells once per
 * {@value #ELEMENTS_PER_BUNDLE} elements, as a task's bundle end flushes them).
 *
 * <p>Score: ns per element (six updates), flushes included. Threading: JMH's one benchmark
 * thread, which is also the step's container thread.
 *
 * <pre>{@code
 * java -jar runner/benchmarks/target/benchmarks.jar MetricUpdatesBenchmark -f 2 -wi 5 -i 5
 * }</pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Thread)
public class MetricUpdatesBenchmark {
  static final int ELEMENTS_PER_BUNDLE = 1000;

  private static final Counter ELEMENTS = Metrics.counter("Monitor", "elements");
  private static final Counter BYTES = Metrics.counter("Monitor", "bytes");
  private static final Distribution PROCESSING_TIME = Metrics.distribution("Monitor", "startTime");
  private static final Distribution TIMESTAMPS = Metrics.distribution("Monitor", "startTimestamp");
  private static final Counter EVENTS = Metrics.counter("Snoop", "events");
  private static final Counter BIDS = Metrics.counter("Snoop", "bids");

  /** How the step keeps its cells. */
  public enum Cells { WRITE_THROUGH, BUFFERED }

  @Param({"WRITE_THROUGH", "BUFFERED"})
  public Cells cells;

  private MetricsSwitch metricsSwitch;
  private MetricsSwitch.StepCells stepCells;
  private long element;

  @Setup(Level.Trial)
  public void install() {
    metricsSwitch = new MetricsSwitch(new MetricsContainerImpl("unscoped"));
    stepCells = new MetricsSwitch.StepCells(cells == Cells.BUFFERED);
    metricsSwitch.swap(new MetricsContainerImpl("step"), stepCells);
    metricsSwitch.installOnCurrentThread();
  }

  @TearDown(Level.Trial)
  public void uninstall() {
    org.apache.beam.sdk.metrics.MetricsEnvironment.setCurrentContainer(null);
  }

  /** One element's six updates; every {@value #ELEMENTS_PER_BUNDLE}th element ends a bundle. */
  @Benchmark
  public void updatesOfOneElement() {
    long e = ++element;
    ELEMENTS.inc();
    BYTES.inc(100 + (e & 7));
    PROCESSING_TIME.update(e);
    TIMESTAMPS.update(e >> 1);
    EVENTS.inc();
    BIDS.inc();
    if (e % ELEMENTS_PER_BUNDLE == 0) {
      stepCells.flush();
    }
  }
}
