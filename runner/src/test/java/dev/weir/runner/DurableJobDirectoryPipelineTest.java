package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.joda.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A streaming job's state directory seen from a pipeline author: named after the job, locked while
 * it runs (a second job with the same name fails naming the path and the pid), kept after a cancel;
 * and a thread interrupted in {@code waitUntilFinish()} sees the interruption instead of RUNNING.
 */
class DurableJobDirectoryPipelineTest {
  private static final String PID = Long.toString(ProcessHandle.current().pid());
  /** Counted down by the running job's DoFn: the job is past start-up and processing. */
  private static volatile CountDownLatch processing = new CountDownLatch(1);

  @TempDir
  Path base;

  static final class SignalFn extends DoFn<Long, Long> {
    @ProcessElement
    public void process(@Element Long n, OutputReceiver<Long> out) {
      processing.countDown();
      out.output(n);
    }
  }

  private Pipeline endless(String jobName, Class<? extends org.apache.beam.sdk.PipelineRunner<?>> runner) {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--streaming=true", "--parallelism=2",
        "--containers=2", "--stateBackend=ROCKSDB").as(WeirPipelineOptions.class);
    options.setRunner(runner);
    options.setJobName(jobName);
    options.setStateDirectory(base.toString());
    Pipeline p = Pipeline.create(options);
    p.apply(GenerateSequence.from(0).withRate(200, Duration.standardSeconds(1))).apply(ParDo.of(new SignalFn()));
    return p;
  }

  @Test
  void aRunningJobLocksItsDirectoryAndACancelledOneKeepsIt() throws Exception {
    processing = new CountDownLatch(1);
    PipelineResult first = endless("orders", WeirRunner.class).run();
    try {
      assertThat(processing.await(60, TimeUnit.SECONDS)).isTrue();
      assertThatThrownBy(() -> endless("orders", WeirRunner.class).run())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(base.resolve("orders").toString())
          .hasMessageContaining("held by process " + PID);
    } finally {
      assertThat(first.cancel()).isEqualTo(PipelineResult.State.CANCELLED);
    }
    first.waitUntilFinish();
    assertThat(base.resolve("orders/working/container-0")).as("state kept after cancel").isDirectory();
    assertThat(base.resolve("orders/working/container-1")).isDirectory();

    PipelineResult second = endless("orders", WeirRunner.class).run(); // the lock was released
    second.cancel();
  }

  @Test
  void anInterruptedWaitSurfacesTheInterruptionAndTheJobKeepsRunning() throws Exception {
    processing = new CountDownLatch(1);
    PipelineResult result = endless("interrupted-wait", WeirRunner.class).run();
    try {
      assertThat(processing.await(60, TimeUnit.SECONDS)).isTrue();
      Thread.currentThread().interrupt();
      assertThatThrownBy(result::waitUntilFinish)
          .isInstanceOf(RuntimeException.class)
          .hasCauseInstanceOf(InterruptedException.class);
      assertThat(Thread.interrupted()).as("interrupt flag kept").isTrue();
      assertThat(result.getState()).isEqualTo(PipelineResult.State.RUNNING);
    } finally {
      result.cancel();
    }
  }

  @Test
  void testWeirRunnerCancelsTheJobItOwnsWhenItsThreadIsInterrupted() throws Exception {
    processing = new CountDownLatch(1);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Pipeline pipeline = endless("owned", TestWeirRunner.class);
    Thread runner = new Thread(() -> {
      try {
        pipeline.run();
      } catch (Throwable t) {
        thrown.set(t);
      }
    });
    runner.start();
    assertThat(processing.await(60, TimeUnit.SECONDS)).isTrue();
    runner.interrupt();
    runner.join(TimeUnit.SECONDS.toMillis(60));
    assertThat(thrown.get()).isInstanceOf(RuntimeException.class).hasCauseInstanceOf(InterruptedException.class);
    // cancelled: its directory is unlocked, so a job with the same name starts
    PipelineResult next = endless("owned", WeirRunner.class).run();
    next.cancel();
    assertThat(Files.isDirectory(base.resolve("owned"))).isTrue();
  }
}
