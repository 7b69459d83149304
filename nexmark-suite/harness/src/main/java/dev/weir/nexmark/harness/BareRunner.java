// Role: the `bare` pseudo-runner, the limit any runner can approach on the stateless queries
// Q0-Q2: Nexmark's own source (its generator behind its reader) plus the per-element work of
// Nexmark's pipeline (its monitor, snoop, stamp, format and devnull steps around the query's own
// work; PipelineWork) in a plain loop, no runner, no Beam pipeline. Writes a perf JSON in the
// shape of Nexmark's --perfFilename.
// Threading: the generator config is split into one part per thread (one thread per core by
// default); each worker owns its reader (or Generator) and counters; the main thread joins them
// and sums.
package dev.weir.nexmark.harness;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.nexmark.NexmarkConfiguration;
import org.apache.beam.sdk.nexmark.model.AuctionPrice;
import org.apache.beam.sdk.nexmark.model.Bid;
import org.apache.beam.sdk.nexmark.model.Event;
import org.apache.beam.sdk.nexmark.model.KnownSize;
import org.apache.beam.sdk.nexmark.sources.UnboundedEventSource;
import org.apache.beam.sdk.nexmark.sources.generator.Generator;
import org.apache.beam.sdk.nexmark.sources.generator.GeneratorConfig;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.values.TimestampedValue;

/**
 * Runner-less limit for Nexmark Q0-Q2. Arguments: {@code --query=0|1|2 --numEvents=N
 * [--threads=T] [--warmupEvents=W [--warmupSeconds=S] [--warmupMaxSeconds=M]] [--measuredSeconds=D]
 * [--work=pipeline|query] [--perfFilename=F]}.
 * Reports events per second (events generated and processed / wall seconds of the measured pass)
 * and the number of results; with {@code --warmupEvents=W} (W > 0; default 0) warm-up passes of at
 * least W events and S seconds in all (then, up to M seconds, until the JIT compilers settle) run
 * first, as the harness runs them for every runner
 * ({@link WarmupPass}); the measured pass runs again until the measured passes took D seconds
 * ({@link MeasuredPasses}: one perf file per pass), and CPU, GC and peak-RSS figures
 * cover the measured passes. {@code --work=pipeline} (the default) reads the events through
 * Nexmark's source reader ({@link #work}) and does per element what Nexmark's pipeline does around
 * the query ({@link PipelineWork}: monitors, snoop, stamp, a JSON string per result, devnull), so
 * the limit carries the same work a runner is given; {@code --work=query}
 * does only the query's own work (Q0's coder round trip, Q1's conversion, Q2's filter), the
 * lighter limit of earlier results. Q0's round trip uses the coder Nexmark's pipeline gives
 * Query0's input on every runner ({@link #pipelineEventCoder}).
 */
public final class BareRunner {
  private BareRunner() {}

