// Role: unit tests of the per-thread metrics switch and the cells each step keeps.
// Threading: single-threaded JUnit tests.
package dev.weir.runner.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.beam.runners.core.metrics.DistributionData;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.metrics.MetricName;
import org.apache.beam.sdk.metrics.MetricsContainer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class MetricsSwitchTest {
  private static long counter(MetricsContainerImpl c, MetricName name) {
    return c.getCounter(name).getCumulative();
  }

  /** How a step keeps its cells: not at all, the container's own cells, or buffered ones. */
  enum Cells {
    NONE, WRITE_THROUGH, BUFFERED;

    MetricsSwitch.StepCells create() {
      return this == NONE ? null : new MetricsSwitch.StepCells(this == BUFFERED);
    }
  }

  private static void flush(MetricsSwitch.StepCells... all) {
    for (MetricsSwitch.StepCells cells : all) {
      if (cells != null) {
        cells.flush();
      }
    }
  }

  /** With and without step cells, every update lands in the container of the step running then. */
  @ParameterizedTest(name = "step cells: {0}")
  @EnumSource(Cells.class)
  void updatesLandInTheContainerCurrentAtEachCall_evenForTheSameMetricObject(Cells kind) {
    MetricsContainerImpl unscoped = new MetricsContainerImpl("unscoped");
    MetricsContainerImpl a = new MetricsContainerImpl("a");
    MetricsContainerImpl b = new MetricsContainerImpl("b");
    MetricsSwitch.StepCells cellsA = kind.create();
    MetricsSwitch.StepCells cellsB = kind.create();
    MetricsSwitch.StepCells cellsNone = kind.create();
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
    flush(cellsA, cellsB, cellsNone);

    assertThat(counter(a, elements)).isEqualTo(4);
    assertThat(counter(b, elements)).isEqualTo(5);
    assertThat(counter(unscoped, elements)).isEqualTo(7);
    assertThat(a.getDistribution(sizes).getCumulative().count()).isEqualTo(3);
    assertThat(a.getDistribution(sizes).getCumulative().sum()).isEqualTo(33);
    assertThat(b.getDistribution(sizes).getCumulative().max()).isEqualTo(100);
  }

  @ParameterizedTest(name = "step cells: {0}")
  @EnumSource(value = Cells.class, names = {"WRITE_THROUGH", "BUFFERED"})
  void moreMetricsThanAStepKeepsAndNamesBuiltPerCallStillFindTheirOwnCells(Cells kind) {
    MetricsContainerImpl a = new MetricsContainerImpl("a");
    MetricsSwitch sw = new MetricsSwitch(new MetricsContainerImpl("unscoped"));
    MetricsSwitch.StepCells cells = kind.create();
    sw.swap(a, cells);
    int metrics = MetricsSwitch.StepCells.MAX_CELLS * 3; // more than the step keeps
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
    cells.flush();
    for (int i = 0; i < metrics; i++) {
      assertThat(counter(a, names[i])).as("m%d", i).isEqualTo(3L * (i + 1));
      assertThat(a.getDistribution(names[i]).getCumulative().count()).isEqualTo(3);
    }
  }

  @Test
  void bufferedCellsReachTheContainerOnlyAtFlush_andAFlushWithoutUpdatesAddsNothing() {
    MetricsContainerImpl a = new MetricsContainerImpl("a");
    MetricsSwitch sw = new MetricsSwitch(new MetricsContainerImpl("unscoped"));
    MetricsSwitch.StepCells cells = new MetricsSwitch.StepCells(true);
    sw.swap(a, cells);
    MetricName elements = MetricName.named("ns", "elements");
    MetricName sizes = MetricName.named("ns", "sizes");
    sw.getCounter(elements).inc(5);
    sw.getCounter(elements).dec();
    sw.getDistribution(sizes).update(7);
    sw.getDistribution(sizes).update(-3);
    sw.getDistribution(sizes).update(30, 2, 10, 20);
    assertThat(counter(a, elements)).isZero();
    assertThat(a.getUpdates().counterUpdates()).isEmpty(); // nothing dirty before the flush

    cells.flush();
    assertThat(counter(a, elements)).isEqualTo(4);
    DistributionData d = a.getDistribution(sizes).getCumulative();
    assertThat(d).isEqualTo(DistributionData.create(34, 4, -3, 20));
    a.getUpdates(); // marks the dirty cells as committing, as StepMetrics does
    a.commitUpdates();

    cells.flush(); // nothing updated since: the container's cells stay clean
    assertThat(a.getUpdates().counterUpdates()).isEmpty();
    assertThat(a.getUpdates().distributionUpdates()).isEmpty();
    assertThat(counter(a, elements)).isEqualTo(4);

    sw.getDistribution(sizes).update(100); // min and max start afresh after a flush
    cells.flush();
    assertThat(a.getDistribution(sizes).getCumulative()).isEqualTo(DistributionData.create(134, 5, -3, 100));
  }
}
