package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job resuming a checkpoint taken at another parallelism asks its sources for as many splits as
 * the checkpoint's job did, so that every split finds its position; a job that will not resume
 * (fresh start asked, no checkpoint) splits for its own {@code --parallelism}.
 */
class JobRestoreTest {
  @TempDir Path base;

  private WeirSettings settings(String... extra) {
    List<String> args = new java.util.ArrayList<>(List.of("--jobName=job", "--stateDirectory=" + base,
        "--stateBackend=ROCKSDB", "--streaming", "--parallelism=4"));
    args.addAll(List.of(extra));
    return WeirSettings.from(PipelineOptionsFactory.fromArgs(args.toArray(String[]::new))
        .as(WeirPipelineOptions.class));
  }

  private void checkpointTakenSplittingSourcesFor(int sourceParallelism) throws IOException {
    CheckpointStore store = new CheckpointStore(base.resolve("job"), "job", 3);
    store.prepare(1);
    Files.createDirectories(store.containerDirectory(1, 0));
    store.complete(1, new PlanFingerprint(List.of("state cell layout 3")), 1, sourceParallelism);
  }

  @Test
  void aResumingJob_splitsItsSourcesAsTheCheckpointsJobDid_andKeepsItsParallelismForKeyedStages()
      throws IOException {
    checkpointTakenSplittingSourcesFor(2);
    WeirSettings resumed = JobRestore.withResumedSourceParallelism(settings());
    assertThat(resumed.sourceParallelism()).isEqualTo(2);
    assertThat(resumed.parallelism()).isEqualTo(4);
  }

  @Test
  void aJobStartingFresh_orWithoutACheckpoint_splitsForItsOwnParallelism() throws IOException {
    assertThat(JobRestore.withResumedSourceParallelism(settings()).sourceParallelism()).isEqualTo(4);
    checkpointTakenSplittingSourcesFor(2);
    assertThat(JobRestore.withResumedSourceParallelism(settings("--restoreMode=NONE")).sourceParallelism())
        .isEqualTo(4);
    assertThat(JobRestore.withResumedSourceParallelism(settings("--checkpointingIntervalMs=0")).sourceParallelism())
        .isEqualTo(4);
  }
}
