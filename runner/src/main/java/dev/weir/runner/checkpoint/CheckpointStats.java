package dev.weir.runner.checkpoint;

import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.annotations.Internal;

/**
 * A job's checkpoints so far, as monitoring reads them ({@link CheckpointCoordinator#stats()}); an
 * immutable snapshot.
 *
 * @param completed checkpoints completed by this run of the job
 * @param skipped attempts given up because the job did not become quiescent in time
 * @param totalPauseNs the completed checkpoints' pauses, summed, ns
 * @param maxPauseNs the longest pause, ns
 * @param lastPauseNs the last completed checkpoint's pause, ns (0 before the first)
 * @param lastSizeBytes the last completed checkpoint's size on disk, bytes (0 before the first)
 * @param lastCompletedId the id of the last completed checkpoint: the restored one's before the
 *     first of this run, 0 if none
 * @param recent the last completed checkpoints of this run, oldest first, at most {@link #RECENT}
 *     (the job page's history); an immutable list
 */
@Internal
public record CheckpointStats(long completed, long skipped, long totalPauseNs, long maxPauseNs, long lastPauseNs,
    long lastSizeBytes, long lastCompletedId, List<Completed> recent) {
  /** How many completed checkpoints {@link #recent} keeps. */
  public static final int RECENT = 30;

  /** A job that takes no checkpoints. */
  public static final CheckpointStats NONE = new CheckpointStats(0, 0, 0, 0, 0, 0, 0, List.of());

  /**
   * One completed checkpoint.
   *
   * @param id its id
   * @param completedAtMs when it completed, epoch ms
   * @param pauseNs how long the job paused for it, ns
   * @param sizeBytes its size on disk, bytes
   */
  public record Completed(long id, long completedAtMs, long pauseNs, long sizeBytes) {}

  /** The statistics before the first checkpoint of a job that restored checkpoint {@code restoredId} (0: none). */
  static CheckpointStats initial(long restoredId) {
    return new CheckpointStats(0, 0, 0, 0, 0, 0, restoredId, List.of());
  }

  /** These statistics after one more skipped attempt. */
  CheckpointStats withSkipped() {
    return new CheckpointStats(completed, skipped + 1, totalPauseNs, maxPauseNs, lastPauseNs, lastSizeBytes,
        lastCompletedId, recent);
  }

  /**
   * These statistics after checkpoint {@code id} completed at {@code nowMs} (epoch ms), paused
   * {@code pauseNs}, {@code bytes} on disk.
   */
  CheckpointStats withCompleted(long id, long pauseNs, long bytes, long nowMs) {
    List<Completed> history = new ArrayList<>(recent.subList(Math.max(0, recent.size() - RECENT + 1), recent.size()));
    history.add(new Completed(id, nowMs, pauseNs, bytes));
    return new CheckpointStats(completed + 1, skipped, totalPauseNs + pauseNs, Math.max(maxPauseNs, pauseNs),
        pauseNs, bytes, id, List.copyOf(history));
  }

  /** When the last checkpoint of this run completed, epoch ms; 0 before the first. */
  public long lastCompletedAtMs() {
    return recent.isEmpty() ? 0 : recent.get(recent.size() - 1).completedAtMs();
  }
}
