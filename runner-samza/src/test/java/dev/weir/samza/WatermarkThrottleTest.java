package dev.weir.samza;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.stream.ProducerWatermark;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.junit.jupiter.api.Test;

/**
 * {@link WatermarkThrottle} with a 100 ms interval and explicit clock values: the first watermark
 * of a partition goes at once, later ones within the interval are held (only the latest), released
 * by the tick once the interval passed or before the partition's end of stream; the final
 * watermark is never held; partitions are throttled independently.
 */
class WatermarkThrottleTest {
  private static final long MS = 1_000_000L;
  private final List<String> sent = new ArrayList<>();
  private final WatermarkThrottle throttle =
      new WatermarkThrottle(100, (stream, p, w) -> sent.add(stream + "/" + p + "@" + w.getTimestamp()));
  private final String stream = "s0";

  private static ProducerWatermark wm(long ms) {
    return new ProducerWatermark(ms, 0, "stage-0-p0");
  }

  @Test
  void first_goesAtOnce_laterOnesAreCoalescedUntilTheInterval() {
    throttle.offer(stream, 0, wm(1), 0);
    throttle.offer(stream, 0, wm(2), 10 * MS);
    throttle.offer(stream, 0, wm(3), 20 * MS);
    assertThat(sent).containsExactly("s0/0@1");
    assertThat(throttle.pending()).isEqualTo(1);
    throttle.flushDue(50 * MS);
    assertThat(sent).containsExactly("s0/0@1");
    throttle.flushDue(100 * MS);
    assertThat(sent).containsExactly("s0/0@1", "s0/0@3");
    assertThat(throttle.pending()).isZero();
    throttle.offer(stream, 0, wm(4), 250 * MS);
    assertThat(sent).containsExactly("s0/0@1", "s0/0@3", "s0/0@4");
  }

  @Test
  void endOfStream_flushesTheHeldWatermarkFirst_andTheFinalOneIsNeverHeld() {
    throttle.offer(stream, 1, wm(1), 0);
    throttle.offer(stream, 1, wm(2), MS);
    throttle.flush(stream, 1, 2 * MS);
    assertThat(sent).containsExactly("s0/1@1", "s0/1@2");
    throttle.flush(stream, 1, 3 * MS); // nothing held
    long max = BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis();
    throttle.offer(stream, 1, wm(max), 4 * MS);
    assertThat(sent).containsExactly("s0/1@1", "s0/1@2", "s0/1@" + max);
  }

  @Test
  void partitions_areThrottledIndependently() {
    throttle.offer(stream, 0, wm(1), 0);
    throttle.offer(stream, 2, wm(1), MS);
    throttle.offer(stream, 0, wm(2), 2 * MS);
    throttle.offer(stream, 2, wm(2), 3 * MS);
    assertThat(sent).containsExactly("s0/0@1", "s0/2@1");
    throttle.flushDue(100 * MS);
    assertThat(sent).containsExactly("s0/0@1", "s0/2@1", "s0/0@2");
    throttle.flushDue(101 * MS);
    assertThat(sent).containsExactly("s0/0@1", "s0/2@1", "s0/0@2", "s0/2@2");
  }

  @Test
  void zeroInterval_sendsEveryWatermark() {
    WatermarkThrottle none = new WatermarkThrottle(0, (s, p, w) -> sent.add("" + w.getTimestamp()));
    none.offer(stream, 0, wm(1), 0);
    none.offer(stream, 0, wm(2), 0);
    assertThat(sent).containsExactly("1", "2");
  }
}
