// Role: the child JVM of `bin/weir latency`: one Nexmark query fed Nexmark's events at a fixed
// rate, stamped with their emission time (PacedEvents), and a probe after the query
// that records how late each result is against the event time it closes. Writes what it measured
// as one JSON document.
// Threading: the main thread builds, runs and waits for the pipeline; the probe runs on the
// runner's threads and records into a concurrent histogram.
package dev.weir.nexmark.harness;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.nexmark.NexmarkConfiguration;
import org.apache.beam.sdk.nexmark.NexmarkOptions;
import org.apache.beam.sdk.nexmark.NexmarkQueryName;
import org.apache.beam.sdk.nexmark.model.KnownSize;
import org.apache.beam.sdk.nexmark.queries.NexmarkQuery;
import org.apache.beam.sdk.nexmark.queries.NexmarkQueryTransform;
import org.apache.beam.sdk.nexmark.queries.Query0;
import org.apache.beam.sdk.nexmark.queries.Query1;
import org.apache.beam.sdk.nexmark.queries.Query11;
import org.apache.beam.sdk.nexmark.queries.Query2;
import org.apache.beam.sdk.nexmark.queries.Query3;
import org.apache.beam.sdk.nexmark.queries.Query4;
import org.apache.beam.sdk.nexmark.queries.Query5;
import org.apache.beam.sdk.nexmark.queries.Query6;
import org.apache.beam.sdk.nexmark.queries.Query7;
import org.apache.beam.sdk.nexmark.queries.Query8;
import org.apache.beam.sdk.nexmark.queries.Query9;
import org.apache.beam.sdk.nexmark.sources.generator.GeneratorConfig;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;

/**
 * {@code LatencyRun --query=N --eventsPerSec=R --seconds=S --skipSeconds=W --out=FILE <pipeline args>}:
 * Nexmark query N (0-9, 11) over R events/s for S seconds, streaming: Nexmark's events from its own
 * generators ({@link PacedEvents}), each stamped with the wall-clock time it was emitted at, the
 * watermark following the wall clock; every other Nexmark setting as Nexmark's defaults or the
 * pipeline arguments give it.
 *
 * <h2>What is measured</h2>
 *
 * A probe after the query takes each result, as Nexmark's own {@code NexmarkQuery} wraps it, and
 * records wall-clock now minus the event time it closes, in ms: for a result in a window (Q5, Q7,
 * Q11, ...) the window's end, so how long after the window closed its result came out; for one in
 * the global window its own event timestamp: for a per-event query (Q0-Q2) how long after its
 * event was emitted it came out, for a join or a stateful query (Q3) after the event that
 * completed it. Only results emitted between W
 * seconds after the pipeline started (warm-up, JIT) and S seconds after it (before the source
 * ends and the end of input fires the windows still open) are recorded. Clock:
 * {@link System#currentTimeMillis()}, one machine for source and probe.
 *
 * <p>Written: recorded results, p50, p90, p99, p99.9, max and mean of how late (ms), results
 * emitted before their own timestamp (early panes; not recorded), all results, wall time, CPU ms
 * per event. A runner that cannot keep up with R shows it as a lateness that grows over the run:
 * p99 and max far above p50.
 *
 * <p>Exit status 0 when the pipeline finished and recorded at least one result, 1 otherwise, 2 on
 * bad arguments.
 */
public final class LatencyRun {
  /** How late each recorded result was, ms; up to an hour at 3 significant digits. */
  static final Histogram LATE_MS = new ConcurrentHistogram(3_600_000L, 3);
  static final AtomicLong RESULTS = new AtomicLong();
  /** Results within the recording window emitted before their own timestamp (not recorded in {@link #LATE_MS}). */
  static final AtomicLong EARLY = new AtomicLong();
  /** Wall-clock window in which results are recorded, epoch ms; written before the pipeline runs. */
  static volatile long recordFromMs = Long.MAX_VALUE;
  static volatile long recordUntilMs = Long.MIN_VALUE;

  private LatencyRun() {}

  public static void main(String[] args) throws Exception {
    List<String> pipelineArgs = new ArrayList<>();
    Map<String, String> own = BenchRun.split(args, List.of("query", "eventsPerSec", "seconds", "skipSeconds", "out"),
        pipelineArgs);
    for (String required : List.of("query", "eventsPerSec", "seconds", "out")) {
      if (!own.containsKey(required)) {
        System.err.println("usage: LatencyRun --query=N --eventsPerSec=R --seconds=S [--skipSeconds=W] --out=FILE "
            + "<pipeline args>; missing --" + required);
        System.exit(2);
      }
    }
    int query = Integer.parseInt(own.get("query"));
    int rate = Integer.parseInt(own.get("eventsPerSec"));
    int seconds = Integer.parseInt(own.get("seconds"));
    int skip = Integer.parseInt(own.getOrDefault("skipSeconds", String.valueOf(seconds / 3)));
    Path out = Path.of(own.get("out"));
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("query", query);
    doc.put("eventsPerSec", rate);
    doc.put("seconds", seconds);
    doc.put("skipSeconds", skip);
    doc.put("pipelineArgs", pipelineArgs);
    if (rate < 1 || seconds < 1 || skip < 0 || skip >= seconds) {
      System.err.println("LatencyRun: need --eventsPerSec >= 1, --seconds >= 1 and 0 <= --skipSeconds < --seconds");
      System.exit(2);
    }
    int status;
    try {
      status = run(query, rate, seconds, skip, pipelineArgs, doc);
    } catch (IllegalArgumentException e) {
      System.err.println("LatencyRun: " + e.getMessage());
      System.exit(2);
      return;
    } catch (RuntimeException e) {
      doc.put("error", String.valueOf(e));
      e.printStackTrace();
      status = 1;
    }
    BenchRun.write(out, doc);
    System.exit(status);
  }

