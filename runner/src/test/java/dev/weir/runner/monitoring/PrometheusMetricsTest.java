package dev.weir.runner.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.checkpoint.CheckpointStats;
import dev.weir.runner.metrics.RunLoopMetrics;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.task.ContainerCommit;
import dev.weir.state.cache.ObjectCacheStats;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.metrics.MetricName;
import org.junit.jupiter.api.Test;

/**
 * The metric families of {@link PrometheusMetrics} as Prometheus reads them, from fixed inputs:
 * names and units by Prometheus' conventions, label values with quotes, backslashes and newlines
 * escaped (a job or transform may be named anything), a watermark "none yet" left out rather than
 * exported as Beam's minimum timestamp, and output that Prometheus' {@code promtool check metrics}
 * accepts (where promtool is installed; see {@link MonitoringHttpTest#promtoolAccepts}).
 */
class PrometheusMetricsTest {
  private static final String JOB = "job \"quoted\" \\ back\nslash";
  private static final String STEP = "Parse \"bids\"\\n/ParMultiDo(Parse)";

  private static MetricSnapshots collect() {
    StepMetrics metrics = new StepMetrics();
    MetricsContainerImpl container = new MetricsContainerImpl(STEP);
    container.getCounter(MetricName.named("nexmark", "bids")).inc(42);
    container.getDistribution(MetricName.named("nexmark", "price")).update(7);
    container.getDistribution(MetricName.named("nexmark", "price")).update(3);
    container.getGauge(MetricName.named("nexmark", "latest")).set(9);
    metrics.register(STEP, container);
    ContainerStatus status = new ContainerStatus() {
      @Override
      public int id() {
        return 0;
      }

      @Override
      public List<TaskStatus> tasks() {
        return List.of();
      }

      @Override
      public RunLoopMetrics.Snapshot runLoop() {
        RunLoopMetrics loop = new RunLoopMetrics();
        loop.add(RunLoopMetrics.Phase.PROCESS_ENVELOPES, 1_500_000_000L);
        loop.add(RunLoopMetrics.Phase.IDLE, 500_000_000L);
        loop.iterationDone();
        return loop.snapshot();
      }

      @Override
      public ContainerCommit.CommitStats commits() {
        return new ContainerCommit.CommitStats(3, 3_000_000L, 1_000_000L);
      }

      @Override
      public ObjectCacheStats cache() {
        return null;
      }
    };
    StreamStatus stream = new StreamStatus() {
      @Override
      public String name() {
        return "stream-1";
      }

      @Override
      public String kind() {
        return "SHUFFLE";
      }

      @Override
      public String producerStage() {
        return "stage-0";
      }

      @Override
      public String consumerStage() {
        return "stage-1";
      }

      @Override
      public int partitions() {
        return 2;
      }

      @Override
      public int queued(int partition) {
        return partition == 0 ? 1024 : 10;
      }

      @Override
      public int capacity() {
        return 1024;
      }
    };
    return new PrometheusMetrics(new MonitoredJob(JOB, "rocksdb", 1_700_000_000_000L, List.of(status),
        List.of(new MBeanViews.StageView("stage-0", List.of())), List.of(stream), metrics, true,
        () -> CheckpointStats.NONE)).collect();
  }

  private static String text() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, collect(), EscapingScheme.ALLOW_UTF8);
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void familiesFollowPrometheusNamingAndUnits() throws Exception {
    String text = text();
    String job = "job=\"job \\\"quoted\\\" \\\\ back\\nslash\"";
    assertThat(text)
        .contains("# TYPE weir_run_loop_phase_seconds_total counter")
        .contains("weir_run_loop_phase_seconds_total{container=\"0\"," + job + ",phase=\"process_envelopes\"} 1.5")
        .contains("weir_run_loop_utilization_ratio{container=\"0\"," + job + "} 0.75")
        .contains("weir_state_commits_total{container=\"0\"," + job + "} 3.0")
        .contains("weir_state_last_commit_seconds{container=\"0\"," + job + "} 0.001")
        .contains("weir_job_start_time_seconds{" + job + "} 1.7E9")
        .contains("weir_stream_queued_messages{from_stage=\"stage-0\"," + job + ",partition=\"0\",stream=\"stream-1\","
            + "to_stage=\"stage-1\"} 1024.0");
  }

  @Test
  void userMetricsAreLabelledByTransformNamespaceAndNameWithEscapedValues() throws Exception {
    String text = text();
    String labels = "{job=\"job \\\"quoted\\\" \\\\ back\\nslash\",name=\"%s\",namespace=\"nexmark\","
        + "transform=\"Parse \\\"bids\\\"\\\\n/ParMultiDo(Parse)\"}";
    assertThat(text)
        .contains("weir_user_metric_total" + String.format(labels, "bids") + " 42.0")
        .contains("weir_user_distribution_count" + String.format(labels, "price") + " 2")
        .contains("weir_user_distribution_sum" + String.format(labels, "price") + " 10.0")
        .contains("weir_user_distribution_min" + String.format(labels, "price") + " 3.0")
        .contains("weir_user_distribution_max" + String.format(labels, "price") + " 7.0")
        .contains("weir_user_value" + String.format(labels, "latest") + " 9.0");
  }

  @Test
  void aWatermarkNotSetYetAndCheckpointsNotTakenAreLeftOut() throws Exception {
    String text = text();
    assertThat(text).doesNotContain("weir_task_input_watermark_seconds{")
        .doesNotContain("weir_checkpoint_last_completion_timestamp_seconds{")
        .contains("weir_checkpoints_completed_total{job=");
  }

  @Test
  void openMetricsAndPromtoolAcceptTheOutput() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    OpenMetricsTextFormatWriter.create().write(out, collect(), EscapingScheme.ALLOW_UTF8);
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("# UNIT weir_run_loop_phase_seconds seconds")
        .endsWith("# EOF\n");
    MonitoringHttpTest.promtoolAccepts(text());
  }
}
