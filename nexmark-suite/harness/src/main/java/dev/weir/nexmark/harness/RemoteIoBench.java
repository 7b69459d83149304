// Role: the child JVM of `bin/weir bench remote-io`: one row of the remote-I/O scenario of Samza's
// asynchronous-processing study. Starts a loopback HTTP service whose every answer waits a delay
// drawn uniformly from [--minDelayMs, --maxDelayMs], runs a pipeline whose DoFn makes one blocking
// HTTP call per element (the JDK's HttpClient) on the runner named in the pipeline arguments, and
// writes what it measured as one JSON document.
// Threading: the main thread builds and runs the pipeline; the runner's threads call the service;
// the service answers on its own pool (threads sleep for the delay: enough of them never to be the
// bottleneck, see SERVICE_THREADS).
package dev.weir.nexmark.harness;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;

/**
 * {@code RemoteIoBench --elements=N --out=FILE [--minDelayMs=1] [--maxDelayMs=100] <pipeline args>}:
 * N elements from a bounded {@code GenerateSequence} (split by the runner into its parallelism:
 * the driver asks for 10 partitions), one blocking HTTP GET per element to a loopback service
 * answering after a uniform delay, then a global count, which must equal N.
 *
 * <p>Measured: wall time of {@code run()} to finish; the steady rate, from the service's own
 * completion times: answers 10% to 90% of N over the time between them, so start-up and the tail
 * do not count; the process CPU time over the run per element (the service runs in this JVM too,
 * and is included); the largest number of calls the service saw in flight at once. Also given: the
 * ideal rate of the concurrency the row asked for, {@code calls in flight / mean delay}.
 *
 * <p>Exit status 0 when the count matched, 1 otherwise (the document says why), 2 on bad arguments.
 */
public final class RemoteIoBench {
  /** Service threads: each sleeps through one delay; far above any row's calls in flight. */
  static final int SERVICE_THREADS = 512;

  /** The pipeline's count, set by {@link Record} (the runners here run in this JVM). */
  private static final AtomicLong COUNTED = new AtomicLong(-1);
  /** The service's URL, for the DoFn (in this JVM). */
  private static volatile String serviceUrl;
  private static volatile HttpClient client;

  private RemoteIoBench() {}

  public static void main(String[] args) throws Exception {
    List<String> pipelineArgs = new ArrayList<>();
    Map<String, String> own = BenchRun.split(args, List.of("elements", "out", "minDelayMs", "maxDelayMs", "inFlight", "scenario"), pipelineArgs);
    if (!own.containsKey("elements") || !own.containsKey("out")) {
      System.err.println("usage: RemoteIoBench --elements=N --out=FILE [--minDelayMs=1] [--maxDelayMs=100] "
          + "[--inFlight=C] <pipeline args>");
      System.exit(2);
    }
    long n = Long.parseLong(own.get("elements"));
    long minDelayMs = Long.parseLong(own.getOrDefault("minDelayMs", "1"));
    long maxDelayMs = Long.parseLong(own.getOrDefault("maxDelayMs", "100"));
    int inFlight = Integer.parseInt(own.getOrDefault("inFlight", "0"));
    Path out = Path.of(own.get("out"));

    Service service = Service.start(n, minDelayMs, maxDelayMs);
    serviceUrl = "http://127.0.0.1:" + service.port() + "/call";
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("scenario", "remote-io");
    doc.put("elements", n);
    doc.put("minDelayMs", minDelayMs);
    doc.put("maxDelayMs", maxDelayMs);
    doc.put("pipelineArgs", pipelineArgs);
    int status;
    try {
      status = BenchRun.run(pipelineArgs, n, p -> p.apply(GenerateSequence.from(0).to(n))
          .apply("RemoteCall", ParDo.of(new RemoteCall()))
          .apply(Count.globally())
          .apply(ParDo.of(new Record())), COUNTED, doc);
      doc.put("steadyElementsPerSec", service.steadyRate(0.1, 0.9));
      doc.put("mostInFlight", service.mostInFlight());
      doc.put("meanDelayMs", service.meanDelayMs());
      if (inFlight > 0) {
        doc.put("inFlight", inFlight);
        doc.put("idealElementsPerSec", inFlight / (service.meanDelayMs() / 1000.0));
      }
      doc.put("calls", service.calls());
    } finally {
      service.stop();
    }
    BenchRun.write(out, doc);
    System.exit(status);
  }


