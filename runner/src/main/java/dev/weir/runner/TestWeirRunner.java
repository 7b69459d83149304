package dev.weir.runner;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.testing.TestPipelineOptions;

/**
 * {@link WeirRunner} for tests ({@code --runner=TestWeirRunner}, used by Beam's TestPipeline):
 * runs the pipeline, waits for it to finish, and rethrows a failed {@code PAssert} as the
 * {@link AssertionError} it raised (Beam's ValidatesRunner tests expect exactly that).
 * Other failures surface as {@link Pipeline.PipelineExecutionException}. If the waiting thread
 * is interrupted, the job it owns is cancelled and the interruption surfaces (a
 * {@link RuntimeException} caused by the {@link InterruptedException}, interrupt flag set) instead
 * of a misleading PAssert count.
 *
 * <p>{@code TestPipelineOptions#blockOnRun=false} (Beam's way to test a pipeline that never ends,
 * e.g. KafkaIO's partition watch: run, {@code waitUntilFinish(duration)}, cancel) returns the
 * running job at once, as Beam's Direct runner does; a failed PAssert then surfaces from
 * {@code waitUntilFinish} as the cause of its {@link Pipeline.PipelineExecutionException}.
 * Before (issue 17) this runner always waited, so such a test never got past {@code run}. It also
 * marks metrics unsupported ({@link MetricsEnvironment#setMetricsSupported}) before returning the
 * running job, so that TestPipeline does not count successful PAsserts of a job that has not run
 * them yet; Beam's Direct runner does the same after every run. A later run marks them supported
 * again ({@link WeirRunner}).
 *
 * <p>Threading: as {@link WeirRunner}; {@link #run} blocks the calling thread unless
 * {@code blockOnRun} is false.
 */
public final class TestWeirRunner extends PipelineRunner<WeirPipelineResult> {
  private final WeirRunner delegate;
  private final boolean blockOnRun;

  private TestWeirRunner(WeirRunner delegate, boolean blockOnRun) {
    this.delegate = delegate;
    this.blockOnRun = blockOnRun;
  }

  /** Creates a test runner from options; called by Beam for {@code --runner=TestWeirRunner}. */
  public static TestWeirRunner fromOptions(PipelineOptions options) {
    return new TestWeirRunner(WeirRunner.fromOptions(options), options.as(TestPipelineOptions.class).isBlockOnRun());
  }

  @Override
  public WeirPipelineResult run(Pipeline pipeline) {
    WeirPipelineResult result = delegate.run(pipeline);
    if (!blockOnRun) {
      MetricsEnvironment.setMetricsSupported(false); // TestPipeline counts PAsserts only if supported
      return result;
    }
    try {
      result.waitUntilFinish();
    } catch (Pipeline.PipelineExecutionException e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof AssertionError assertion) {
          throw assertion;
        }
        if (t.getCause() == t) {
          break;
        }
      }
      throw e;
    } catch (RuntimeException e) {
      if (e.getCause() instanceof InterruptedException) {
        boolean interrupted = Thread.interrupted(); // so that cancel() may wait for the job's threads
        result.cancel(); // this runner owns the job: nobody else would stop it
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
      throw e;
    }
    return result;
  }
}
