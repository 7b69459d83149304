// Role: unit tests of SpanTags: span totals per tag over the whole recording and within a window
// (only spans overlapping it, only their time inside it). Spans are written by the JDK's own JFR
// as events named like async-profiler's. Threading: single-threaded tests.
package dev.weir.profiling;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import jdk.jfr.Event;
import jdk.jfr.Name;
import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SpanTagsTest {
  /** An event shaped like async-profiler's spans: type {@code profiler.Span}, a {@code tag}. */
  @Name(SpanTags.SPAN_EVENT)
  static final class FakeSpan extends Event {
    String tag;
  }

  private static void span(String tag, long millis) throws InterruptedException {
    FakeSpan s = new FakeSpan();
    s.tag = tag;
    s.begin();
    Thread.sleep(millis);
    s.end();
    s.commit();
  }

  @Test
  void windowKeepsOverlappingSpansAndOnlyTheirTimeInside(@TempDir Path dir) throws Exception {
    Path jfr = dir.resolve("spans.jfr");
    long fromMs;
    long toMs;
    try (Recording r = new Recording()) {
      r.enable(FakeSpan.class);
      r.start();
      span("before", 30);
      Thread.sleep(50);
      fromMs = System.currentTimeMillis();
      Thread.sleep(20);
      span("inside", 30);
      FakeSpan straddling = new FakeSpan();
      straddling.tag = "straddling";
      straddling.begin();
      Thread.sleep(40);
      toMs = System.currentTimeMillis();
      Thread.sleep(200);
      straddling.end();
      straddling.commit();
      Thread.sleep(50);
      span("after", 30);
      r.stop();
      r.dump(jfr);
    }

    Map<String, SpanTags.TagTotals> all = SpanTags.read(jfr);
    assertThat(all).containsOnlyKeys("before", "inside", "straddling", "after");
    assertThat(all.get("straddling").totalNanos()).isGreaterThanOrEqualTo(240_000_000L);

    Map<String, SpanTags.TagTotals> window = SpanTags.read(jfr, fromMs, toMs);
    assertThat(window).containsOnlyKeys("inside", "straddling");
    assertThat(window.get("inside").count()).isEqualTo(1);
    assertThat(window.get("inside").totalNanos()).isBetween(29_000_000L, (toMs - fromMs + 1) * 1_000_000L);
    // only the straddling span's part before the window's end: well under its 240+ ms
    assertThat(window.get("straddling").totalNanos()).isBetween(30_000_000L, 100_000_000L);
  }

  @Test
  void nonEpochBoundsLeaveTheWindowOpen(@TempDir Path dir) throws Exception {
    Path jfr = dir.resolve("spans.jfr");
    try (Recording r = new Recording()) {
      r.enable(FakeSpan.class);
      r.start();
      span("a", 5);
      r.stop();
      r.dump(jfr);
    }
    assertThat(SpanTags.read(jfr, 0, 0)).isEqualTo(SpanTags.read(jfr));
    assertThat(SpanTags.read(jfr, 5, 0)).containsOnlyKeys("a");
  }
}
