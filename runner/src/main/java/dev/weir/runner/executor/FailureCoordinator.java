package dev.weir.runner.executor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the containers of one job end together: the first failure of any container becomes the
 * job's cause and stops the others; a container whose tasks all ended normally waits for every
 * other container's loop before it tears its DoFns down; the last container to exit runs the job's
 * end ({@code onAllExited}) and then completes the job's future. Containers report here, never to
 * the executor that started them (Agrona's {@code AgentRunner} hands its agent an error handler the
 * same way).
 *
 * <p>Why the order matters (issue 17): closing a task tears its DoFns down, which may break what
 * other containers still use (KafkaIO's tests hand every writer instance one producer, which the
 * first teardown closed under the others); so a failure is recorded before the failing container
 * closes its tasks, later failures never replace the first, and a normal end tears down only once
 * every loop ended, as on Beam's Direct runner.
 *
 * <p>Threading: every method from any thread (container threads, and the thread that cancels);
 * the counters are guarded by this object's monitor.
 */
final class FailureCoordinator {
  private static final Logger LOG = LoggerFactory.getLogger(FailureCoordinator.class);

  /** A container as the coordinator sees it: something to stop. */
  @FunctionalInterface
  interface Stoppable {
    /** Asks the container's loop to end at its next iteration. Any thread; must not block. */
    void stop();
  }

  private final String jobName;
  private final CompletableFuture<Void> completion;
  /** The job's end, run once by the last container to exit: true if every container ended normally. */
  private final Consumer<Boolean> onAllExited;
  private final List<Stoppable> containers = new ArrayList<>();
  /** Counts down as each container's run loop ends, however it ends ({@link #loopEnded}). */
  private volatile CountDownLatch loopsEnded = new CountDownLatch(0);
  private int running;
  private int exited;
  private boolean failed;
  /** Whether the job's failure was logged ({@link #logFailure}). */
  private boolean failureLogged;
  /** The first failure any container reported ({@link #failing}): the job's cause. */
  private Throwable firstFailure;

  /**
   * @param jobName the job's name, for the failure's log line
   * @param completion the job's future: completed by the last container to exit, exceptionally
   *     with the first failure; a cancel completes it exceptionally from outside
   * @param onAllExited run once, on the last container thread to exit, before the future completes,
   *     with whether the job ended normally (no failure, no cancel)
   */
  FailureCoordinator(String jobName, CompletableFuture<Void> completion, Consumer<Boolean> onAllExited) {
    this.jobName = jobName;
    this.completion = completion;
    this.onAllExited = onAllExited;
  }

  /** The job's containers, before any starts. */
  synchronized void setContainers(List<? extends Stoppable> all) {
    containers.clear();
    containers.addAll(all);
    running = all.size();
    loopsEnded = new CountDownLatch(all.size());
  }

  /** Asks every container to stop at its next iteration. Idempotent. */
  void stopAll() {
    List<Stoppable> snapshot;
    synchronized (this) {
      snapshot = List.copyOf(containers);
    }
    for (Stoppable container : snapshot) {
      container.stop();
    }
  }

  /**
   * A container thread failed with {@code failure}, before it closes its tasks: the job's first
   * failure becomes its cause, and every container is asked to stop.
   */
  void failing(Throwable failure) {
    boolean first;
    synchronized (this) {
      first = firstFailure == null;
      if (first) {
        firstFailure = failure;
      }
    }
    if (first) {
      logFailure(failure);
    }
    stopAll();
  }

  /**
   * Logs the job's failure at ERROR, once, unless the job was cancelled: as soon as the first
   * failure is known, so that the line comes before the end-of-run summaries the job's end logs.
   * (Callers that only poll {@code getState()}, as Nexmark's launcher does, see the cause nowhere else.)
   */
  private void logFailure(Throwable cause) {
    synchronized (this) {
      if (failureLogged || cause instanceof CancellationException || completion.isCancelled()) {
        return;
      }
      failureLogged = true;
    }
    LOG.error("Weir job {} failed", jobName, cause);
  }

  /**
   * A container's run loop ended, before it closes its tasks. A container whose tasks all ended
   * normally ({@code awaitOthers}) then waits until every other container's loop ended too; a
   * failed or stopped one does not wait. Interruption ends the wait (flag kept).
   */
  void loopEnded(boolean awaitOthers) {
    CountDownLatch latch = loopsEnded;
    latch.countDown();
    if (!awaitOthers) {
      return;
    }
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * A container thread's last action (after it closed its state), with its failure or null. The
   * last one runs the job's end; the job completes when every container exited normally, or
   * exceptionally with the first failure.
   */
  void exited(Throwable failure) {
    boolean allExited;
    synchronized (this) {
      allExited = ++exited == containers.size();
      if (failure != null) {
        failed = true;
      }
    }
    if (allExited) {
      boolean normal;
      synchronized (this) {
        normal = !failed && !completion.isCompletedExceptionally();
      }
      onAllExited.accept(normal);
    }
    if (failure != null) {
      Throwable cause;
      synchronized (this) {
        cause = firstFailure == null ? failure : firstFailure;
      }
      if (completion.completeExceptionally(cause)) {
        logFailure(cause); // if no container reported it through failing() first
      }
      stopAll();
      return;
    }
    boolean last;
    synchronized (this) {
      last = --running == 0;
    }
    if (last) {
      completion.complete(null);
    }
  }
}
