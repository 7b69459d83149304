package dev.weir.state.cache;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;

/**
 * The executor of a job's background sealing ({@link ObjectCache#ObjectCache(dev.weir.state.store.StateStorage,
 * ObjectCacheSettings, Executor)}): a queue of encodings that are taken by threads with nothing
 * else to do, not by threads that would compete with the run loops for a core.
 *
 * <ul>
 *   <li><b>Idle run loops</b> call {@link #runPending(int)} after an iteration in which they found
 *       no work, before they back off: a container whose input is momentarily dry encodes what
 *       a busier container sealed. With as many run loops as cores and keys spread unevenly over
 *       them (Nexmark Q10's 25 shard keys fall 17 to 8 over two partitions), this moves work from
 *       the busiest core to the idle time of the others, where a thread of its own would take turns
 *       with the busy run loop on the same cores.
 *   <li><b>Dedicated threads</b> ({@link #startThreads(int, String)}), for cores no run loop uses
 *       (fewer containers than cores): daemon threads that wait for jobs.
 * </ul>
 *
 * A job that nobody takes stays queued; the cache bounds how many of its values wait ({@link
 * BackgroundSealer#MAX_IN_FLIGHT}) and encodes inline beyond that, so an always-busy job degrades
 * to inline sealing rather than holding more objects.
 *
 * <p>Threading: every method is thread-safe. Jobs run on whichever thread takes them.
 */
public final class SealerQueue implements Executor, AutoCloseable {
  private final ConcurrentLinkedQueue<Runnable> jobs = new ConcurrentLinkedQueue<>();
  /** One permit per queued job, for dedicated threads to wait on (idle run loops poll instead). */
  private final Semaphore queued = new Semaphore(0);
  /** Dedicated threads; guarded by {@code this}. */
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean closed;

  /**
   * Queues {@code job}.
   *
   * @throws RejectedExecutionException if the queue was closed (the cache then encodes inline)
   */
  @Override
  public void execute(Runnable job) {
    if (closed) {
      throw new RejectedExecutionException("the sealer queue is closed");
    }
    jobs.offer(job);
    queued.release();
  }

  /**
   * Runs up to {@code max} queued jobs on the calling thread, e.g. a run loop that found no work.
   *
   * @return the number of jobs run
   */
  public int runPending(int max) {
    int n = 0;
    Runnable job;
    while (n < max && (job = jobs.poll()) != null) {
      job.run();
      n++;
    }
    return n;
  }

  /** Jobs queued and not yet taken (racy; for monitoring and tests). */
  public int pending() {
    return jobs.size();
  }

  /**
   * Starts {@code count} daemon threads named {@code namePrefix-N} that run queued jobs as they
   * come, until {@link #close()}.
   */
  public synchronized void startThreads(int count, String namePrefix) {
    for (int i = 0; i < count; i++) {
      Thread t = new Thread(this::work, namePrefix + "-" + (threads.size() + 1));
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
  }

  private void work() {
    try {
      while (!closed) {
        queued.acquire();
        Runnable job = jobs.poll(); // an idle run loop may have taken it: then wait again
        if (job != null) {
          job.run();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // closed
    }
  }

  /** Refuses further jobs, drops queued ones (their caches close with the job) and stops the dedicated threads. */
  @Override
  public synchronized void close() {
    closed = true;
    jobs.clear();
    threads.forEach(Thread::interrupt);
    threads.clear();
  }
}