  public static void main(String[] args) throws Exception {
    long start = System.nanoTime();
    Map<String, String> opts = parse(args);
    int query = Integer.parseInt(opts.getOrDefault("query", "0"));
    long numEvents = Long.parseLong(opts.getOrDefault("numEvents", "100000"));
    int threads = Integer.parseInt(
        opts.getOrDefault("threads", String.valueOf(Runtime.getRuntime().availableProcessors())));
    long warmupEvents;
    long warmupSeconds;
    long warmupMaxSeconds;
    long measuredSeconds;
    try {
      measuredSeconds = MeasuredPasses.parseSeconds(opts.getOrDefault("measuredSeconds", "0"));
      warmupEvents = WarmupPass.parseEvents(opts.getOrDefault("warmupEvents", "0"));
      warmupSeconds = WarmupPass.parseSeconds(opts.getOrDefault("warmupSeconds", "0"));
      warmupMaxSeconds = WarmupPass.parseMaxSeconds(opts.getOrDefault("warmupMaxSeconds", "0"));
    } catch (IllegalArgumentException e) {
      System.err.println("ERROR BareRunner: " + e.getMessage());
      ProcessFacts.writeIfRequested((System.nanoTime() - start) / 1e9, e.getMessage());
      System.exit(2);
      return;
    }
    String work = opts.getOrDefault("work", "pipeline");
    if (!work.equals("pipeline") && !work.equals("query")) {
      String msg = "--work=" + work + " is not a bare work mode; allowed values: pipeline, query";
      System.err.println("ERROR BareRunner: " + msg);
      ProcessFacts.writeIfRequested((System.nanoTime() - start) / 1e9, msg);
      System.exit(2);
    }
    boolean pipeline = work.equals("pipeline");
    String perfFile = opts.get("perfFilename");
    if (query < 0 || query > 2) {
      String msg = "bare runner supports queries 0-2 only, not " + query;
      System.err.println("ERROR BareRunner: " + msg);
      ProcessFacts.writeIfRequested((System.nanoTime() - start) / 1e9, msg);
      System.exit(2);
    }
    NexmarkConfiguration config = NexmarkConfiguration.DEFAULT.copy();
    config.numEvents = numEvents;
    WarmupPass.Done warmup = WarmupPass.Done.NONE;
    if (warmupEvents > 0) {
      warmup = WarmupPass.runPasses(warmupEvents, warmupSeconds, warmupMaxSeconds, (pass, events) -> {
        NexmarkConfiguration warm = config.copy();
        warm.numEvents = events;
        run(warm, query, threads, pipeline);
      });
      ProcessFacts.startMeasuredPass();
    }
    long warmedEvents = warmup.events();
    List<PassStats> measured = MeasuredPasses.runPasses(measuredSeconds, numEvents, pass -> {
      long t0 = System.nanoTime();
      long[] clock = new long[2];
      long results = run(config, query, threads, pipeline, clock);
      double runtimeSec = runtimeSec(clock, (System.nanoTime() - t0) / 1e9);
      System.out.printf("BareRunner: query %d, %d events, %d threads, warm-up %d events, work %s, measured pass %d: "
          + "%.3f s, %.0f events/s, %d results%n", query, numEvents, threads, warmedEvents, work, pass,
          runtimeSec, numEvents / runtimeSec, results);
      if (perfFile != null) {
        writePerf(MeasuredPasses.perfFilename(perfFile, pass), numEvents, results, runtimeSec);
      }
    });
    Map<String, Object> extra = new LinkedHashMap<>();
    extra.put("bareThreads", threads);
    extra.put("warmupEvents", warmup.events());
    extra.put("warmupPasses", warmup.passes());
    extra.put("warmupSec", warmup.seconds());
    extra.put("warmupPassStats", warmup.each());
    extra.put("measuredPasses", measured.size());
    extra.put("measuredPassStats", measured);
    extra.put("bareWork", work);
    ProcessFacts.writeIfRequested((System.nanoTime() - start) / 1e9, null, extra);
    System.exit(0);
  }

  /** Writes one measured pass's perf JSON in the shape of Nexmark's (the fields the driver reads). */
  static void writePerf(String file, long numEvents, long results, double runtimeSec) throws IOException {
    Map<String, Object> perf = new LinkedHashMap<>();
    perf.put("runtimeSec", runtimeSec);
    perf.put("eventsPerSec", numEvents / runtimeSec);
    perf.put("eventBytesPerSec", -1.0);
    perf.put("resultsPerSec", results / runtimeSec);
    perf.put("resultBytesPerSec", -1.0);
    perf.put("startupDelaySec", 0.0);
    perf.put("processingDelaySec", 0.0);
    perf.put("numEvents", numEvents);
    perf.put("numResults", results);
    perf.put("errors", List.of());
    perf.put("snapshots", null);
    perf.put("shutdownDelaySec", 0.0);
    perf.put("timeDilation", 0.0);
    perf.put("jobId", null);
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(new File(file), perf);
  }

