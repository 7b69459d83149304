package dev.weir.runner;

import dev.weir.runner.operators.FailureContext;
import dev.weir.runner.executor.JobExecutor;
import dev.weir.runner.metrics.RunLoopMetrics;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricResults;
import org.apache.beam.sdk.util.UserCodeException;
import org.joda.time.Duration;

/**
 * The handle of a running or finished Weir job.
 *
 * <p>States: RUNNING until every task reached end of stream (DONE), a task failed (FAILED) or
 * {@link #cancel()} stopped it (CANCELLED). A failed job's {@code waitUntilFinish} throws
 * {@link Pipeline.PipelineExecutionException} whose cause is the user's exception (unwrapped from
 * Beam's {@link UserCodeException}); where it failed (transform, task) is attached to it as
 * suppressed {@link FailureContext}s.
 *
 * <p>Threading: every method may be called from any thread.
 */
public final class WeirPipelineResult implements PipelineResult {
  /**
   * A running job as this result sees it: the embedded {@link JobExecutor}, or a job an
   * {@link ExecutionEnvironmentProvider} runs elsewhere (e.g. on samza-core). Every method may be
   * called from any thread.
   */
  public interface Handle {
    /**
     * Completes normally when the job ends normally; exceptionally with the job's failure, or a
     * {@link CancellationException} after {@link #cancel()}.
     */
    java.util.concurrent.CompletableFuture<Void> completion();

    /** Beam metrics so far (attempted and committed values). */
    MetricResults metrics();

    /** Stops the job (idempotent; no effect on a finished job). */
    void cancel();

    /** Waits up to {@code millis} ms for the job's threads to exit after it completed. */
    void awaitThreads(long millis);

    /** Per container, where its run loop spends its time; empty where the environment has none. */
    default List<RunLoopMetrics.Snapshot> runLoopMetrics() {
      return List.of();
    }
  }

  private final Handle executor;

  WeirPipelineResult(JobExecutor executor) {
    this(new Handle() {
      @Override
      public java.util.concurrent.CompletableFuture<Void> completion() {
        return executor.completion();
      }

      @Override
      public MetricResults metrics() {
        return executor.metrics();
      }

      @Override
      public void cancel() {
        executor.cancel();
      }

      @Override
      public void awaitThreads(long millis) {
        executor.awaitThreads(millis);
      }

      @Override
      public List<RunLoopMetrics.Snapshot> runLoopMetrics() {
        return executor.runLoopMetrics();
      }
    });
  }

  private WeirPipelineResult(Handle handle) {
    this.executor = handle;
  }

  /** The result of a job that {@code handle} runs (for {@link ExecutionEnvironmentProvider}s). */
  public static WeirPipelineResult of(Handle handle) {
    return new WeirPipelineResult(handle);
  }

  @Override
  public State getState() {
    var completion = executor.completion();
    if (!completion.isDone()) {
      return State.RUNNING;
    }
    try {
      completion.join();
      return State.DONE;
    } catch (CancellationException e) {
      return State.CANCELLED;
    } catch (CompletionException e) {
      return e.getCause() instanceof CancellationException ? State.CANCELLED : State.FAILED;
    }
  }

  /**
   * Per container, where its run loop has spent its time so far: cumulative ns per phase,
   * iterations and utilization ({@link RunLoopMetrics}). Any thread, also while the job runs.
   */
  public List<RunLoopMetrics.Snapshot> runLoopMetrics() {
    return executor.runLoopMetrics();
  }

  /** Stops all containers within about a second and closes every task. */
  @Override
  public State cancel() {
    executor.cancel();
    return getState();
  }

  /**
   * Waits up to {@code duration} (null or non-positive: forever).
   *
   * @return the state; RUNNING if the time ran out
   * @throws Pipeline.PipelineExecutionException if the job failed
   * @throws RuntimeException whose cause is the {@link InterruptedException} if the waiting thread
   *     was interrupted (its interrupt flag stays set; the job keeps running: the caller decides
   *     whether to {@link #cancel()} it), as Beam's Direct runner does
   */
  @Override
  public State waitUntilFinish(Duration duration) {
    try {
      if (duration == null || duration.getMillis() <= 0) {
        executor.completion().get();
      } else {
        executor.completion().get(duration.getMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (TimeoutException e) {
      return State.RUNNING;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // as Beam's Direct runner: surface it, flag kept
      throw new RuntimeException("Interrupted while waiting for the Weir job to finish; the job is still "
          + "running (cancel() stops it)", e);
    } catch (CancellationException e) {
      return State.CANCELLED;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof CancellationException) {
        executor.awaitThreads(1000);
        return State.CANCELLED;
      }
      executor.awaitThreads(1000);
      throw new Pipeline.PipelineExecutionException(userCause(e.getCause()));
    }
    executor.awaitThreads(1000);
    return State.DONE;
  }

  /** Waits until the job finishes; see {@link #waitUntilFinish(Duration)}. */
  @Override
  public State waitUntilFinish() {
    return waitUntilFinish(Duration.ZERO);
  }

  /**
   * Metrics, one result per (step, metric), readable while the job runs: attempted values (every
   * update so far) and committed values (as of each container's last commit; equal to the attempted
   * ones once the job finished normally). A metric not committed yet reads as committed zero.
   */
  @Override
  public MetricResults metrics() {
    return executor.metrics();
  }

  private static Throwable userCause(Throwable t) {
    return FailureContext.userCause(t);
  }
}
