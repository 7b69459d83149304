package dev.weir.runner.monitoring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.executor.JobExecutor;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsOptions;
import org.apache.beam.sdk.metrics.MetricsSink;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.ParDo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Beam's metrics sinks on Weir ({@code --metricsSink}, {@code --metricsPushPeriod},
 * {@code --metricsHttpSinkUrl}), against a local HTTP server the test starts. The sink is
 * {@link HttpJsonSink}, which POSTs each push as JSON to {@code --metricsHttpSinkUrl} as Beam's
 * {@code MetricsHttpSink} does (that sink's artifact, beam-runners-extensions-java-metrics, is not
 * served by this project's Maven mirror). A streaming job pushes every second with values that grow;
 * a batch job's last push carries its final values, committed equal to attempted.
 */
class MetricsPushTest {
  private static final long DEADLINE_MS = 60_000;
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  Path state;
  private HttpServer receiver;
  private final List<JsonNode> received = new CopyOnWriteArrayList<>();

  @BeforeEach
  void startReceiver() throws Exception {
    receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    receiver.createContext("/", exchange -> {
      try (exchange) {
        if (exchange.getRequestMethod().equals("POST")) {
          received.add(JSON.readTree(exchange.getRequestBody()));
        }
        exchange.sendResponseHeaders(200, -1);
      }
    });
    receiver.start();
  }

  @AfterEach
  void stopReceiver() {
    receiver.stop(0);
  }

  private String url() {
    return "http://127.0.0.1:" + receiver.getAddress().getPort() + "/metrics";
  }

  @Test
  void aStreamingJobPushesItsGrowingMetricsEveryPeriod() throws Exception {
    JobExecutor executor = MonitoringHttpTest.startJob(state, "push-" + UUID.randomUUID(),
        "--metricsSink=" + HttpJsonSink.class.getName(), "--metricsPushPeriod=1", "--metricsHttpSinkUrl=" + url());
    try {
      long deadline = System.currentTimeMillis() + DEADLINE_MS;
      while (counted(true).size() < 3) {
        assertThat(System.currentTimeMillis()).as("three pushes with the counter arrive").isLessThan(deadline);
        Thread.sleep(100);
      }
      List<Long> values = counted(true);
      assertThat(values.get(values.size() - 1)).as("values grow from push to push").isGreaterThan(values.get(0));
      assertThat(executor.monitoring().metricsPushes()).isGreaterThanOrEqualTo(3);
    } finally {
      executor.cancel();
    }
  }

  @Test
  void aBatchJobsLastPushCarriesItsFinalCommittedValues() throws Exception {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=WeirRunner", "--stateBackend=MEMORY",
        "--metricsSink=" + HttpJsonSink.class.getName(), "--metricsPushPeriod=3600", "--metricsHttpSinkUrl=" + url())
        .as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    p.apply(GenerateSequence.from(0).to(1_000)).apply("Counted", ParDo.of(new MonitoringHttpTest.Counted()));
    p.run().waitUntilFinish();
    assertThat(counted(false)).as("committed values of the last push").last().isEqualTo(1_000L);
    assertThat(counted(true)).as("attempted values of the last push").last().isEqualTo(1_000L);
  }

  @Test
  void aSinkWithoutAPositivePeriodIsRefusedNamingTheOption() {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=WeirRunner", "--stateBackend=MEMORY",
        "--metricsSink=" + HttpJsonSink.class.getName(), "--metricsPushPeriod=0").as(WeirPipelineOptions.class);
    assertThatThrownBy(() -> WeirSettings.from(options))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--metricsPushPeriod=0").hasMessageContaining(HttpJsonSink.class.getName());
  }

  /** The test:counted counter in each push received so far (attempted or committed values). */
  private List<Long> counted(boolean attempted) {
    List<Long> values = new java.util.ArrayList<>();
    for (JsonNode push : received) {
      for (JsonNode counter : push.get("counters")) {
        if (counter.get("name").asText().equals("test:counted")) {
          values.add(counter.get(attempted ? "attempted" : "committed").asLong());
        }
      }
    }
    return values;
  }

  /**
   * A metrics sink as Beam's {@code MetricsHttpSink}: built with the pipeline's options, POSTs each
   * push's counters (step, name, attempted, committed) as JSON to {@code --metricsHttpSinkUrl}.
   */
  public static final class HttpJsonSink implements MetricsSink {
    private final String url;

    public HttpJsonSink(PipelineOptions options) {
      this.url = options.as(MetricsOptions.class).getMetricsHttpSinkUrl();
    }

    @Override
    public void writeMetrics(MetricQueryResults results) throws Exception {
      ObjectNode push = JSON.createObjectNode();
      ArrayNode counters = push.putArray("counters");
      for (MetricResult<Long> counter : results.getCounters()) {
        counters.addObject().put("step", counter.getKey().stepName()).put("name", counter.getName().toString())
            .put("attempted", counter.getAttempted()).put("committed", counter.getCommitted());
      }
      HttpResponse<Void> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(push), StandardCharsets.UTF_8)).build(),
          HttpResponse.BodyHandlers.discarding());
      if (response.statusCode() != 200) {
        throw new IllegalStateException("HTTP " + response.statusCode() + " from " + url);
      }
    }
  }
}
