package dev.weir.runner.source;

import dev.weir.runner.metrics.StepScope;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.time.JobClock;
import dev.weir.runner.translation.SourceSpec;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.values.WindowedValue;
import org.junit.jupiter.api.Test;

/** An unbounded split's checkpoint marks, driven directly: taken on request, finalized only when told. */
class SourcePartitionCheckpointTest {

  @Test
  void marksAreTakenOnlyAfterReadsAndFinalizedOnlyWhenTheCommitIsReported() {
    SourcePartition partition = SourcePartition.create(
        new SourceSpec.Unbounded(List.of(new FinalizationRecordingSource("partition-unit", 100))),
        "s", 0, "t", JobClock.SYSTEM, null);
    FinalizationRecordingSource.Log log = FinalizationRecordingSource.log("partition-unit");
    StepScope scope = new StepScope();
    partition.open(new SourceContext(PipelineOptionsFactory.create(), scope, scope.step("read", null)));
    try {
      assertThat(partition.checkpoint()).as("nothing read yet").isFalse();
      int elements = 0;
      while (elements < 10) {
        if (partition.poll() instanceof WindowedValue<?>) {
          elements++;
        }
      }
      assertThat(log.taken).as("reading takes no marks").isEmpty();

      assertThat(partition.checkpoint()).isTrue();
      assertThat(log.taken).containsExactly(10L);
      assertThat(partition.hasHeldCheckpoints()).isTrue();
      assertThat(log.finalized).as("held until the commit").isEmpty();
      assertThat(partition.checkpoint()).as("no reads since the last mark").isFalse();

      partition.poll();
      assertThat(partition.checkpoint()).isTrue();
      assertThat(log.finalized).isEmpty();

      partition.finalizeCheckpoints();
      assertThat(log.finalized).extracting(f -> f[0]).containsExactly(10L, 11L);
      assertThat(partition.hasHeldCheckpoints()).isFalse();
      partition.finalizeCheckpoints();
      assertThat(log.finalized).as("each mark finalized once").hasSize(2);
    } finally {
      partition.close();
    }
  }
}
