package dev.weir.runner.benchmarks;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What Weir's per-PTransform metrics cost on a pipeline that does not read them (issue 14, item 7:
 * metrics on vs off at least 0.97x): one batch pipeline run on {@link WeirRunner} per operation,
 * {@value #ELEMENTS} longs from {@code GenerateSequence} through {@value #STEPS} fused ParDos, each
 * incrementing a Beam counter per element and passing the element on, the last one dropping it.
 * {@code metricsEnabled=true} is Weir's default ({@code --metricsEnabled}); with {@code false} the
 * counters' {@code inc()} finds no container. Everything else, the run loop, the source and the
 * fused chain with its per-step scope switches, is the same, so the ratio of the two scores is the
 * cost of collecting the metrics (per element and step: one counter increment into the step's
 * container and the step's scope switch, which both modes pay).
 *
 * <p>Threading: JMH's one benchmark thread submits the pipeline; Weir runs it on its own container
 * threads (the default parallelism and containers of the machine).
 *
 * <pre>{@code
 * java -jar runner/benchmarks/target/benchmarks.jar FusedCountersBenchmark -f 2 -wi 3 -i 5
 * }</pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@State(Scope.Benchmark)
public class FusedCountersBenchmark {
  static final long ELEMENTS = 2_000_000L;
  static final int STEPS = 4;

  /** Weir's {@code --metricsEnabled}. */
  @Param({"true", "false"})
  public boolean metricsEnabled;

  /** One pipeline run, start to finish. */
  @Benchmark
  public PipelineResult.State runPipeline() {
    WeirPipelineOptions options = PipelineOptionsFactory.as(WeirPipelineOptions.class);
    options.setRunner(WeirRunner.class);
    options.setMetricsEnabled(metricsEnabled);
    Pipeline pipeline = Pipeline.create(options);
    PCollection<Long> values = pipeline.apply(GenerateSequence.from(0).to(ELEMENTS));
    for (int step = 0; step < STEPS; step++) {
      values = values.apply("Count" + step, ParDo.of(new CountAndPass("step" + step)));
    }
    values.apply("Drop", ParDo.of(new CountAndDrop()));
    PipelineResult result = pipeline.run();
    return result.waitUntilFinish();
  }

  /** Increments its counter and outputs the element. */
  static final class CountAndPass extends DoFn<Long, Long> {
    private final Counter elements;

    CountAndPass(String name) {
      this.elements = Metrics.counter(FusedCountersBenchmark.class, name);
    }

    @ProcessElement
    public void process(@Element Long value, OutputReceiver<Long> out) {
      elements.inc();
      out.output(value);
    }
  }

  /** Increments its counter and outputs nothing. */
  static final class CountAndDrop extends DoFn<Long, Void> {
    private final Counter elements = Metrics.counter(FusedCountersBenchmark.class, "dropped");

    @ProcessElement
    public void process(@Element Long value) {
      elements.inc();
    }
  }
}
