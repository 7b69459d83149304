// Role: unit tests of the per-thread metrics switch and its identity-keyed cell caches.
// Threading: single-threaded JUnit tests.
package dev.weir.runner.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.metrics.MetricName;
import org.apache.beam.sdk.metrics.MetricsContainer;
import org.junit.jupiter.api.Test;

class MetricsSwitchTest {
  private static long counter(MetricsContainerImpl c, MetricName name) {
    return c.getCounter(name).getCumulative();
  }

  @Test
  void updatesLandInTheContainerCurrentAtEachCall_evenForTheSameMetricObject() {
    MetricsContainerImpl unscoped = new MetricsContainerImpl("unscoped");
    MetricsContainerImpl a = new MetricsContainerImpl("a");
    MetricsContainerImpl b = new MetricsContainerImpl("b");
    MetricsSwitch sw = new MetricsSwitch(unscoped);
    MetricName elements = MetricName.named("ns", "elements");
    MetricName sizes = MetricName.named("ns", "sizes");

    sw.swap(a);
    for (int i = 0; i < 3; i++) {
      sw.getCounter(elements).inc();
      sw.getDistribution(sizes).update(10 + i);
    }
    MetricsContainer previous = sw.swap(b);
    assertThat(previous).isSameAs(a);
    sw.getCounter(elements).inc(5);
    sw.getDistribution(sizes).update(100);
    sw.swap(previous);
    sw.getCounter(elements).inc();
    sw.swap(null);
    sw.getCounter(elements).inc(7);

    assertThat(counter(a, elements)).isEqualTo(4);
    assertThat(counter(b, elements)).isEqualTo(5);
    assertThat(counter(unscoped, elements)).isEqualTo(7);
    assertThat(a.getDistribution(sizes).getCumulative().count()).isEqualTo(3);
    assertThat(a.getDistribution(sizes).getCumulative().sum()).isEqualTo(33);
    assertThat(b.getDistribution(sizes).getCumulative().max()).isEqualTo(100);
  }

  @Test
  void equalNamesThatAreDistinctObjectsAndManyMetricsStillFindTheirOwnCells() {
    MetricsContainerImpl a = new MetricsContainerImpl("a");
    MetricsSwitch sw = new MetricsSwitch(new MetricsContainerImpl("unscoped"));
    sw.swap(a);
    int metrics = MetricsSwitch.CACHE_SLOTS * 3; // more metrics than slots: collisions evict
    MetricName[] names = new MetricName[metrics];
    for (int i = 0; i < metrics; i++) {
      names[i] = MetricName.named("ns", "m" + i);
    }
    for (int round = 1; round <= 3; round++) {
      for (int i = 0; i < metrics; i++) {
        sw.getCounter(names[i]).inc(i);
        // An equal name built anew (e.g. Metrics.counter(...) called per element) shares the cell.
        sw.getCounter(MetricName.named("ns", "m" + i)).inc();
      }
    }
    for (int i = 0; i < metrics; i++) {
      assertThat(counter(a, names[i])).as("m%d", i).isEqualTo(3L * (i + 1));
    }
  }
}
