package dev.weir.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Runs {@link BatchPerUser}'s stateful DoFn on Weir in streaming mode and checks its batches:
 * every event comes out exactly once, in a batch of its own user, no batch is larger than the
 * limit, and events left in a partial batch are flushed by the event-time timer.
 */
class BatchPerUserTest {
  private static final long NUM_ELEMENTS = 403;

  @Test
  void fullBatchesLeaveAtOnceAndTheRestWhenTheirTimerFires() {
    runAndCheck(10, 200);
  }

  @Test
  void onlyTheTimerFlushesWhenBatchesNeverFill() {
    // No batch can reach 1,000 events: everything that comes out was flushed by a timer.
    runAndCheck(1000, 200);
  }

  private static void runAndCheck(int maxBatchSize, long maxDelayMs) {
    BatchPerUser.Options options = PipelineOptionsFactory
        .fromArgs(OnWeir.args("--streaming=true", "--numElements=" + NUM_ELEMENTS,
            "--elementsPerSecond=2000", "--maxBatchSize=" + maxBatchSize, "--maxDelayMs=" + maxDelayMs))
        .withValidation().as(BatchPerUser.Options.class);
    Pipeline pipeline = Pipeline.create(options);
    PCollection<KV<String, List<Long>>> batches =
        BatchPerUser.events(pipeline, options.getNumElements(), options.getElementsPerSecond())
            .apply(ParDo.of(new BatchPerUser.BatchFn(options.getMaxBatchSize(), Duration.millis(options.getMaxDelayMs()))));
    PAssert.that(batches).satisfies(new CheckBatches(maxBatchSize));

    assertThat(pipeline.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
  }

  /** Checks all batches at once (PAssert hands them over as one iterable). */
  private static final class CheckBatches implements SerializableFunction<Iterable<KV<String, List<Long>>>, Void> {
    private final int maxBatchSize;

    CheckBatches(int maxBatchSize) {
      this.maxBatchSize = maxBatchSize;
    }

    @Override
    public Void apply(Iterable<KV<String, List<Long>>> batches) {
      Map<String, List<Long>> seen = new TreeMap<>();
      for (KV<String, List<Long>> batch : batches) {
        assertThat(batch.getValue()).isNotEmpty().hasSizeLessThanOrEqualTo(maxBatchSize);
        for (long n : batch.getValue()) {
          assertThat(BatchPerUser.userOf(n)).isEqualTo(batch.getKey());
        }
        seen.computeIfAbsent(batch.getKey(), k -> new ArrayList<>()).addAll(batch.getValue());
      }
      Map<String, List<Long>> expected = new TreeMap<>();
      for (long n = 0; n < NUM_ELEMENTS; n++) {
        expected.computeIfAbsent(BatchPerUser.userOf(n), k -> new ArrayList<>()).add(n);
      }
      assertThat(seen.keySet()).isEqualTo(expected.keySet());
      expected.forEach((user, events) -> assertThat(seen.get(user)).containsExactlyInAnyOrderElementsOf(events));
      return null;
    }
  }
}
