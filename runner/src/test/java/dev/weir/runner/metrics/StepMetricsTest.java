package dev.weir.runner.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.metrics.DistributionResult;
import org.apache.beam.sdk.metrics.MetricName;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.junit.jupiter.api.Test;

/** Attempted and committed values of {@link StepMetrics}. */
class StepMetricsTest {
  private static final MetricName COUNT = MetricName.named("ns", "count");
  private static final MetricName SIZES = MetricName.named("ns", "sizes");
  private static final MetricName LEVEL = MetricName.named("ns", "level");

  private static MetricQueryResults query(StepMetrics metrics) {
    return metrics.results().queryMetrics(MetricsFilter.builder().build());
  }

  private static MetricResult<Long> counter(StepMetrics metrics, String step) {
    for (MetricResult<Long> r : query(metrics).getCounters()) {
      if (r.getKey().stepName().equals(step) && r.getName().equals(COUNT)) {
        return r;
      }
    }
    throw new AssertionError("no counter of " + step);
  }

  @Test
  void committedValuesAreTheValuesAsOfTheLastCommit() {
    StepMetrics metrics = new StepMetrics();
    StepMetrics.Committer committer = metrics.newCommitter();
    StepMetrics.Task task = committer.newTask();
    MetricsContainerImpl step = task.containerFor("Step").attempted();

    step.getCounter(COUNT).inc(3);
    assertThat(counter(metrics, "Step").getAttempted()).isEqualTo(3L);
    assertThat(counter(metrics, "Step").getCommitted()).isZero();

    task.bundleFinished();
    step.getCounter(COUNT).inc(2); // the next bundle, still open at the commit
    committer.commit();
    assertThat(counter(metrics, "Step").getAttempted()).isEqualTo(5L);
    assertThat(counter(metrics, "Step").getCommitted()).isEqualTo(3L);

    task.bundleFinished();
    assertThat(counter(metrics, "Step").getCommitted()).isEqualTo(3L); // finished, not committed yet
    committer.commit();
    assertThat(counter(metrics, "Step").getCommitted()).isEqualTo(5L);
  }

  @Test
  void tasksOfOneStepAreMergedIntoOneResultPerMetricForBothValues() {
    StepMetrics metrics = new StepMetrics();
    StepMetrics.Committer first = metrics.newCommitter();
    StepMetrics.Committer second = metrics.newCommitter();
    MetricsContainerImpl a = first.newTask().containerFor("Step").attempted();
    MetricsContainerImpl b = second.newTask().containerFor("Step").attempted();
    a.getCounter(COUNT).inc(1);
    a.getDistribution(SIZES).update(10);
    a.getGauge(LEVEL).set(7);
    b.getCounter(COUNT).inc(4);
    b.getDistribution(SIZES).update(2);
    first.commitAll();
    second.commitAll();
    b.getDistribution(SIZES).update(100); // not committed

    MetricQueryResults results = query(metrics);
    assertThat(results.getCounters()).hasSize(1);
    assertThat(results.getCounters().iterator().next().getCommitted()).isEqualTo(5L);
    assertThat(results.getDistributions()).hasSize(1);
    MetricResult<DistributionResult> sizes = results.getDistributions().iterator().next();
    assertThat(sizes.getCommitted()).isEqualTo(DistributionResult.create(12, 2, 2, 10));
    assertThat(sizes.getAttempted()).isEqualTo(DistributionResult.create(112, 3, 2, 100));
    assertThat(results.getGauges().iterator().next().getCommitted().getValue()).isEqualTo(7L);
  }

  @Test
  void aCommitWithoutChangesKeepsTheCommittedValues() {
    StepMetrics metrics = new StepMetrics();
    StepMetrics.Committer committer = metrics.newCommitter();
    StepMetrics.Task task = committer.newTask();
    MetricsContainerImpl step = task.containerFor("Step").attempted();
    step.getCounter(COUNT).inc(2);
    task.bundleFinished();
    committer.commit();
    task.bundleFinished();
    committer.commit();
    assertThat(counter(metrics, "Step").getCommitted()).isEqualTo(2L);
  }

  @Test
  void updatesThroughTheStepsBufferedCellsReachAttemptedAndCommittedWhenTheBundleFinishes() {
    StepMetrics metrics = new StepMetrics();
    StepMetrics.Committer committer = metrics.newCommitter();
    StepMetrics.Task task = committer.newTask();
    StepMetrics.StepContainer step = task.containerFor("Step");
    assertThat(step.cells().buffered()).isTrue();
    MetricsSwitch sw = new MetricsSwitch(new MetricsContainerImpl("unscoped"));
    sw.swap(step.attempted(), step.cells());

    sw.getCounter(COUNT).inc(3);
    sw.getDistribution(SIZES).update(40);
    assertThat(counter(metrics, "Step").getAttempted()).isZero(); // the bundle is still open

    task.bundleFinished();
    sw.getCounter(COUNT).inc(2); // the next bundle, open at the commit
    committer.commit();
    assertThat(counter(metrics, "Step").getAttempted()).isEqualTo(3L);
    assertThat(counter(metrics, "Step").getCommitted()).isEqualTo(3L);
    MetricResult<DistributionResult> sizes = query(metrics).getDistributions().iterator().next();
    assertThat(sizes.getCommitted()).isEqualTo(DistributionResult.create(40, 1, 40, 40));

    committer.commitAll(); // the tasks closed: what their last calls updated is final
    assertThat(counter(metrics, "Step").getAttempted()).isEqualTo(5L);
    assertThat(counter(metrics, "Step").getCommitted()).isEqualTo(5L);
  }

  @Test
  void aCheckpointSnapshotAfterTheBundleHoldsTheBufferedUpdates() {
    StepMetrics metrics = new StepMetrics();
    StepMetrics.Task task = metrics.newCommitter().newTask();
    StepMetrics.StepContainer step = task.containerFor("Step");
    MetricsSwitch sw = new MetricsSwitch(new MetricsContainerImpl("unscoped"));
    sw.swap(step.attempted(), step.cells());
    sw.getCounter(COUNT).inc(7);
    task.bundleFinished();

    StepMetrics restored = new StepMetrics();
    StepMetrics.Committer committer = restored.newCommitter();
    StepMetrics.Task again = committer.newTask();
    again.containerFor("Step");
    again.restore(task.snapshot());
    committer.commit();
    assertThat(counter(restored, "Step").getCommitted()).isEqualTo(7L);
  }

  @Test
  void metricsReportedAtTranslationCountAsCommitted() {
    StepMetrics metrics = new StepMetrics();
    MetricsContainerImpl split = new MetricsContainerImpl("Read");
    split.getCounter(COUNT).inc(9);
    metrics.register("Read", split);
    assertThat(counter(metrics, "Read").getCommitted()).isEqualTo(9L);
  }
}
