package dev.weir.runner.checkpoint;

import java.util.function.LongSupplier;
import java.util.function.BooleanSupplier;
import org.apache.beam.sdk.annotations.Internal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides when a job takes a checkpoint and holds its containers together while it does.
 *
 * <h2>Why stop, drain and snapshot, and not aligned barriers</h2>
 *
 * A checkpoint must be a consistent cut: no element both inside the checkpoint's state and still in
 * flight between stages, nor in neither. Flink gets one without stopping, by aligned barriers that
 * flow through the streams (Carbone et al., "Lightweight Asynchronous Snapshots for Distributed
 * Dataflows", 2015): each task snapshots when the barrier has arrived on all its inputs. That pays
 * off when stopping is expensive: many machines, deep queues, large state to upload. Weir's
 * embedded executor runs every task of a job in one process, its in-process streams hold at most a
 * few thousand envelopes, and the state snapshot is a RocksDB checkpoint (hard links, milliseconds).
 * So a checkpoint here is a short pause instead, which needs no barrier envelopes, no alignment
 * buffers and no change to how any operator handles its input:
 *
 * <ol>
 *   <li><b>Pause</b> ({@link Phase#PAUSING}): when {@code --checkpointingIntervalMs} has passed, the
 *       containers stop polling source splits and stop firing processing-time timers (both are the
 *       only things that create new work); everything already in flight goes on.
 *   <li><b>Drain</b>: each container runs until it is <em>quiet</em>: no envelope left on its
 *       inputs, its tasks' outboxes empty, no timer firing pending, no bundle open (elements pushed
 *       back for a side input are written into the checkpoint, except a splittable DoFn's, which
 *       it waits for). It then waits at the coordinator ({@link #arriveQuiet}). When
 *       every live container waits, nothing can move, and the coordinator checks that every
 *       in-process stream is empty: then the job is quiescent; if not (a container became quiet
 *       before its upstream sent its last output), all go on draining and wait again.
 *   <li><b>Snapshot</b> ({@link Phase#SNAPSHOT}): each container, on its own thread, writes its tasks'
 *       heap state (source positions, watermarks, processing-time timers, side inputs) into its
 *       store's commit metadata, commits its store and writes a RocksDB checkpoint of it; the last
 *       one to finish writes the manifest ({@link CheckpointStore#complete}). Only then are the
 *       sources' checkpoint marks finalized (each container for its own splits), and the job goes
 *       on.
 * </ol>
 *
 * The pause costs the time the job needs to drain (one run-loop pass of in-flight work, typically
 * milliseconds) plus the commit and the RocksDB checkpoint; {@link #stats()} records it. A
 * job that cannot become quiescent within {@link #pauseTimeoutNs} (e.g. a splittable DoFn's element
 * waits for a side input that only the paused sources can complete) skips that checkpoint with a
 * warning and tries again one interval later.
 *
 * <h2>Stop with a savepoint</h2>
 *
 * {@link #requestStop()} makes a checkpoint due at once; when one completes after the request, the
 * phase becomes {@link Phase#STOPPED} instead of {@code RUNNING}: sources and processing-time
 * timers stay paused (so nothing moves: the job was quiescent), no further checkpoint starts, and
 * the request's future completes with the checkpoint's id, the <em>savepoint</em>, for the caller
 * to end the job. An attempt that is skipped or fails is retried at once. (Flink's
 * stop-with-savepoint is the anchor; here the savepoint is an ordinary complete checkpoint, the
 * newest, so a restart under the same name resumes from it.)
 *
 * <p>Containers whose tasks are all done keep taking part (their state belongs to every later
 * checkpoint), so a container leaves only when the job ends, fails or is cancelled
 * ({@link #leave}).
 *
 * <h2>Threading</h2>
 *
 * {@link #phase()} is a volatile read, called by every container on every run-loop pass; the
 * rest is guarded by this object's monitor and called by container threads, which block in
 * {@link #arriveQuiet} and {@link #snapshotDone} while others finish. {@link #stats()} may be
 * read from any thread.
 */
@Internal
public final class CheckpointCoordinator {
  private static final Logger LOG = LoggerFactory.getLogger(CheckpointCoordinator.class);
  private static final long WAIT_SLICE_MS = 5;
  /** Pauses kept for {@link #summary()}: enough for hours of checkpoints at 1 s. */
  private static final int MAX_RECORDED_PAUSES = 100_000;
  /** Every completed checkpoint's pause, ns, in order (up to {@link #MAX_RECORDED_PAUSES}); under the monitor. */
  private final java.util.List<Long> pausesNs = new java.util.ArrayList<>();

  /** What the containers do about checkpoints now. */
  public enum Phase {
    /** No checkpoint in progress. */
    RUNNING,
    /** Sources paused; containers drain and wait until all are quiet. */
    PAUSING,
    /** The job is quiescent; every container writes its part. */
    SNAPSHOT,
    /**
     * A stop's checkpoint completed ({@link #requestStop()}): the job stays quiescent, paused, until
     * it is ended.
     */
    STOPPED
  }

  /** Writes the manifest of a checkpoint whose container parts are all written; returns its size in bytes. */
  @FunctionalInterface
  public interface Completer {
    /**
     * @param id the checkpoint's id
     * @return the checkpoint's size in bytes
     */
    long complete(long id);
  }

  private final long intervalNs;
  private final long pauseTimeoutNs;
  private final BooleanSupplier streamsEmpty;
  private final Completer completer;
  private final boolean[] live;
  private final boolean[] arrived;
  private final boolean[] done;
  private int doneCount;
  /** Per container: whether it reported its part of the current snapshot. */
  private final boolean[] reported;
  private int liveCount;
  private int arrivedCount;
  private int snapshotsPending;
  private Throwable snapshotFailure;
  /** Incremented whenever a drain round or a snapshot resolves; waiters wake on a change. */
  private long epoch;
  private boolean lastRoundQuiescent;
  private boolean lastSnapshotCompleted;
  private volatile Phase phase = Phase.RUNNING;
  private volatile long nextDueNs;
  private long pauseStartNs;
  private long checkpointId;
  /** The checkpoints so far; replaced under the monitor, read from any thread. */
  private volatile CheckpointStats stats;
  /** Whether a stop was requested ({@link #requestStop()}); under the monitor. */
  private boolean stopRequested;
  /** Completes with the stop's checkpoint id ({@link #requestStop()}). */
  private final java.util.concurrent.CompletableFuture<Long> stopped = new java.util.concurrent.CompletableFuture<>();
  /** The time source, ns ({@link System#nanoTime()} but in tests). */
  private final LongSupplier nanoClock;

  /**
   * @param containers the job's containers, all live at start
   * @param intervalMs ms between the end of one checkpoint (or skipped attempt) and the next
   * @param lastCheckpointId the id of the checkpoint the job restored from, 0 if none
   * @param streamsEmpty whether every in-process stream partition is empty; called only while every
   *     live container waits, so nothing changes meanwhile
   * @param completer writes a checkpoint's manifest once all containers wrote their parts
   */
  public CheckpointCoordinator(int containers, long intervalMs, long lastCheckpointId, BooleanSupplier streamsEmpty,
      Completer completer) {
    this(containers, intervalMs, lastCheckpointId, streamsEmpty, completer, System::nanoTime);
  }

  /**
   * As the other constructor, with {@code nanoClock} as the time source (ns, as
   * {@link System#nanoTime()}): the pause start and end, and the next checkpoint's due time.
   */
  public CheckpointCoordinator(int containers, long intervalMs, long lastCheckpointId, BooleanSupplier streamsEmpty,
      Completer completer, LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    this.intervalNs = intervalMs * 1_000_000L;
    this.pauseTimeoutNs = Math.max(2_000L, intervalMs) * 1_000_000L;
    this.streamsEmpty = streamsEmpty;
    this.completer = completer;
    this.live = new boolean[containers];
    this.arrived = new boolean[containers];
    this.done = new boolean[containers];
    this.reported = new boolean[containers];
    java.util.Arrays.fill(live, true);
    this.liveCount = containers;
    this.checkpointId = lastCheckpointId;
    this.nextDueNs = nanoClock.getAsLong() + intervalNs;
    this.stats = CheckpointStats.initial(lastCheckpointId);
  }

  /**
   * Asks for a checkpoint now, after which the job stays paused ({@link Phase#STOPPED}); see the
   * class comment. Any thread; idempotent.
   *
   * @return completes with the id of that checkpoint once it is complete (and its marks may be
   *     finalized by the containers), or exceptionally if the job ends first ({@link #leave} of the
   *     last container)
   */
  public synchronized java.util.concurrent.CompletableFuture<Long> requestStop() {
    stopRequested = true;
    if (phase == Phase.RUNNING) {
      nextDueNs = nanoClock.getAsLong();
    }
    return stopped;
  }

  /** The current phase: one volatile read, for every run-loop pass. */
  public Phase phase() {
    return phase;
  }

  /**
   * Starts a checkpoint if the interval has passed ({@code nowNs}, {@link System#nanoTime()}); in
   * PAUSING, gives up an attempt that did not become quiescent within the pause timeout.
   */
  public void poll(long nowNs) {
    Phase current = phase;
    if (current == Phase.RUNNING) {
      if (nowNs - nextDueNs >= 0) {
        synchronized (this) {
          if (phase == Phase.RUNNING && nowNs - nextDueNs >= 0) {
            pauseStartNs = nowNs;
            phase = Phase.PAUSING;
          }
        }
      }
    } else if (current == Phase.PAUSING && nowNs - pauseStartNs > pauseTimeoutNs) {
      synchronized (this) {
        if (phase == Phase.PAUSING && nowNs - pauseStartNs > pauseTimeoutNs) {
          LOG.warn("Checkpoint {} skipped: the job did not become quiescent within {} ms (an element may wait "
              + "for a side input that only new source data completes); trying again in {} ms", checkpointId + 1,
              pauseTimeoutNs / 1_000_000L, intervalNs / 1_000_000L);
          stats = stats.withSkipped();
          resolveRound(false);
          resume(nowNs);
        }
      }
    }
  }

  /**
   * Container {@code container} is quiet (see the class comment) and waits until every live
   * container is, or the attempt is given up, or {@code running} turns false, or input arrives for
   * it ({@code inputArrived}, asked every few ms: a producer whose outbox waits for room in this
   * container's inputs could otherwise never become quiet).
   *
   * @return the id of the checkpoint to write now (the job is quiescent), or 0: go on draining (or
   *     running, if the attempt was given up)
   */
  public synchronized long arriveQuiet(int container, BooleanSupplier running, BooleanSupplier inputArrived)
      throws InterruptedException {
    if (phase != Phase.PAUSING) {
      return 0;
    }
    long myEpoch = epoch;
    if (!arrived[container]) {
      arrived[container] = true;
      arrivedCount++;
    }
    if (arrivedCount >= liveCount) {
      resolveRound(streamsEmpty.getAsBoolean());
    }
    while (epoch == myEpoch && running.getAsBoolean() && !inputArrived.getAsBoolean()) {
      wait(WAIT_SLICE_MS);
    }
    if (epoch == myEpoch) { // stopped, or input to drain: no longer quiet
      arrived[container] = false;
      arrivedCount--;
      return 0;
    }
    return lastRoundQuiescent ? checkpointId : 0;
  }

  private void resolveRound(boolean quiescent) {
    java.util.Arrays.fill(arrived, false);
    arrivedCount = 0;
    lastRoundQuiescent = quiescent;
    if (quiescent) {
      checkpointId++;
      snapshotsPending = liveCount;
      snapshotFailure = null;
      java.util.Arrays.fill(reported, false);
      phase = Phase.SNAPSHOT;
    }
    epoch++;
    notifyAll();
  }

  /**
   * Container {@code container} wrote its part of checkpoint {@code id} ({@code failure} null) or
   * failed to; waits until every live container did, the last one completing the checkpoint.
   *
   * @return whether the checkpoint completed (the container then finalizes its sources' marks)
   * @throws RuntimeException the failure of completing the checkpoint (manifest), on the thread that
   *     completed it; the job fails and the previous checkpoint stays intact
   */
  public synchronized boolean snapshotDone(int container, long id, Throwable failure, BooleanSupplier running)
      throws InterruptedException {
    if (failure != null && snapshotFailure == null) {
      snapshotFailure = failure;
    }
    long myEpoch = epoch;
    reported[container] = true;
    if (--snapshotsPending <= 0) {
      finishSnapshot(id);
      return lastSnapshotCompleted;
    }
    while (epoch == myEpoch && running.getAsBoolean()) {
      wait(WAIT_SLICE_MS);
    }
    return epoch != myEpoch && lastSnapshotCompleted;
  }

  private void finishSnapshot(long id) {
    long now = nanoClock.getAsLong();
    boolean completed = false;
    try {
      if (snapshotFailure == null) {
        long bytes = completer.complete(id);
        completed = true;
        long pauseNs = now - pauseStartNs;
        stats = stats.withCompleted(id, pauseNs, bytes, System.currentTimeMillis());
        if (pausesNs.size() < MAX_RECORDED_PAUSES) {
          pausesNs.add(pauseNs);
        }
        LOG.debug("Checkpoint {} complete: {} bytes, pause {} ms", id, bytes, pauseNs / 1_000_000L);
      }
    } finally {
      lastSnapshotCompleted = completed;
      if (completed && stopRequested) {
        phase = Phase.STOPPED;
        LOG.info("Checkpoint {} complete: the job is stopped there (a savepoint)", id);
        stopped.complete(id);
      } else {
        resume(nanoClock.getAsLong());
      }
      epoch++;
      notifyAll();
    }
  }

  private void resume(long nowNs) {
    phase = Phase.RUNNING;
    nextDueNs = stopRequested ? nowNs : nowNs + intervalNs; // a stop retries at once
  }

  /**
   * Container {@code container}'s tasks are all done; it stays (its state belongs to later
   * checkpoints) until {@link #jobDone()}.
   */
  public synchronized void markDone(int container) {
    if (!done[container]) {
      done[container] = true;
      doneCount++;
    }
  }

  /** Whether every container's tasks are done: the containers may leave. */
  public synchronized boolean jobDone() {
    return doneCount >= live.length;
  }

  /**
   * Container {@code container} leaves (the job ended, failed or was cancelled): it no longer holds
   * a drain round or a snapshot back.
   */
  public synchronized void leave(int container) {
    if (!live[container]) {
      return;
    }
    live[container] = false;
    liveCount--;
    if (arrived[container]) {
      arrived[container] = false;
      arrivedCount--;
    }
    if (phase == Phase.PAUSING && liveCount > 0 && arrivedCount >= liveCount) {
      resolveRound(false); // a leaving container ends the job: no checkpoint worth taking now
      resume(nanoClock.getAsLong());
    } else if (phase == Phase.SNAPSHOT && !reported[container]) {
      reported[container] = true;
      snapshotFailure = new IllegalStateException("container " + container + " left during checkpoint "
          + checkpointId);
      if (--snapshotsPending <= 0) {
        finishSnapshot(checkpointId);
      }
    }
    if (liveCount == 0 && !stopped.isDone()) {
      stopped.completeExceptionally(new IllegalStateException("the job ended before a checkpoint to stop at "
          + "completed"));
    }
    notifyAll();
  }

  /**
   * One line for the job's end-of-run log: checkpoints completed and skipped, the median and maximum
   * pause (ms) and the last checkpoint's size (bytes).
   */
  public synchronized String summary() {
    java.util.List<Long> sorted = new java.util.ArrayList<>(pausesNs);
    java.util.Collections.sort(sorted);
    double medianMs = sorted.isEmpty() ? 0 : sorted.size() % 2 == 1 ? sorted.get(sorted.size() / 2) / 1e6
        : (sorted.get(sorted.size() / 2 - 1) + sorted.get(sorted.size() / 2)) / 2e6;
    return String.format(java.util.Locale.ROOT, "%d checkpoint(s) completed, %d skipped; pause median %.1f ms, "
        + "max %.1f ms; last checkpoint %d bytes (id %d)", stats.completed(), stats.skipped(), medianMs,
        stats.maxPauseNs() / 1e6, stats.lastSizeBytes(), stats.lastCompletedId());
  }

  /** The checkpoints so far (completed, skipped, pauses, last size and id). Any thread. */
  public CheckpointStats stats() {
    return stats;
  }
}
