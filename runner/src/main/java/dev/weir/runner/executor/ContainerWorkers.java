package dev.weir.runner.executor;

import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.operators.ProcessElementWorkers;
import dev.weir.runner.operators.StepRunner;
import dev.weir.runner.time.Quiescence;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A container's worker threads for concurrent {@code @ProcessElement} ({@code --containerThreadPoolSize}
 * threads, Samza's {@code job.container.thread.pool.size}) and the way back to its loop (its
 * {@link Mailbox}). Created by the container only when the job asks for workers; threads start on
 * first use, so a container whose tasks have no concurrent ParDo starts none.
 *
 * <p>Steps on workers: a worker thread has its own {@link StepScope} (metrics switch and profiling
 * spans are per thread). The first time a worker runs code of a container step it builds a step
 * of its own for the same PTransform, over the same metrics container with unbuffered cells:
 * runners-core's cells are safe for many writers, and the container thread's buffered cells are
 * not, so user metrics from workers land in the same PTransform's attempted values directly, and
 * an async-profiler recording tags the worker's samples with the PTransform too.
 *
 * <p>Shutdown ({@link #shutdown()}, by the container after its loop ended, before it closes its
 * tasks): running calls are interrupted and waited for up to {@value #SHUTDOWN_WAIT_MS} ms;
 * queued ones never start.
 *
 * <p>Threading: {@link #execute}, {@link #started}, {@link #completed} and {@link #shutdown} on the
 * container thread; {@link #toLoop} from any thread.
 */
final class ContainerWorkers implements ProcessElementWorkers {
  private static final Logger LOG = LoggerFactory.getLogger(ContainerWorkers.class);
  /** How long {@link #shutdown()} waits for interrupted calls to return, in ms. */
  static final long SHUTDOWN_WAIT_MS = 10_000L;

  private final String name;
  private final ThreadPoolExecutor pool;
  private final Mailbox mailbox;
  private final int taskMaxConcurrency;
  /** The job's quiescence tracker (test streams), or null. */
  private final Quiescence quiescence;

  /**
   * @param containerThread the container's thread name; workers are named after it
   * @param threads worker threads, at least 1
   * @param taskMaxConcurrency elements in flight per concurrent ParDo per task, at least 1
   * @param mailbox the container's mailbox
   * @param quiescence the job's quiescence tracker, or null
   */
  ContainerWorkers(String containerThread, int threads, int taskMaxConcurrency, Mailbox mailbox,
      Quiescence quiescence) {
    this.name = containerThread;
    this.mailbox = mailbox;
    this.taskMaxConcurrency = taskMaxConcurrency;
    this.quiescence = quiescence;
    AtomicInteger next = new AtomicInteger();
    this.pool = new ThreadPoolExecutor(threads, threads, 0L, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
        call -> new WorkerThread(call, containerThread + "-worker-" + next.getAndIncrement()));
  }

  @Override
  public void execute(StepRunner step, Runnable call) {
    pool.execute(new InStep(step, call));
  }

  @Override
  public void toLoop(Runnable letter) {
    mailbox.put(letter);
  }

  @Override
  public boolean onLoopThread() {
    return mailbox.isOwner();
  }

  @Override
  public int taskMaxConcurrency() {
    return taskMaxConcurrency;
  }

  @Override
  public void started() {
    if (quiescence != null) {
      quiescence.sent();
    }
  }

  @Override
  public void completed() {
    if (quiescence != null) {
      quiescence.processed();
    }
  }

  /**
   * Interrupts running calls, drops queued ones and waits up to {@value #SHUTDOWN_WAIT_MS} ms for
   * the running ones to return. Idempotent.
   */
  void shutdown() {
    pool.shutdownNow();
    try {
      if (!pool.awaitTermination(SHUTDOWN_WAIT_MS, TimeUnit.MILLISECONDS)) {
        LOG.warn("Worker threads of {} still run user code {} ms after they were interrupted; leaving them", name,
            SHUTDOWN_WAIT_MS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A call to run in a PTransform's step on a worker. */
  private record InStep(StepRunner step, Runnable call) implements Runnable {
    @Override
    public void run() {
      ((WorkerThread) Thread.currentThread()).run(step, call);
    }
  }

  /** A worker: its own step scope, and its own step per container step it ran code of. */
  private static final class WorkerThread extends Thread {
    private final StepScope scope = new StepScope();
    private final Map<StepRunner, StepScope.Step> steps = new IdentityHashMap<>();

    WorkerThread(Runnable work, String name) {
      super(work, name);
      setDaemon(true);
    }

    @Override
    public void run() {
      scope.installOnCurrentThread();
      super.run();
    }

    /** Runs {@code call} in this thread's step for {@code step}'s PTransform. */
    void run(StepRunner step, Runnable call) {
      if (!(step instanceof StepScope.Step containerStep)) {
        step.run(call); // a step that is not a scope's (tests): as given
        return;
      }
      StepScope.Step own = steps.get(step);
      if (own == null) {
        own = scope.step(containerStep.name(), containerStep.metricsContainer());
        steps.put(step, own);
      }
      own.run(call);
    }
  }
}
