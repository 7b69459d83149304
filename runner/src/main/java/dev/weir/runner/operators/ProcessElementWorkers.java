package dev.weir.runner.operators;

import org.apache.beam.sdk.annotations.Internal;

/**
 * What a concurrent ParDo ({@link ConcurrentParDoOperator}) gets from the container that runs its
 * task: worker threads to run {@code @ProcessElement} on, the container's mailbox to hand each
 * completed element back through, and the bound on elements in flight. Samza's anchors:
 * {@code job.container.thread.pool.size} (here {@code --containerThreadPoolSize}) and
 * {@code task.max.concurrency} ({@code --taskMaxConcurrency}).
 *
 * <p>Threading: {@link #execute}, {@link #started} and {@link #completed} on the container thread;
 * {@link #toLoop} from any thread (a worker's).
 */
@Internal
public interface ProcessElementWorkers {

  /**
   * Runs {@code call} on one of the container's worker threads, with {@code step}'s PTransform as
   * that thread's running step (its Beam metrics container current, its profiling span open), so
   * user code counts for its own PTransform there too. Never blocks: the pool's queue is unbounded
   * and callers bound what they hand it.
   *
   * @param step the operator's step as its context gave it ({@link OperatorContext#step()})
   */
  void execute(StepRunner step, Runnable call);

  /** Hands {@code letter} to the container's run loop (its mailbox). Any thread; never blocks. */
  void toLoop(Runnable letter);

  /** Whether the calling thread is the container's (the loop's) thread. */
  boolean onLoopThread();

  /** Elements one operator of one task may have in flight at most ({@code --taskMaxConcurrency}), at least 1. */
  int taskMaxConcurrency();

  /** An element went to a worker: in flight for a test stream's quiescence (a no-op without one). */
  void started();

  /** An element in flight completed and its outputs went on: no longer in flight. */
  void completed();
}
