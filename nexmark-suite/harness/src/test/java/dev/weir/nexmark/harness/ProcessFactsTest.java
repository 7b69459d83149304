// Role: unit test of the harness's process facts around the measured pass. Threading: single-threaded
// JUnit test (ProcessFacts keeps its measured-pass baseline in static fields).
package dev.weir.nexmark.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

class ProcessFactsTest {
  private static final int MB = 1 << 20;

  @Test
  @EnabledOnOs(OS.LINUX)
  void theMeasuredPassReportsItsOwnPeakRssAndTheWarmupsApart() throws Exception {
    assumeTrue(ProcessFacts.resetPeakRss(), "/proc/self/clear_refs is not writable here");
    // A "warm-up" that holds 96 MB of native memory, resident, then frees it.
    ByteBuffer warmup = ByteBuffer.allocateDirect(96 * MB);
    for (int i = 0; i < warmup.capacity(); i += 4096) {
      warmup.put(i, (byte) 1);
    }
    long warmupPeak = ProcessFacts.peakRssBytes();
    Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
    f.setAccessible(true);
    ((sun.misc.Unsafe) f.get(null)).invokeCleaner(warmup);

    ProcessFacts.startMeasuredPass();
    Map<String, Object> facts = ProcessFacts.collect(1.0, null);
    assertThat(facts.get("peakRssScope")).isEqualTo("measured");
    // The kernel's RSS counters are per-thread caches, synced now and then: allow some slack.
    assertThat((Long) facts.get("warmupPeakRssBytes")).isGreaterThan(warmupPeak - 8L * MB);
    assertThat((Long) facts.get("peakRssBytes")).as("the measured pass's peak, without the freed 96 MB")
        .isPositive().isLessThan((Long) facts.get("warmupPeakRssBytes") - 64L * MB);
  }

  @Test
  void theWarmupsGarbageIsCollectedBeforeTheMeasuredPassStarts_andItsGcTimeCountsForTheWarmup() {
    java.lang.ref.WeakReference<byte[]> leftover = new java.lang.ref.WeakReference<>(new byte[8 * MB]);
    ProcessFacts.startMeasuredPass();
    assertThat(leftover.get()).as("the warm-up's garbage after the full collection").isNull();
    Map<String, Object> facts = ProcessFacts.collect(1.0, null);
    assertThat((Long) facts.get("gcCount")).as("collections in the measured pass").isZero();
  }
}
