package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Committed metrics on WeirRunner: readable while a job runs, equal to attempted once it finished. */
class CommittedMetricsPipelineTest {

  static final class CountFn extends DoFn<Long, Long> {
    private final Counter seen = Metrics.counter(CommittedMetricsPipelineTest.class, "seen");

    @ProcessElement
    public void process(@Element Long element, OutputReceiver<Long> out) {
      seen.inc();
      out.output(element);
    }
  }

  private static MetricResult<Long> seen(PipelineResult result) {
    MetricQueryResults metrics = result.metrics().queryMetrics(MetricsFilter.builder()
        .addNameFilter(MetricNameFilter.named(CommittedMetricsPipelineTest.class, "seen")).build());
    for (MetricResult<Long> counter : metrics.getCounters()) {
      return counter;
    }
    return null;
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void aFinishedJobsCommittedValuesAreItsAttemptedValues(boolean streaming) {
    Pipeline p = Pipelines.create(streaming);
    p.apply(GenerateSequence.from(0).to(5_000)).apply("Count", ParDo.of(new CountFn()));
    PipelineResult result = p.run();
    assertThat(result.waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
    MetricResult<Long> seen = seen(result);
    assertThat(seen.getAttempted()).isEqualTo(5_000L);
    assertThat(seen.getCommitted()).isEqualTo(5_000L);
    // final values: merged once, the same results for every later read
    assertThat(result.metrics()).isSameAs(result.metrics());
    assertThat(seen(result).getCommitted()).isEqualTo(5_000L);
  }

  /** Counts each element, also in a static total, and fails on element {@link #FAIL_AT}. */
  static final class CountThenFailFn extends DoFn<Long, Long> {
    static final long FAIL_AT = 3_210;
    static final java.util.concurrent.atomic.AtomicLong INCREMENTS = new java.util.concurrent.atomic.AtomicLong();
    private final Counter seen = Metrics.counter(CommittedMetricsPipelineTest.class, "seen");

    @ProcessElement
    public void process(@Element Long element, OutputReceiver<Long> out) {
      seen.inc();
      INCREMENTS.incrementAndGet();
      if (element == FAIL_AT) {
        throw new IllegalStateException("element " + element);
      }
      out.output(element);
    }
  }

  /**
   * Steps count into single-writer cells that reach the job's attempted values when a bundle
   * finishes; a failed job's containers flush them as they close, so its attempted values still
   * count every update, those of the bundle that failed included.
   */
  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void aFailedJobsAttemptedValuesCountTheUpdatesOfTheBundleThatFailed(boolean streaming) throws Exception {
    CountThenFailFn.INCREMENTS.set(0);
    WeirPipelineOptions options = Pipelines.options(streaming);
    options.setRunner(WeirRunner.class); // the result, not TestWeirRunner's rethrown failure
    options.setMaxBundleSize(1_000);
    Pipeline p = Pipeline.create(options);
    p.apply(GenerateSequence.from(0).to(5_000)).apply("Count", ParDo.of(new CountThenFailFn()));
    PipelineResult result = p.run();
    try {
      result.waitUntilFinish();
    } catch (RuntimeException expected) {
      // the DoFn's exception, as the job's failure
    }
    assertThat(result.getState()).isEqualTo(PipelineResult.State.FAILED);
    long deadline = System.nanoTime() + 10_000_000_000L; // the containers close after the job failed
    MetricResult<Long> seen = seen(result);
    while ((seen == null || seen.getAttempted() != CountThenFailFn.INCREMENTS.get()) && System.nanoTime() < deadline) {
      Thread.sleep(10);
      seen = seen(result);
    }
    assertThat(seen).isNotNull();
    assertThat(seen.getAttempted()).isEqualTo(CountThenFailFn.INCREMENTS.get()).isPositive();
    assertThat(seen.getCommitted()).isLessThan(seen.getAttempted()); // the failed bundle never committed
  }

  @Test
  void committedValuesGrowWhileAnUnboundedJobRunsAndNeverExceedAttempted() throws Exception {
    WeirPipelineOptions options = Pipelines.options(true);
    options.setRunner(WeirRunner.class); // returns at once; TestWeirRunner would wait for the end
    options.setMaxBundleSize(100);
    Pipeline p = Pipeline.create(options);
    p.apply(GenerateSequence.from(0)).apply("Count", ParDo.of(new CountFn()));
    PipelineResult result = p.run();
    try {
      long committed = 0;
      while (committed < 1_000) { // ends when commits happen; the surefire timeout catches a hang
        Thread.sleep(20);
        MetricResult<Long> seen = seen(result);
        if (seen != null) {
          committed = seen.getCommitted();
          assertThat(committed).isLessThanOrEqualTo(seen.getAttempted());
        }
      }
      assertThat(result.getState()).isEqualTo(PipelineResult.State.RUNNING);
    } finally {
      result.cancel();
    }
  }
}
