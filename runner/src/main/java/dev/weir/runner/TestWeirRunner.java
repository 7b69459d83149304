package dev.weir.runner;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * {@link WeirRunner} for tests ({@code --runner=TestWeirRunner}, used by Beam's TestPipeline):
 * runs the pipeline, waits for it to finish, and rethrows a failed {@code PAssert} as the
 * {@link AssertionError} it raised (Beam's ValidatesRunner tests expect exactly that).
 * Other failures surface as {@link Pipeline.PipelineExecutionException}. If the waiting thread
 * is interrupted, the job it owns is cancelled and the interruption surfaces (a
 * {@link RuntimeException} caused by the {@link InterruptedException}, interrupt flag set) instead
 * of a misleading PAssert count.
 *
 * <p>Threading: as {@link WeirRunner}; {@link #run} blocks the calling thread.
 */
public final class TestWeirRunner extends PipelineRunner<WeirPipelineResult> {
  private final WeirRunner delegate;

  private TestWeirRunner(WeirRunner delegate) {
    this.delegate = delegate;
  }

  /** Creates a test runner from options; called by Beam for {@code --runner=TestWeirRunner}. */
  public static TestWeirRunner fromOptions(PipelineOptions options) {
    return new TestWeirRunner(WeirRunner.fromOptions(options));
  }

  @Override
  public WeirPipelineResult run(Pipeline pipeline) {
    WeirPipelineResult result = delegate.run(pipeline);
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
