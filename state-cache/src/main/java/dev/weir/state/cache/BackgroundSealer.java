package dev.weir.state.cache;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.util.CoderUtils;

/**
 * Encodes an {@link ObjectCache}'s sealed values ({@link CachedStore#putSealed}) on other threads,
 * so that the cache's owning thread (a container's run loop) does not spend its time in coders for
 * values it will not touch again.
 *
 * <h2>How</h2>
 *
 * A sealed put caches the value as an object, DIRTY like any put, and hands the value and its coder
 * to an executor (a job's {@link SealerQueue}: idle run loops and threads on spare cores). The
 * encoded bytes come back through a queue that only the owning thread drains
 * ({@link ObjectCache#safePoint()}, {@link ObjectCache#flush()}, and the next sealed put): if the
 * entry still holds that very value object, the bytes take its place, exactly as a synchronous
 * sealed put would have left it; if the value was replaced, deleted or evicted meanwhile, the bytes
 * are dropped. Until then the entry is an ordinary object entry: a read returns the object without
 * decoding, and a write-back (flush, commit, eviction) encodes it on the owning thread as it would
 * any object. A coder that fails on the sealer thread is not reported there: the entry stays an
 * object, and the write-back's own encoding fails with the coder's exception on the owning thread,
 * where every other coder failure is reported.
 *
 * <h2>Bounds</h2>
 *
 * At most {@value #MAX_IN_FLIGHT} values per cache wait for a sealer; a sealed put beyond that
 * encodes on the calling thread, as without a sealer. So values waiting as objects stay bounded
 * (a bag's 64-element chunks: at most about 16,000 elements per container), and when no core is
 * free for the sealers the owning thread takes the work back rather than letting it pile up.
 *
 * <h2>Why it is safe</h2>
 *
 * Beam requires every method of a {@link Coder} to be thread safe. A sealed value is one its writer
 * promised not to change again ({@link CachedStore#putSealed}), so the sealer thread and the owning
 * thread only ever read it; the executor's hand-off and the completion queue order the writes
 * before and after. Everything else about the entry (its state, its value, the byte bound) is
 * changed on the owning thread only, as before.
 *
 * <p>The idea follows storage engines that keep encoding and compaction off the thread that serves
 * writes (RocksDB's background flushes, Flink's asynchronous snapshot phase), applied to one value
 * at a time.
 *
 * <p>Threading: {@link #trySubmit} and {@link #drain} on the cache's owning thread; the encoding on
 * the executor's threads.
 */
final class BackgroundSealer {
  /** Values per cache that may wait for a sealer at once; beyond this a sealed put encodes inline. */
  static final int MAX_IN_FLIGHT = 256;

  private final Executor executor;
  /** Finished jobs, in any order; offered by sealer threads, polled by the owning thread. */
  private final ConcurrentLinkedQueue<Job> done = new ConcurrentLinkedQueue<>();
  /** Jobs submitted and not yet drained. Owning thread only. */
  private int inFlight;

  BackgroundSealer(Executor executor) {
    this.executor = executor;
  }

  /** A value on its way to its encoding. */
  static final class Job implements Runnable {
    final CacheEntry entry;
    final Object value;
    private final Coder<Object> coder;
    private final ConcurrentLinkedQueue<Job> done;
    /** The encoding, or null if the coder failed; written before the job is offered to {@code done}. */
    byte[] encoded;

    @SuppressWarnings("unchecked")
    Job(CacheEntry entry, Object value, Coder<?> coder, ConcurrentLinkedQueue<Job> done) {
      this.entry = entry;
      this.value = value;
      this.coder = (Coder<Object>) coder;
      this.done = done;
    }

    @Override
    public void run() {
      try {
        encoded = CoderUtils.encodeToByteArray(coder, value);
      } catch (Exception | LinkageError e) {
        encoded = null; // the owning thread's write-back encodes again and reports the failure
      } finally {
        done.offer(this);
      }
    }
  }

  /**
   * Hands {@code value}, just cached in {@code entry}, to a sealer.
   *
   * @return false if {@value #MAX_IN_FLIGHT} values already wait or the executor refused the job:
   *     the caller then encodes inline
   */
  boolean trySubmit(CacheEntry entry, Object value, Coder<?> coder) {
    if (inFlight >= MAX_IN_FLIGHT) {
      return false;
    }
    try {
      executor.execute(new Job(entry, value, coder, done));
    } catch (RejectedExecutionException e) {
      return false;
    }
    inFlight++;
    return true;
  }

  /** Whether a sealed put would be handed to a sealer now (fewer than {@value #MAX_IN_FLIGHT} wait). */
  boolean hasRoom() {
    return inFlight < MAX_IN_FLIGHT;
  }

  /** Whether finished jobs wait to be installed. Owning thread only. */
  boolean hasDone() {
    return !done.isEmpty();
  }

  /** Hands every finished job to {@code install}, on the owning thread. */
  void drain(java.util.function.Consumer<Job> install) {
    Job job;
    while ((job = done.poll()) != null) {
      inFlight--;
      install.accept(job);
    }
  }
}
