package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import java.nio.file.Path;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crash tests' pipeline run once, uncrashed, in this JVM (streaming, RocksDB, two containers;
 * sequential, and with its ParDos on worker threads):
 * its files equal what {@link CrashablePipeline#expected} computes, so the crash tests compare
 * against a reference that is itself checked.
 */
class CrashablePipelineTest {
  private static final long COUNT = 20_000;

  @TempDir
  Path base;

  /** @param threads {@code --containerThreadPoolSize}: 0, or worker threads for every ParDo that may use them */
  @ParameterizedTest(name = "containerThreadPoolSize={0}")
  @ValueSource(ints = {0, 4})
  void anUncrashedRunWritesExactlyTheExpectedFiles(int threads) throws Exception {
    Path out = base.resolve("out");
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--streaming=true", "--parallelism=2",
        "--containers=2", "--stateBackend=rocksdb", "--jobName=crashable-reference",
        "--stateDirectory=" + base.resolve("state"), "--containerThreadPoolSize=" + threads,
        "--taskMaxConcurrency=3").as(WeirPipelineOptions.class);
    options.setRunner(WeirRunner.class);
    Pipeline p = Pipeline.create(options);
    CrashablePipeline.build(p, new PacedIndexSource(COUNT, 0, 2), out);
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);

    Map<String, String> expected = CrashablePipeline.expected(COUNT);
    // 5 windows x 13 keys of groups and of sums, 13 final states and tallies
    assertThat(expected).hasSize(5 * 13 * 2 + 13 * 2);
    assertThat(expected).containsEntry("final/key-00",
        "count=1539 sum=15385383 flushedTotal=15385383 ticks=5 processingTimerFired=true");
    assertThat(CrashablePipeline.read(out)).containsExactlyEntriesOf(expected);
  }
}
