package dev.weir.runner.monitoring;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.metrics.exporter.httpserver.MetricsHandler;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.apache.beam.sdk.annotations.Internal;

/**
 * The opt-in HTTP server of a running job ({@code --metricsHttpPort}, {@code --metricsHttpHost}):
 * read-only, on the JDK's {@link HttpServer}, one daemon thread ({@code weir-monitoring-http}).
 *
 * <ul>
 *   <li>{@code GET /metrics}: the job's metrics for Prometheus ({@link PrometheusMetrics}), written
 *       by client_java's own {@link MetricsHandler} in the format the scraper asks for (Prometheus
 *       text 0.0.4, OpenMetrics 1.0, or protobuf) and filtered by {@code name[]} parameters;
 *   <li>{@code GET /}: the live job page ({@code job.html}, {@code job.js}, Apache ECharts from its
 *       WebJar at {@code /echarts.min.js}); nothing is loaded from the network;
 *   <li>{@code GET /api/job}: the page's data ({@link JobPageData}), JSON.
 * </ul>
 * Any other method gets 405 and any other path 404: nothing here changes the job. Bound to
 * loopback unless a host is given. A scrape reads counters the run loops keep anyway, on this
 * server's thread; it never waits for a run loop.
 *
 * <p>Threading: {@link #start} and {@link #close} from the job's executor (once each); requests are
 * served on the server's own thread, one at a time.
 */
@Internal
public final class MonitoringServer implements AutoCloseable {
  private static final String ECHARTS_PREFIX = "META-INF/resources/webjars/echarts/";

  private final HttpServer server;
  private final ExecutorService executor;

  private MonitoringServer(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /**
   * Binds {@code host:port} and starts serving.
   *
   * @param port 0 for any free port ({@link #port()} tells which), else 1 to 65535
   * @param metrics the job's Prometheus metrics
   * @param pageData the job page's JSON, made afresh per request
   * @throws IllegalStateException if the port is in use or the host cannot be bound, naming both and
   *     the options that chose them
   */
  static MonitoringServer start(String host, int port, MultiCollector metrics, Supplier<byte[]> pageData) {
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(host, port), 16);
    } catch (BindException e) {
      throw new IllegalStateException("--metricsHttpPort=" + port + ": cannot listen on " + host + ":" + port
          + " (" + e.getMessage() + "); the port is in use or not allowed: choose another --metricsHttpPort, "
          + "or 0 for any free port", e);
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("--metricsHttpHost=" + host + " --metricsHttpPort=" + port
          + ": cannot start the monitoring HTTP server (" + e.getMessage() + ")", e);
    }
    PrometheusRegistry registry = new PrometheusRegistry();
    registry.register(metrics);
    server.createContext("/metrics", readOnly(new MetricsHandler(registry)));
    server.createContext("/api/job", readOnly(exchange -> send(exchange, 200, "application/json", pageData.get())));
    server.createContext("/", readOnly(exchange -> {
      switch (exchange.getRequestURI().getPath()) {
        case "/", "/index.html" -> send(exchange, 200, "text/html; charset=utf-8", Page.HTML);
        case "/job.js" -> send(exchange, 200, "text/javascript; charset=utf-8", Page.SCRIPT);
        case "/echarts.min.js" -> send(exchange, 200, "text/javascript; charset=utf-8", Page.ECHARTS);
        default -> send(exchange, 404, "text/plain; charset=utf-8",
            "Not found. This server has /, /metrics and /api/job.\n".getBytes(StandardCharsets.UTF_8));
      }
    }));
    ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
      Thread thread = new Thread(r, "weir-monitoring-http");
      thread.setDaemon(true);
      return thread;
    });
    server.setExecutor(executor);
    server.start();
    return new MonitoringServer(server, executor);
  }

  /** The port the server listens on (the chosen one when started with 0). */
  public int port() {
    return server.getAddress().getPort();
  }

  /** The address it listens on, e.g. {@code http://127.0.0.1:9464/}. */
  public String url() {
    InetSocketAddress address = server.getAddress();
    String host = address.getAddress().getHostAddress();
    return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort() + "/";
  }

  /**
   * Stops listening at once; a request in progress is cut off. Idempotent. (The JDK's
   * {@code HttpServer.stop(n)} waits the full {@code n} seconds for open exchanges whether or not
   * there are any, and this runs as the job ends, before it completes: a grace period would delay
   * every job's completion by that much.)
   */
  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }

  /** The page's files, read from the classpath once per JVM, when the first server serves one. */
  private static final class Page {
    static final byte[] HTML = resource(MonitoringServer.class, "job.html");
    static final byte[] SCRIPT = resource(MonitoringServer.class, "job.js");
    static final byte[] ECHARTS = resource(MonitoringServer.class, ECHARTS_PREFIX + echartsVersion() + "/echarts.min.js");
  }

  /** {@code handler} for GET and HEAD; 405 for any other method. */
  private static HttpHandler readOnly(HttpHandler handler) {
    return exchange -> {
      String method = exchange.getRequestMethod();
      if (!method.equals("GET") && !method.equals("HEAD")) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        send(exchange, 405, "text/plain; charset=utf-8",
            "Read-only: GET or HEAD only.\n".getBytes(StandardCharsets.UTF_8));
        return;
      }
      handler.handle(exchange);
    };
  }

  private static void send(HttpExchange exchange, int status, String contentType, byte[] body) throws IOException {
    try (exchange) {
      exchange.getResponseHeaders().set("Content-Type", contentType);
      exchange.getResponseHeaders().set("Cache-Control", "no-store");
      boolean head = exchange.getRequestMethod().equals("HEAD");
      exchange.sendResponseHeaders(status, head ? -1 : body.length);
      if (!head) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      }
    }
  }

  private static byte[] resource(Class<?> anchor, String name) {
    String path = name.startsWith("META-INF/") ? name : anchor.getPackageName().replace('.', '/') + "/" + name;
    try (InputStream in = anchor.getClassLoader().getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("The job page's resource " + path + " is not on the classpath");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + path, e);
    }
  }

  /** The ECharts WebJar's version, from its Maven metadata. */
  private static String echartsVersion() {
    try (InputStream in = MonitoringServer.class.getClassLoader()
        .getResourceAsStream("META-INF/maven/org.webjars/echarts/pom.properties")) {
      if (in == null) {
        throw new IllegalStateException("Apache ECharts (org.webjars:echarts) is not on the classpath");
      }
      Properties properties = new Properties();
      properties.load(in);
      return properties.getProperty("version");
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the ECharts WebJar's version", e);
    }
  }
}
