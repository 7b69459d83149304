package dev.weir.profiling;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/**
 * Reads the span intervals a profiled program emitted with async-profiler's Span API
 * ({@code one.profiler.Span.start()/end(t, tag)}, stored in the JFR as {@code profiler.Span}
 * events). Weir's run loop tags the processing of each PTransform's bundles with the transform's
 * full name, so the tags are the pipeline's transforms. Stateless; safe from any thread.
 */
public final class SpanTags {

  /** The JFR event type async-profiler writes for spans. */
  static final String SPAN_EVENT = "profiler.Span";

  /**
   * Window bounds below this (2001-09-09 in epoch ms) are not epoch times (0, or jfrconv's
   * relative offsets) and leave that side of the window open.
   */
  static final long EPOCH_MS_FLOOR = 1_000_000_000_000L;

  private SpanTags() {}

  private static long epochNanos(java.time.Instant t) {
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  /**
   * Per tag: the number of spans and their total duration.
   *
   * @param count spans with the tag
   * @param totalNanos summed duration, in ns (wall time inside the spans)
   */
  public record TagTotals(long count, long totalNanos) {}

  /**
   * Reads every span tag of a recording.
   *
   * @return tag to totals, sorted by tag; empty when the program emitted no spans
   * @throws UncheckedIOException if the recording cannot be read
   */
  public static Map<String, TagTotals> read(Path jfr) {
    return read(jfr, 0, 0);
  }

  /**
   * Reads the span tags of a recording within {@code [fromMs, toMs]}: spans that overlap the
   * window are counted, and only their time inside it is summed, so the totals describe the same
   * interval as the CPU samples jfrconv cuts with {@code --from/--to}.
   *
   * @param fromMs window start, epoch ms; a value below {@link #EPOCH_MS_FLOOR} (0: the recording's
   *     start) leaves the start open
   * @param toMs window end, epoch ms; a value below {@link #EPOCH_MS_FLOOR} leaves the end open
   * @return tag to totals, sorted by tag; empty when no span overlaps the window
   * @throws UncheckedIOException if the recording cannot be read
   */
  public static Map<String, TagTotals> read(Path jfr, long fromMs, long toMs) {
    long fromNs = fromMs >= EPOCH_MS_FLOOR ? fromMs * 1_000_000L : Long.MIN_VALUE;
    long toNs = toMs >= EPOCH_MS_FLOOR ? toMs * 1_000_000L : Long.MAX_VALUE;
    Map<String, long[]> totals = new TreeMap<>();
    try (RecordingFile file = new RecordingFile(jfr)) {
      while (file.hasMoreEvents()) {
        RecordedEvent event = file.readEvent();
        if (!SPAN_EVENT.equals(event.getEventType().getName()) || !event.hasField("tag")) {
          continue;
        }
        String tag = event.getString("tag");
        if (tag == null) {
          continue;
        }
        long start = epochNanos(event.getStartTime());
        long end = epochNanos(event.getEndTime());
        if (end < fromNs || start > toNs) {
          continue;
        }
        long[] t = totals.computeIfAbsent(tag, k -> new long[2]);
        t[0]++;
        t[1] += Math.max(0, Math.min(end, toNs) - Math.max(start, fromNs));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read spans from " + jfr, e);
    }
    Map<String, TagTotals> out = new TreeMap<>();
    totals.forEach((k, v) -> out.put(k, new TagTotals(v[0], v[1])));
    return out;
  }
}
