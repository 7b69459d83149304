package dev.weir.runner.monitoring;

import dev.weir.runner.metrics.StepMetrics;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricsOptions;
import org.apache.beam.sdk.metrics.MetricsSink;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.util.InstanceBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Beam's metrics sinks on Weir: with {@code --metricsSink=<class>} (Beam's {@link MetricsOptions};
 * e.g. {@code org.apache.beam.runners.extensions.metrics.MetricsHttpSink} with
 * {@code --metricsHttpSinkUrl}, or the Graphite sink), the job's Beam metrics are written to a new
 * instance of that sink every {@code --metricsPushPeriod} seconds while the job runs, and once more
 * when it ends, with its final values. Without a sink (Beam's default no-op sink) nothing runs.
 *
 * <p>The contract is that of runners-core's {@code MetricsPusher}, which Beam's Flink and Spark
 * runners start: the sink is built with its {@code (PipelineOptions)} constructor, the first push
 * is at start, and a round with no metrics at all is not pushed. Why not that class itself: it
 * reads a runners-core {@code MetricsContainerStepMap}, one container per step, and pushes its
 * attempted values only; Weir keeps a container per (task, step) with committed snapshots
 * ({@link StepMetrics}), so this pushes {@link StepMetrics#results()}, whose results carry both
 * attempted and committed values (a sink that reads committed values gets them).
 *
 * <p>A sink that throws does not fail the job: the failure is logged at WARN once per run of
 * failures, and the next period tries again.
 *
 * <p>Threading: {@link #start} and {@link #close} from the job's monitoring (once each); pushes run
 * on a daemon thread of their own ({@code weir-metrics-push}).
 */
@Internal
public final class MetricsPush implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MetricsPush.class);

  private final String jobName;
  private final MetricsSink sink;
  private final StepMetrics metrics;
  private final ScheduledExecutorService scheduler;
  /** Whether the last push failed (one WARN per run of failures); the push thread only. */
  private boolean failing;
  private long pushes;

  private MetricsPush(String jobName, MetricsSink sink, StepMetrics metrics, long periodSeconds) {
    this.jobName = jobName;
    this.sink = sink;
    this.metrics = metrics;
    this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread thread = new Thread(r, "weir-metrics-push");
      thread.setDaemon(true);
      return thread;
    });
    scheduler.scheduleAtFixedRate(this::push, 0, periodSeconds, TimeUnit.SECONDS);
  }

  /**
   * Checks Beam's metrics-sink options: a sink other than the no-op one needs a
   * {@code --metricsPushPeriod} of at least 1 second.
   *
   * @throws IllegalArgumentException naming {@code --metricsPushPeriod} and the allowed range
   */
  public static void check(MetricsOptions options) {
    Long period = options.getMetricsPushPeriod();
    if (pushes(options) && (period == null || period < 1)) {
      throw new IllegalArgumentException("--metricsPushPeriod=" + period + " is out of range; allowed: 1 to "
          + Long.MAX_VALUE + " (seconds between two pushes to --metricsSink=" + options.getMetricsSink().getName()
          + ")");
    }
  }

  /**
   * Starts pushing the job's metrics to the sink {@code options} name, or returns null if they name
   * none (Beam's no-op sink). The period was checked with the other options ({@link #check}, from
   * {@code WeirSettings.from}).
   *
   * @throws IllegalArgumentException if the sink class cannot be built with a {@code (PipelineOptions)}
   *     constructor, naming {@code --metricsSink}
   */
  static MetricsPush start(String jobName, PipelineOptions options, StepMetrics metrics) {
    MetricsOptions metricsOptions = options.as(MetricsOptions.class);
    if (!pushes(metricsOptions)) {
      return null;
    }
    MetricsSink sink;
    try {
      sink = InstanceBuilder.ofType(MetricsSink.class).fromClass(metricsOptions.getMetricsSink())
          .withArg(PipelineOptions.class, options).build();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("--metricsSink=" + metricsOptions.getMetricsSink().getName()
          + " cannot be built with a constructor taking PipelineOptions, as Beam's metrics sinks have: " + e, e);
    }
    LOG.info("Weir job {} pushes its Beam metrics to {} every {} s", jobName, sink.getClass().getName(),
        metricsOptions.getMetricsPushPeriod());
    return new MetricsPush(jobName, sink, metrics, metricsOptions.getMetricsPushPeriod());
  }

  private static boolean pushes(MetricsOptions options) {
    Class<? extends MetricsSink> sink = options.getMetricsSink();
    // Beam's default (MetricsOptions.NoOpMetricsSink's value) is runners-core's no-op sink.
    return sink != null && !sink.getSimpleName().equals("NoOpMetricsSink");
  }

  /** Pushes made so far (for tests). */
  synchronized long pushes() {
    return pushes;
  }

  private synchronized void push() {
    try {
      MetricQueryResults results = metrics.results().allMetrics();
      if (!results.getCounters().iterator().hasNext() && !results.getDistributions().iterator().hasNext()
          && !results.getGauges().iterator().hasNext() && !results.getStringSets().iterator().hasNext()
          && !results.getBoundedTries().iterator().hasNext()) {
        return;
      }
      sink.writeMetrics(results);
      pushes++;
      failing = false;
    } catch (Exception e) {
      if (!failing) {
        LOG.warn("Weir job {}: --metricsSink {} failed to write the job's metrics; the job goes on and "
            + "the next push tries again", jobName, sink.getClass().getName(), e);
      }
      failing = true;
    }
  }

  /** Stops the periodic pushes, then pushes the final values once. Idempotent. */
  @Override
  public void close() {
    if (scheduler.isShutdown()) {
      return;
    }
    scheduler.shutdownNow();
    try {
      scheduler.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    push();
  }
}