  private static int run(int query, int rate, int seconds, int skip, List<String> pipelineArgs,
      Map<String, Object> doc) {
    NexmarkOptions options = PipelineOptionsFactory.fromArgs(pipelineArgs.toArray(new String[0]))
        .as(NexmarkOptions.class);
    options.setStreaming(true);
    NexmarkConfiguration config = NexmarkConfiguration.DEFAULT.copy();
    config.overrideFromOptions(options);
    config.query = NexmarkQueryName.fromNumber(query);
    config.numEvents = (long) rate * seconds;
    GeneratorConfig events = new GeneratorConfig(config, System.currentTimeMillis(), 0, config.numEvents, 0);
    Pipeline p = Pipeline.create(options);
    p.apply("Events", Read.from(new PacedEvents(events, config.numEvents, rate)))
        .apply("Query" + query, new NexmarkQuery<>(config, transform(query, config)))
        .apply("Latency", ParDo.of(new Probe<>()));
    long cpu0 = BenchRun.processCpuNs();
    long startMs = System.currentTimeMillis();
    recordFromMs = startMs + skip * 1000L;
    recordUntilMs = startMs + seconds * 1000L;
    PipelineResult result = p.run();
    PipelineResult.State state = result.waitUntilFinish(Duration.standardSeconds(seconds + 300L));
    long wallMs = System.currentTimeMillis() - startMs;
    if (state == null || !state.isTerminal()) {
      try {
        result.cancel();
      } catch (java.io.IOException | UnsupportedOperationException e) {
        // the JVM exits next anyway
      }
      doc.put("error", "the pipeline did not finish within " + (seconds + 300) + " s (state " + state + ")");
    }
    doc.put("runnerClass", options.getRunner().getSimpleName());
    doc.put("wallSec", wallMs / 1e3);
    doc.put("cpuMsPerEvent", (BenchRun.processCpuNs() - cpu0) / 1e6 / config.numEvents);
    doc.put("results", RESULTS.get());
    Histogram late = LATE_MS.copy();
    doc.put("recorded", late.getTotalCount());
    doc.put("early", EARLY.get());
    if (late.getTotalCount() > 0) {
      doc.put("p50Ms", late.getValueAtPercentile(50));
      doc.put("p90Ms", late.getValueAtPercentile(90));
      doc.put("p99Ms", late.getValueAtPercentile(99));
      doc.put("p999Ms", late.getValueAtPercentile(99.9));
      doc.put("maxMs", late.getMaxValue());
      doc.put("meanMs", late.getMean());
    } else if (!doc.containsKey("error")) {
      doc.put("error", "no result was emitted between " + skip + " s and " + seconds + " s");
    }
    return doc.containsKey("error") ? 1 : 0;
  }

  /** Nexmark's transform of query {@code n}. */
  static NexmarkQueryTransform<? extends KnownSize> transform(int n, NexmarkConfiguration config) {
    return switch (n) {
      case 0 -> new Query0();
      case 1 -> new Query1(config);
      case 2 -> new Query2(config);
      case 3 -> new Query3(config);
      case 4 -> new Query4(config);
      case 5 -> new Query5(config);
      case 6 -> new Query6(config);
      case 7 -> new Query7(config);
      case 8 -> new Query8(config);
      case 9 -> new Query9(config);
      case 11 -> new Query11(config);
      default -> throw new IllegalArgumentException("--query=" + n + " is not supported in latency runs; allowed: "
          + "0-9, 11 (Q10 writes files; Q12's results close no event time, they fire on processing time; "
          + "Q13 and Q14 need side-input setup)");
    };
  }

  /**
   * Records how late each result is, ms, if emitted within the recording window: against the end
   * of the result's window where it is in one (Q7's selected bids keep their own timestamps, but
   * their window's end is the event time they close), else against its timestamp.
   */
  static final class Probe<T extends KnownSize> extends DoFn<TimestampedValue<T>, Void> {
    @ProcessElement
    public void process(@Element TimestampedValue<T> result, BoundedWindow window) {
      long now = System.currentTimeMillis();
      RESULTS.incrementAndGet();
      if (now >= recordFromMs && now < recordUntilMs) {
        long closes = window instanceof GlobalWindow ? result.getTimestamp().getMillis()
            : window.maxTimestamp().getMillis() + 1;
        long late = now - closes;
        if (late < 0) {
          EARLY.incrementAndGet(); // before the event time it closes: an early pane, not a lateness
        } else {
          LATE_MS.recordValue(Math.min(late, 3_600_000L));
        }
      }
    }
  }
}
