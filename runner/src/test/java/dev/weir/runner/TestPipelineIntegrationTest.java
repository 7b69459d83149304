package dev.weir.runner;

import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.NeedsRunner;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.junit.Rule;
import org.junit.Test;
import org.junit.experimental.categories.Category;

/**
 * Beam's own JUnit 4 harness (TestPipeline, run through the vintage engine) on TestWeirRunner:
 * TestPipeline counts the PAssert success counters per step after the run, so this also proves
 * that metrics are scoped per PTransform.
 */
public class TestPipelineIntegrationTest {

  @Rule
  public final transient TestPipeline pipeline = TestPipeline.fromOptions(
      PipelineOptionsFactory.fromArgs("--runner=TestWeirRunner", "--parallelism=3", "--containers=2")
          .create());

  @Test
  @Category(NeedsRunner.class)
  public void countPerElement_passesTestPipelinesAssertionCount() {
    PCollection<KV<String, Long>> counts =
        pipeline.apply(Create.of("x", "y", "x", "z", "x")).apply(Count.perElement());
    PAssert.that(counts).containsInAnyOrder(KV.of("x", 3L), KV.of("y", 1L), KV.of("z", 1L));
    PAssert.thatSingleton(pipeline.apply("Single", Create.of(7))).isEqualTo(7);
    pipeline.run();
  }
}