  /** One blocking GET per element; outputs the element once the service answered 200. */
  static final class RemoteCall extends DoFn<Long, Long> {
    @Setup
    public void setUp() {
      synchronized (RemoteIoBench.class) {
        if (client == null) {
          client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
              .connectTimeout(Duration.ofSeconds(10)).build();
        }
      }
    }

    @ProcessElement
    public void process(@Element Long x, OutputReceiver<Long> out) throws IOException, InterruptedException {
      HttpRequest request = HttpRequest.newBuilder(URI.create(serviceUrl + "?x=" + x))
          .timeout(Duration.ofSeconds(30)).GET().build();
      HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IOException("the service answered " + response.statusCode() + " for " + x);
      }
      out.output(x);
    }
  }

  /** Records the global count. */
  static final class Record extends DoFn<Long, Void> {
    @ProcessElement
    public void process(@Element Long count) {
      COUNTED.set(count);
    }
  }

  /** The loopback service: answers each call after a uniform delay and keeps each answer's time. */
  private static final class Service {
    private final HttpServer server;
    private final ExecutorService threads;
    private final AtomicLongArray doneNs;
    private final AtomicInteger answered = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger mostInFlight = new AtomicInteger();
    private final AtomicLong delaySumMs = new AtomicLong();

    private Service(HttpServer server, ExecutorService threads, long n) {
      this.server = server;
      this.threads = threads;
      this.doneNs = new AtomicLongArray((int) Math.min(Integer.MAX_VALUE - 8, n + 1));
    }

    static Service start(long n, long minDelayMs, long maxDelayMs) throws IOException {
      // The JDK's server writes headers and body separately; with Nagle's algorithm on, the body
      // waits for the client's delayed ACK of the headers (about 40 ms on Linux loopback), which
      // doubled every call's latency. The service must add nothing to its drawn delay.
      System.setProperty("sun.net.httpserver.nodelay", "true");
      HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
      ExecutorService threads = Executors.newFixedThreadPool(SERVICE_THREADS, r -> {
        Thread t = new Thread(r, "remote-io-service");
        t.setDaemon(true);
        return t;
      });
      Service service = new Service(server, threads, n);
      server.createContext("/call", exchange -> {
        int now = service.inFlight.incrementAndGet();
        service.mostInFlight.accumulateAndGet(now, Math::max);
        long delay = ThreadLocalRandom.current().nextLong(minDelayMs, maxDelayMs + 1);
        try {
          Thread.sleep(delay);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        byte[] body = "ok".getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream os = exchange.getResponseBody()) {
          os.write(body);
        }
        service.inFlight.decrementAndGet();
        service.delaySumMs.addAndGet(delay);
        int i = service.answered.getAndIncrement();
        if (i < service.doneNs.length()) {
          service.doneNs.set(i, System.nanoTime());
        }
      });
      server.setExecutor(threads);
      server.start();
      return service;
    }

    int port() {
      return server.getAddress().getPort();
    }

    long calls() {
      return answered.get();
    }

    int mostInFlight() {
      return mostInFlight.get();
    }

    double meanDelayMs() {
      int n = answered.get();
      return n == 0 ? 0 : (double) delaySumMs.get() / n;
    }

    /** Answers from fraction {@code from} to {@code to} of all answers, per second between their times. */
    double steadyRate(double from, double to) {
      int n = Math.min(answered.get(), doneNs.length());
      if (n < 10) {
        return 0;
      }
      long[] times = new long[n];
      for (int i = 0; i < n; i++) {
        times[i] = doneNs.get(i);
      }
      Arrays.sort(times); // answers finish out of index order by a few ns
      int a = (int) (n * from);
      int b = (int) (n * to) - 1;
      return (b - a) / ((times[b] - times[a]) / 1e9);
    }

    void stop() {
      server.stop(0);
      threads.shutdownNow();
    }
  }
}
