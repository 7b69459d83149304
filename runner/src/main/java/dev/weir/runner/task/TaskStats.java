package dev.weir.runner.task;

import org.apache.beam.sdk.annotations.Internal;

import dev.weir.runner.stream.StreamWriter;

import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One task's live counters for monitoring (JMX, the periodic metrics log): events in and out,
 * bundles and their sizes, the task's input and output watermarks. Samza's task-instance metrics
 * ({@code TaskInstanceMetrics}: messages processed, commits) are the model.
 *
 * <p>Cost on the run loop: events in and bundle sizes are counted once per finished bundle
 * ({@link #bundleFinished}, from the count the task keeps anyway), watermarks once per watermark
 * pass ({@link #watermarks}); events out are counted by each {@link StreamWriter} (one opaque
 * write per element sent). No allocation, no lock.
 *
 * <p>Threading: written only by the task's container thread (plain read, opaque write); the read
 * methods may be called from any thread (a JMX or logging thread) and see each value as some
 * recent write left it (values of one read may come from adjacent bundles).
 */
@Internal
public final class TaskStats {
  private static final int EVENTS_IN = 0;
  private static final int BUNDLES = 1;
  private static final int LAST_BUNDLE = 2;
  private static final int MAX_BUNDLE = 3;
  private static final int INPUT_WATERMARK = 4;
  private static final int OUTPUT_WATERMARK = 5;

  private final AtomicLongArray values = new AtomicLongArray(6);
  private final List<StreamWriter> writers;

  /**
   * @param writers the task's stream writers, whose sent elements are its events out; filled by
   *     the task's constructor, before any other thread reads this object
   */
  TaskStats(List<StreamWriter> writers) {
    this.writers = writers;
    values.setOpaque(INPUT_WATERMARK, StageWatermarks.MIN_WATERMARK_MS);
    values.setOpaque(OUTPUT_WATERMARK, StageWatermarks.MIN_WATERMARK_MS);
  }

  /** A bundle of {@code elements} input elements finished (0: a bundle of firings only, not counted). */
  void bundleFinished(int elements) {
    if (elements == 0) {
      return;
    }
    values.setOpaque(EVENTS_IN, values.getPlain(EVENTS_IN) + elements);
    values.setOpaque(BUNDLES, values.getPlain(BUNDLES) + 1);
    values.setOpaque(LAST_BUNDLE, elements);
    if (elements > values.getPlain(MAX_BUNDLE)) {
      values.setOpaque(MAX_BUNDLE, elements);
    }
  }

  /** The task's input and output watermarks after a watermark pass, epoch ms. */
  void watermarks(long inputMs, long outputMs) {
    values.setOpaque(INPUT_WATERMARK, inputMs);
    values.setOpaque(OUTPUT_WATERMARK, outputMs);
  }

  /** Input elements of finished bundles (an open bundle's elements count when it finishes). */
  public long eventsIn() {
    return values.getOpaque(EVENTS_IN);
  }

  /** Elements the task's writers sent downstream (a broadcast element counts once). */
  public long eventsOut() {
    long out = 0;
    for (int i = 0; i < writers.size(); i++) {
      out += writers.get(i).elementsSent();
    }
    return out;
  }

  /** Finished bundles that held at least one input element. */
  public long bundles() {
    return values.getOpaque(BUNDLES);
  }

  /** Input elements of the last finished bundle. */
  public long lastBundleSize() {
    return values.getOpaque(LAST_BUNDLE);
  }

  /** The most input elements any finished bundle held. */
  public long maxBundleSize() {
    return values.getOpaque(MAX_BUNDLE);
  }

  /** The task's input watermark, epoch ms ({@link StageWatermarks#MIN_WATERMARK_MS} before the first). */
  public long inputWatermarkMs() {
    return values.getOpaque(INPUT_WATERMARK);
  }

  /**
   * The task's output watermark, epoch ms: the last one its writers sent; for a task without
   * writers, the minimum over its nodes' output watermarks ({@link StageWatermarks#monitoredOutputWatermarkMs()}).
   */
  public long outputWatermarkMs() {
    return values.getOpaque(OUTPUT_WATERMARK);
  }
}
