// Role: unit tests of the per-thread metrics switch and the cells each step keeps.
// Threading: single-threaded JUnit tests.
package dev.weir.runner.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.metrics.MetricName;
import org.apache.beam.sdk.metrics.MetricsContainer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MetricsSwitchTest {
  private static long counter(MetricsContainerImpl c, MetricName name) {
    return c.getCounter(name).getCumulative();
  }

  /** With and without step cells, every update lands in the container of the step running then. */
  @ParameterizedTest(name = "step cells kept: {0}")
  @ValueSource(booleans = {true, false})
  void updatesLandInTheContainerCurrentAtEachCall_evenForTheSameMetricObject(boolean keepCells) {
    MetricsContainerImpl unscoped = new MetricsContainerImpl("unscoped");
    MetricsContainerImpl a = new MetricsContainerImpl("a");
    MetricsContainerImpl b = new MetricsContainerImpl("b");
    MetricsSwitch.StepCells cellsA = keepCells ? new MetricsSwitch.StepCells() : null;
    MetricsSwitch.StepCells cellsB = keepCells ? new MetricsSwitch.StepCells() : null;
    MetricsSwitch.StepCells cellsNone = keepCells ? new MetricsSwitch.StepCells() : null;
    MetricsSwitch sw = new MetricsSwitch(unscoped);
    MetricName elements = MetricName.named("ns", "elements");
    MetricName sizes = MetricName.named("ns", "sizes");

    sw.swap(a, cellsA);
    for (int i = 0; i < 3; i++) {
      sw.getCounter(elements).inc();
      sw.getDistribution(sizes).update(10 + i);
    }
    MetricsContainer previous = sw.swap(b, cellsB);
    assertThat(previous).isSameAs(a);
    sw.getCounter(elements).inc(5);
    sw.getDistribution(sizes).update(100);
    sw.swap(previous, cellsA);
    sw.getCounter(elements).inc();
    sw.swap(null, cellsNone);
    sw.getCounter(elements).inc(7);

    assertThat(counter(a, elements)).isEqualTo(4);
    assertThat(counter(b, elements)).isEqualTo(5);
    assertThat(counter(unscoped, elements)).isEqualTo(7);
    assertThat(a.getDistribution(sizes).getCumulative().count()).isEqualTo(3);
    assertThat(a.getDistribution(sizes).getCumulative().sum()).isEqualTo(33);
    assertThat(b.getDistribution(sizes).getCumulative().max()).isEqualTo(100);
  }

  @Test
  void moreMetricsThanAStepKeepsAndNamesBuiltPerCallStillFindTheirOwnCells() {
    MetricsContainerImpl a = new MetricsContainerImpl("a");
    MetricsSwitch sw = new MetricsSwitch(new MetricsContainerImpl("unscoped"));
    sw.swap(a, new MetricsSwitch.StepCells());
    int metrics = MetricsSwitch.StepCells.MAX_CELLS * 3; // more than the step keeps: it empties
    MetricName[] names = new MetricName[metrics];
    for (int i = 0; i < metrics; i++) {
      names[i] = MetricName.named("ns", "m" + i);
    }
    for (int round = 1; round <= 3; round++) {
      for (int i = 0; i < metrics; i++) {
        sw.getCounter(names[i]).inc(i);
        sw.getDistribution(names[i]).update(i);
        // An equal name built anew (e.g. Metrics.counter(...) called per element) shares the cell.
        sw.getCounter(MetricName.named("ns", "m" + i)).inc();
      }
    }
    for (int i = 0; i < metrics; i++) {
      assertThat(counter(a, names[i])).as("m%d", i).isEqualTo(3L * (i + 1));
      assertThat(a.getDistribution(names[i]).getCumulative().count()).isEqualTo(3);
    }
  }
}