  /**
   * A measured pass's runtime, s, on the clock Nexmark times a runner with: from the first event's
   * wall-clock read to the later of the last event's and the last result's ({@code clock}, epoch ms,
   * as {@link #run} fills it; Nexmark's {@code NexmarkLauncher} takes the event monitor's least
   * {@code processingTime} and the greater of the event and result monitors' greatest), so that
   * thread start-up and joins count for bare as a pipeline's set-up and teardown count for a
   * runner: not at all. Issue 42: bare timed over its whole pass put Weir at 81/65/57% of it on
   * Q0/Q1/Q2, where on one clock it was at 77/60/48%. Falls back to {@code wallSec} without the pipeline's
   * work (no clock reads) or when the clock saw less than a millisecond.
   */
  static double runtimeSec(long[] clock, double wallSec) {
    long ms = clock[1] - clock[0];
    return clock[0] == Long.MAX_VALUE || clock[1] == Long.MIN_VALUE || ms <= 0 ? wallSec : ms / 1e3;
  }

  /** Generates {@code config.numEvents} events over {@code threads} threads; returns the result count. */
  static long run(NexmarkConfiguration config, int query, int threads, boolean pipeline)
      throws InterruptedException {
    return run(config, query, threads, pipeline, new long[2]);
  }

  /**
   * As {@link #run(NexmarkConfiguration, int, int, boolean)}, and fills {@code clock} with the
   * first event's wall-clock read and the last event's or result's over all threads, epoch ms
   * ({@link Long#MAX_VALUE} and {@link Long#MIN_VALUE} without the pipeline's work).
   */
  static long run(NexmarkConfiguration config, int query, int threads, boolean pipeline, long[] clock)
      throws InterruptedException {
    GeneratorConfig whole = new GeneratorConfig(config, System.currentTimeMillis(), 0, config.numEvents, 0);
    List<GeneratorConfig> parts = whole.split(threads);
    long[] counts = new long[parts.size()];
    long[][] clocks = new long[parts.size()][2];
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> workers = new ArrayList<>();
    for (int i = 0; i < parts.size(); i++) {
      final int idx = i;
      final GeneratorConfig part = parts.get(i);
      Thread t = new Thread(() -> {
        try {
          counts[idx] = work(part, query, config.auctionSkip, pipeline, clocks[idx]);
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "bare-" + i);
      workers.add(t);
      t.start();
    }
    for (Thread t : workers) {
      t.join();
    }
    if (failure.get() != null) {
      throw new IllegalStateException("bare worker failed", failure.get());
    }
    long sum = 0;
    clock[0] = Long.MAX_VALUE;
    clock[1] = Long.MIN_VALUE;
    for (int i = 0; i < counts.length; i++) {
      sum += counts[i];
      clock[0] = Math.min(clock[0], clocks[i][0]);
      clock[1] = Math.max(clock[1], clocks[i][1]);
    }
    return sum;
  }

  /**
   * One worker's loop over its part of the events: read, do the query's per-element work (and with
   * {@code pipeline}, the work of Nexmark's pipeline around it), count the results.
   *
   * <p>With {@code pipeline} the events come through Nexmark's own source, as in the pipeline every
   * runner is given: an {@link UnboundedEventSource} over the part (not rate-limited, no watermark
   * hold-back: the benchmark's settings) read with its reader's {@code start}/{@code advance},
   * {@code getCurrent} and {@code getCurrentTimestamp}. The reader is Nexmark's code and does work
   * per event besides the generator's (a wall-clock read, the watermark, a timestamped value), work
   * every runner does and a limit without it left out. What a runner adds around the
   * reader (watermark polls, checkpoint marks, splits) stays the runner's cost. Without
   * {@code pipeline} the generator is called directly, as in earlier results.
   */
  static long work(GeneratorConfig part, int query, long auctionSkip, boolean pipeline)
      throws IOException {
    return work(part, query, auctionSkip, pipeline, new long[2]);
  }

  /** As {@link #work(GeneratorConfig, int, long, boolean)}, and fills {@code clock} as {@link #run} does, for this part. */
  static long work(GeneratorConfig part, int query, long auctionSkip, boolean pipeline, long[] clock)
      throws IOException {
    Worker worker = new Worker(query, auctionSkip, pipeline);
    clock[0] = Long.MAX_VALUE;
    clock[1] = Long.MIN_VALUE;
    if (pipeline) {
      UnboundedSource.UnboundedReader<Event> reader =
          new UnboundedEventSource(part, 1, 0, false).createReader(PipelineOptionsFactory.create(), null);
      for (boolean more = reader.start(); more; more = reader.advance()) {
        worker.accept(reader.getCurrent(), reader.getCurrentTimestamp().getMillis());
      }
      reader.close();
      clock[0] = worker.around.firstEventMs();
      clock[1] = worker.around.lastMs();
    } else {
      Generator gen = new Generator(part);
      while (gen.hasNext()) {
        TimestampedValue<Event> next = gen.next();
        worker.accept(next.getValue(), next.getTimestamp().getMillis());
      }
    }
    return worker.finish();
  }

  /** One worker thread's per-event work and counts. Not thread-safe. */
  private static final class Worker {
    private final int query;
    private final long auctionSkip;
    private final Coder<Event> eventCoder;
    private final PipelineWork around;
    private long results;
    private long sink; // keeps the JIT from discarding the work

    Worker(int query, long auctionSkip, boolean pipeline) {
      this.query = query;
      this.auctionSkip = auctionSkip;
      this.eventCoder = query == 0 ? pipelineEventCoder() : null;
      this.around = pipeline ? new PipelineWork() : null;
    }

    void accept(Event e, long timestampMs) throws IOException {
      if (around != null) {
        around.beforeQuery(e, timestampMs);
      }
      KnownSize result = null;
      switch (query) {
        case 0: {
          // As Query0's Serialize step: encode with the OUTER context, count bytes, decode.
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          eventCoder.encode(e, out, Coder.Context.OUTER);
          byte[] bytes = out.toByteArray();
          sink += bytes.length;
          Event back = eventCoder.decode(new ByteArrayInputStream(bytes), Coder.Context.OUTER);
          sink += back.hashCode();
          result = back;
          break;
        }
        case 1: {
          if (e.bid != null) {
            Bid b = e.bid;
            Bid euro = new Bid(b.auction, b.bidder, (b.price * 89) / 100, b.dateTime, b.extra);
            sink += euro.price;
            result = euro;
          }
          break;
        }
        default: {
          if (e.bid != null && e.bid.auction % auctionSkip == 0) {
            AuctionPrice ap = new AuctionPrice(e.bid.auction, e.bid.price);
            sink += ap.price;
            result = ap;
          }
          break;
        }
      }
      if (result != null) {
        results++;
        if (around != null) {
          around.afterQuery(result, timestampMs);
        }
      }
    }

    /** The number of results; uses the work's digest so that none of it is dead code. */
    long finish() {
      if (around != null) {
        sink += around.digest();
      }
      if (sink == 42) {
        System.out.print(""); // practically never; a use of sink
      }
      return results;
    }
  }

  /**
   * The coder of the events Query0 round-trips in Nexmark's pipeline: Query0 encodes with its
   * input's coder, and that PCollection's coder is inferred, and since {@link Event} carries
   * {@code @DefaultSchema(JavaFieldSchema.class)} inference picks the schema coder (a Row
   * conversion per element) on every runner, not the hand-written {@code Event.CODER}. Profiles of
   * Weir's Q0 show {@code SchemaCoder.encode}/{@code decode} under {@code Query0$1.processElement}.
   *
   * @throws IllegalStateException if Beam finds no schema for {@link Event}
   */
  static Coder<Event> pipelineEventCoder() {
    try {
      return org.apache.beam.sdk.schemas.SchemaRegistry.createDefault().getSchemaCoder(Event.class);
    } catch (org.apache.beam.sdk.schemas.NoSuchSchemaException ex) {
      throw new IllegalStateException("Beam found no schema for Nexmark's Event; Q0's coder is unknown", ex);
    }
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String a : args) {
      if (a.startsWith("--") && a.contains("=")) {
        int eq = a.indexOf('=');
        m.put(a.substring(2, eq), a.substring(eq + 1));
      }
    }
    return m;
  }
}
