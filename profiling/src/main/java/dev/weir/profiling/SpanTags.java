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
 * full name, so the tags are the pipeline's transforms. Stateless.
 */
public final class SpanTags {

  /** The JFR event type async-profiler writes for spans. */
  static final String SPAN_EVENT = "profiler.Span";

  private SpanTags() {}

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
        long[] t = totals.computeIfAbsent(tag, k -> new long[2]);
        t[0]++;
        t[1] += event.getDuration().toNanos();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read spans from " + jfr, e);
    }
    Map<String, TagTotals> out = new TreeMap<>();
    totals.forEach((k, v) -> out.put(k, new TagTotals(v[0], v[1])));
    return out;
  }
}
