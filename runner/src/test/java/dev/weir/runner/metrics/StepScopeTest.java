package dev.weir.runner.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.metrics.MetricName;
import org.junit.jupiter.api.Test;

/** One bracket switches both the metrics container and the running step; brackets nest. */
class StepScopeTest {
  private static final MetricName COUNTER = MetricName.named("test", "count");

  @Test
  void enter_makesTheStepsMetricsContainerCurrentAndExitRestoresTheCallers() {
    StepScope scope = new StepScope();
    MetricsContainerImpl a = new MetricsContainerImpl("A");
    MetricsContainerImpl b = new MetricsContainerImpl("B");
    StepScope.Step stepA = scope.step("A", a);
    StepScope.Step stepB = scope.step("B", b);

    StepScope.Step outer = scope.enter(stepA);
    scope.metrics().getCounter(COUNTER).inc();
    StepScope.Step inner = scope.enter(stepB);
    assertThat(scope.current()).isSameAs(stepB);
    scope.metrics().getCounter(COUNTER).inc(10);
    scope.exit(inner);
    assertThat(scope.current()).isSameAs(stepA);
    scope.metrics().getCounter(COUNTER).inc();
    scope.exit(outer);
    assertThat(scope.current()).isNull();
    scope.metrics().getCounter(COUNTER).inc(100); // no step: counted nowhere

    assertThat(a.getCounter(COUNTER).getCumulative()).isEqualTo(2L);
    assertThat(b.getCounter(COUNTER).getCumulative()).isEqualTo(10L);
  }

  @Test
  void run_runsOutsideCallsInTheStep() {
    StepScope scope = new StepScope();
    MetricsContainerImpl a = new MetricsContainerImpl("A");
    StepScope.Step stepA = scope.step("A", a);
    stepA.run(() -> {
      assertThat(scope.current()).isSameAs(stepA);
      scope.metrics().getCounter(COUNTER).inc();
    });
    assertThat(scope.current()).isNull();
    assertThat(a.getCounter(COUNTER).getCumulative()).isEqualTo(1L);
  }
}
