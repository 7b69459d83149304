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

    /**
     * Stops the job with a savepoint; see {@link WeirPipelineResult#stopWithSavepoint}.
     *
     * @throws UnsupportedOperationException where the environment cannot (the default)
     */
    default java.nio.file.Path stopWithSavepoint(long timeoutMs) throws Exception {
      throw new UnsupportedOperationException("stop with a savepoint is not supported on this execution environment");
    }

    /**
     * Drains the job; see {@link WeirPipelineResult#drain}.
     *
     * @throws UnsupportedOperationException where the environment cannot (the default)
     */
    default void drain() {
      throw new UnsupportedOperationException("drain is not supported on this execution environment");
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

      @Override
      public java.nio.file.Path stopWithSavepoint(long timeoutMs) throws Exception {
        return executor.stopWithSavepoint(timeoutMs);
      }

      @Override
      public void drain() {
        executor.drain();
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

  /**
   * Stops the job with a savepoint: a checkpoint is taken now, and once it is complete the job
   * ends ({@link State#CANCELLED}); started again with the same {@code --jobName} and
   * {@code --stateDirectory}, it resumes exactly there, with every element before the savepoint
   * processed once. Flink's {@code stop --savepointPath} is the anchor. Any thread.
   *
   * @param timeout how long to wait for the savepoint
   * @return the savepoint's directory ({@code <stateDirectory>/<jobName>/checkpoints/chk-<id>})
   * @throws IllegalStateException if the job takes no checkpoints (a batch job, the memory backend,
   *     {@code --checkpointingIntervalMs=0}, a {@code TestStream}) or ended first
   * @throws java.util.concurrent.TimeoutException if no checkpoint completed in time; the stop stays
   *     requested, and the job stops at the next checkpoint that completes
   * @throws UnsupportedOperationException on an execution environment without it (Samza)
   */
  public java.nio.file.Path stopWithSavepoint(Duration timeout) throws Exception {
    return executor.stopWithSavepoint(timeout.getMillis());
  }

  /**
   * Drains the job, as Beam defines drain: its sources read nothing more and end, watermarks advance
   * to the end of time, every window and timer fires, and the job then ends {@link State#DONE}.
   * Returns at once; {@link #waitUntilFinish} waits for the end. A splittable DoFn that never ends
   * (an unbounded read through a splittable DoFn) keeps a drained job running. Any thread.
   *
   * @throws UnsupportedOperationException on an execution environment without it (Samza)
   */
  public void drain() {
    executor.drain();
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
