package dev.weir.runner.checkpoint;

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
 */
@Internal
public record CheckpointStats(long completed, long skipped, long totalPauseNs, long maxPauseNs, long lastPauseNs,
    long lastSizeBytes, long lastCompletedId) {
  /** A job that takes no checkpoints. */
  public static final CheckpointStats NONE = new CheckpointStats(0, 0, 0, 0, 0, 0, 0);

  /** The statistics before the first checkpoint of a job that restored checkpoint {@code restoredId} (0: none). */
  static CheckpointStats initial(long restoredId) {
    return new CheckpointStats(0, 0, 0, 0, 0, 0, restoredId);
  }

  /** These statistics after one more skipped attempt. */
  CheckpointStats withSkipped() {
    return new CheckpointStats(completed, skipped + 1, totalPauseNs, maxPauseNs, lastPauseNs, lastSizeBytes,
        lastCompletedId);
  }

  /** These statistics after checkpoint {@code id} completed, paused {@code pauseNs}, {@code bytes} on disk. */
  CheckpointStats withCompleted(long id, long pauseNs, long bytes) {
    return new CheckpointStats(completed + 1, skipped, totalPauseNs + pauseNs, Math.max(maxPauseNs, pauseNs),
        pauseNs, bytes, id);
  }
}
