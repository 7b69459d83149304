package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.source.FinalizationRecordingSource;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.options.ExperimentalOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Checkpoint marks of an unbounded source read by a whole job: held for commit, finalized after it. */
class UnboundedSourceCheckpointTest {
  private static final long ELEMENTS = 20_000;

  @Test
  void checkpointMarks_areFinalizedAfterTheirElementsAreEmittedOncePerBundleNotPerElement() {
    String id = "pipeline-" + System.nanoTime();
    Pipeline p = Pipelines.create(true);
    p.apply(Read.from(new FinalizationRecordingSource(id, ELEMENTS)))
        .apply("CountEmitted", ParDo.of(new CountEmitted(id)));
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);

    FinalizationRecordingSource.Log log = FinalizationRecordingSource.log(id);
    assertThat(log.emitted.get()).isEqualTo(ELEMENTS);
    assertThat(log.taken).as("marks are taken per bundle, not per element")
        .isNotEmpty().hasSizeLessThan((int) (ELEMENTS / 100));
    assertThat(log.taken).as("the last mark covers the whole input").last().isEqualTo(ELEMENTS);
    assertThat(log.finalized).as("every mark finalized exactly once, in order")
        .extracting(f -> f[0]).containsExactlyElementsOf(log.taken);
    for (long[] f : log.finalized) {
      assertThat(f[1]).as("finalized mark at position %d before its elements were emitted", f[0])
          .isGreaterThanOrEqualTo(f[0]);
    }
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void checkpointMarks_readThroughTheSplittableDoFnWrapper_areFinalizedAfterTheirElementsWereEmitted(boolean streaming) {
    String id = "sdf-read-" + System.nanoTime();
    Pipeline p = Pipelines.create(streaming);
    // use_sdf_read keeps Read.Unbounded as Beam's UnboundedSourceAsSDFWrapperFn, which finalizes
    // the marks of its checkpoints through a BundleFinalizer
    ExperimentalOptions.addExperiment(p.getOptions().as(ExperimentalOptions.class), "use_sdf_read");
    p.apply(Read.from(new FinalizationRecordingSource(id, ELEMENTS)))
        .apply("CountEmitted", ParDo.of(new CountEmitted(id)));
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);

    FinalizationRecordingSource.Log log = FinalizationRecordingSource.log(id);
    assertThat(log.emitted.get()).as("each element exactly once").isEqualTo(ELEMENTS);
    assertThat(log.finalized).as("marks finalized while reading").isNotEmpty();
    for (long[] f : log.finalized) {
      assertThat(f[1]).as("finalized mark at position %d before its elements were emitted", f[0])
          .isGreaterThanOrEqualTo(f[0]);
    }
  }

  /** Counts the elements it sees into the source's log. */
  static final class CountEmitted extends DoFn<Long, Long> {
    private final String id;

    CountEmitted(String id) {
      this.id = id;
    }

    @ProcessElement
    public void process(@Element Long x, OutputReceiver<Long> out) {
      FinalizationRecordingSource.log(id).emitted.incrementAndGet();
      out.output(x);
    }
  }
}
