// Role: unit test of the harness's process facts around the measured pass. Threading: single-threaded
// JUnit test (ProcessFacts keeps its measured-pass baseline in static fields).
package dev.weir.nexmark.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

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

  @Test
  void theFactsNameTheBeamSdkReleaseOnTheClasspath() {
    // The harness's own test classpath has the Beam it is compiled against; a runner's child JVM
    // reports the Beam of that runner's classpath the same way.
    Map<String, Object> facts = ProcessFacts.collect(1.0, null);
    assertThat(facts.get("beamVersion")).isInstanceOf(String.class)
        .isEqualTo(org.apache.beam.sdk.util.ReleaseInfo.getReleaseInfo().getSdkVersion());
    assertThat((String) facts.get("beamVersion")).matches("2\\.[0-9]+\\.[0-9]+.*");
  }

  /**
   * A warm-up that grows the heap, then the measured pass: the heap the full collection gave back
   * is not in the measured peak, although G1 returns it to the OS on a background thread after the
   * collection. Run in a child JVM with a small initial heap, so that the collection can shrink it.
   */
  @Test
  @EnabledOnOs(OS.LINUX)
  void theMeasuredPeakLeavesOutTheHeapTheWarmupGrewAndTheCollectionGaveBack(@TempDir Path dir) throws Exception {
    assumeTrue(ProcessFacts.resetPeakRss(), "/proc/self/clear_refs is not writable here");
    Path args = dir.resolve("java.args");
    // An argument file: the test class path is longer than one command-line argument may be.
    Files.writeString(args, "-cp\n\"" + System.getProperty("java.class.path").replace("\\", "\\\\") + "\"\n",
        StandardCharsets.UTF_8);
    Path log = dir.resolve("child.log");
    Process child = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
        "-XX:+UseG1GC", "-Xms64m", "-Xmx1g", "@" + args, GrowThenMeasure.class.getName())
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    assertThat(child.waitFor(120, TimeUnit.SECONDS)).as("child finished").isTrue();
    String out = Files.readString(log);
    assertThat(child.exitValue()).as("child exit code; log:%n%s", out).isZero();
    Map<String, Long> facts = new java.util.HashMap<>();
    for (String line : out.split("\n")) {
      String[] kv = line.trim().split("=");
      if (kv.length == 2 && kv[1].matches("-?[0-9]+")) {
        facts.put(kv[0], Long.parseLong(kv[1]));
      }
    }
    assertThat(facts).as("child output:%n%s", out)
        .containsKeys("committedGrown", "committedAfter", "warmupPeak", "measuredPeak");
    assumeTrue(facts.get("committedGrown") - facts.get("committedAfter") >= 256L * MB,
        "the full collection did not shrink the heap here: " + out);
    assertThat(facts.get("measuredPeak")).as("measured peak, without the ~512 MB the warm-up held; %s", out)
        .isPositive().isLessThan(facts.get("warmupPeak") - 256L * MB);
  }

  /** The child of the test above: holds 512 MB of heap, lets it go, starts a measured pass. */
  public static final class GrowThenMeasure {
    public static void main(String[] args) {
      List<byte[]> warmup = new ArrayList<>();
      for (int i = 0; i < 512 * 4; i++) {
        warmup.add(new byte[MB / 4]); // zeroed by the JVM, so resident; below G1's humongous size
      }
      System.out.println("committedGrown=" + Runtime.getRuntime().totalMemory());
      warmup.clear();
      ProcessFacts.startMeasuredPass();
      System.out.println("committedAfter=" + Runtime.getRuntime().totalMemory());
      Map<String, Object> facts = ProcessFacts.collect(1.0, null);
      System.out.println("warmupPeak=" + facts.get("warmupPeakRssBytes"));
      System.out.println("measuredPeak=" + facts.get("peakRssBytes"));
    }
  }
}
