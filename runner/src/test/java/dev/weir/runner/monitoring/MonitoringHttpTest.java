package dev.weir.runner.monitoring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.executor.JobExecutor;
import dev.weir.runner.translation.JobPlan;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The monitoring HTTP server of a running streaming job, read as Prometheus and a browser would:
 * {@code /metrics} scraped twice shows events, a watermark and a Beam user counter advancing, in
 * the Prometheus text format (checked by Prometheus' own {@code promtool check metrics} where it is
 * installed: {@code scripts/install-test-tools.sh}; required when {@code WEIR_REQUIRE_PROMTOOL=1}) and
 * in OpenMetrics when asked; {@code /api/job} carries the job graph; nothing but GET and HEAD is
 * served; a port in use fails the start naming the port and the option; without the option nothing
 * listens. Waits poll with a generous deadline; nothing asserts how fast the job runs.
 */
class MonitoringHttpTest {
  private static final long DEADLINE_MS = 60_000;
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir
  Path state;

  @Test
  void scrapesOfARunningStreamingJobShowEventsWatermarksAndUserCountersAdvance() throws Exception {
    String job = "http-test-" + UUID.randomUUID();
    JobExecutor executor = start(job, "--metricsHttpPort=0");
    try {
      String base = executor.monitoring().httpUrl();
      assertThat(base).startsWith("http://127.0.0.1:");

      HttpResponse<String> first = get(base + "metrics", null);
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain; version=0.0.4");
      awaitTrue("events, a watermark and the user counter show", () -> {
        String text = scrape(base);
        return sum(text, "weir_task_events_in_total", "") > 0 && sum(text, "weir_task_input_watermark_seconds", "") > 0
            && sum(text, "weir_user_metric_total", "name=\"counted\"") > 0;
      });
      String before = scrape(base);
      awaitTrue("a later scrape sees them advance", () -> {
        String after = scrape(base);
        return sum(after, "weir_task_events_in_total", "") > sum(before, "weir_task_events_in_total", "")
            && max(after, "weir_task_input_watermark_seconds") > max(before, "weir_task_input_watermark_seconds")
            && sum(after, "weir_user_metric_total", "name=\"counted\"")
                > sum(before, "weir_user_metric_total", "name=\"counted\"");
      });
      String text = scrape(base);
      assertThat(text)
          .contains("# TYPE weir_task_events_in_total counter")
          .contains("weir_run_loop_phase_seconds_total{container=\"0\",job=\"" + job + "\",phase=\"process_envelopes\"}")
          .contains("weir_transform_elements_in_total{job=\"" + job + "\",transform=\"Counted/ParMultiDo(Counted)\"}")
          .contains("# TYPE weir_stream_queued_messages gauge")
          .contains("weir_job_info{job=\"" + job + "\",state_backend=\"rocksdb\"} 1")
          .contains("weir_object_cache_hits_total{");
      assertThat(sum(text, "weir_transform_elements_out_total", "transform=\"Counted/ParMultiDo(Counted)\""))
          .as("the counted transform emits what it takes").isPositive();
      promtoolAccepts(text);

      HttpResponse<String> openMetrics = get(base + "metrics", "application/openmetrics-text; version=1.0.0");
      assertThat(openMetrics.headers().firstValue("Content-Type").orElse("")).startsWith("application/openmetrics-text");
      assertThat(openMetrics.body()).contains("# TYPE weir_task_events_in counter").endsWith("# EOF\n");

      JsonNode page = new ObjectMapper().readTree(get(base + "api/job", null).body());
      assertThat(page.get("job").asText()).isEqualTo(job);
      assertThat(page.get("stages").size()).isGreaterThanOrEqualTo(2);
      assertThat(page.get("streams").get(0).get("kind").asText()).isEqualTo("SHUFFLE");
      assertThat(page.get("stages").get(0).get("transforms").toString()).contains("Counted/ParMultiDo(Counted)");
      assertThat(get(base, null).body()).contains("<script src=\"echarts.min.js\"></script>");
      assertThat(get(base + "echarts.min.js", null).body()).contains("echarts");
      assertThat(get(base + "nothing-here", null).statusCode()).isEqualTo(404);
      HttpResponse<String> post = HTTP.send(HttpRequest.newBuilder(URI.create(base + "metrics"))
          .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(post.statusCode()).as("read-only").isEqualTo(405);

      int port = URI.create(base).getPort();
      String other = "http-busy-" + UUID.randomUUID();
      assertThatThrownBy(() -> start(other, "--metricsHttpPort=" + port))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("--metricsHttpPort=" + port)
          .hasMessageContaining("127.0.0.1:" + port);
    } finally {
      executor.cancel();
    }
  }

  @Test
  void withoutTheOptionNothingListens() throws Exception {
    JobExecutor executor = start("http-off-" + UUID.randomUUID());
    try {
      assertThat(executor.monitoring().httpUrl()).isNull();
    } finally {
      executor.cancel();
    }
  }

  @Test
  void aBadPortOrHostIsRefusedNamingTheOption() {
    assertThatThrownBy(() -> settings("--metricsHttpPort=70000"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--metricsHttpPort=70000").hasMessageContaining("0 (any free port) to 65535");
    assertThatThrownBy(() -> settings("--metricsHttpPort=0", "--metricsHttpHost=no-such-host.invalid"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--metricsHttpHost=no-such-host.invalid");
  }

  private WeirSettings settings(String... extra) {
    String[] args = new String[extra.length + 2];
    args[0] = "--runner=WeirRunner";
    args[1] = "--stateDirectory=" + state;
    System.arraycopy(extra, 0, args, 2, extra.length);
    return WeirSettings.from(PipelineOptionsFactory.fromArgs(args).as(WeirPipelineOptions.class));
  }

  private JobExecutor start(String job, String... extra) {
    return startJob(state, job, extra);
  }

  /**
   * Starts a streaming job on RocksDB in {@code state}, with checkpoints every 500 ms: generated
   * numbers (5,000/s), counted ({@code test:counted}), keyed, windowed, counted per key.
   */
  static JobExecutor startJob(Path state, String job, String... extra) {
    String[] args = {"--runner=WeirRunner", "--streaming=true", "--parallelism=2", "--containers=2",
        "--stateBackend=ROCKSDB", "--stateDirectory=" + state, "--jobName=" + job,
        "--checkpointingIntervalMs=500"};
    String[] all = new String[args.length + extra.length];
    System.arraycopy(args, 0, all, 0, args.length);
    System.arraycopy(extra, 0, all, args.length, extra.length);
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs(all).as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    p.apply(GenerateSequence.from(0).withRate(500, Duration.millis(100)))
        .apply("Counted", ParDo.of(new Counted()))
        .apply(WithKeys.of((Long x) -> x % 8).withKeyType(TypeDescriptors.longs()))
        .apply(Window.into(FixedWindows.of(Duration.millis(200))))
        .apply(Count.perKey());
    WeirSettings settings = WeirSettings.from(options);
    JobPlan plan = WeirRunner.translate(p, settings);
    MetricsEnvironment.setMetricsSupported(true);
    JobExecutor executor = new JobExecutor(plan, settings);
    executor.start();
    return executor;
  }

  /** Passes every element on and counts it in the Beam counter {@code test:counted}. */
  public static final class Counted extends DoFn<Long, Long> {
    private final Counter counted = Metrics.counter("test", "counted");

    @ProcessElement
    public void process(@Element Long x, OutputReceiver<Long> out) {
      counted.inc();
      out.output(x);
    }
  }

  private static HttpResponse<String> get(String url, String accept) throws IOException, InterruptedException {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).GET();
    if (accept != null) {
      request.header("Accept", accept);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String scrape(String base) {
    try {
      return get(base + "metrics", null).body();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The sum of {@code metric}'s samples whose labels contain {@code labelPart}. */
  static double sum(String text, String metric, String labelPart) {
    double sum = 0;
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(metric) + "\\{([^}]*)\\} (\\S+)$").matcher(text);
    while (m.find()) {
      if (m.group(1).contains(labelPart)) {
        sum += Double.parseDouble(m.group(2));
      }
    }
    return sum;
  }

  /** The largest sample of {@code metric}; 0 if none. */
  static double max(String text, String metric) {
    double max = 0;
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(metric) + "\\{[^}]*\\} (\\S+)$").matcher(text);
    while (m.find()) {
      max = Math.max(max, Double.parseDouble(m.group(1)));
    }
    return max;
  }

  /** Prometheus' {@code promtool check metrics} accepts {@code text} (skipped without promtool, unless required). */
  static void promtoolAccepts(String text) throws Exception {
    boolean installed = new ProcessBuilder("sh", "-c", "command -v promtool").start().waitFor() == 0;
    if ("1".equals(System.getenv("WEIR_REQUIRE_PROMTOOL"))) {
      assertThat(installed).as("promtool is required (WEIR_REQUIRE_PROMTOOL=1) but missing").isTrue();
    }
    assumeTrue(installed, "promtool (Debian's prometheus package) is not installed");
    Path file = Files.createTempFile("weir-metrics", ".prom");
    Files.writeString(file, text, StandardCharsets.UTF_8);
    Process check = new ProcessBuilder("promtool", "check", "metrics").redirectInput(file.toFile())
        .redirectErrorStream(true).start();
    String out = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(check.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(check.exitValue()).as("promtool check metrics said: %s", out).isZero();
    Files.delete(file);
  }

  private static void awaitTrue(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.currentTimeMillis() + DEADLINE_MS;
    while (!condition.getAsBoolean()) {
      assertThat(System.currentTimeMillis()).as("timed out waiting until %s", what).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  /** A port nobody listens on now (for tests that need a fixed one). */
  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
