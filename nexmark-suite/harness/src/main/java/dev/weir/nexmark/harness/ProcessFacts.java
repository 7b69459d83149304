// Role: samples facts about the current JVM process (CPU time, GC, peak RSS, JVM and machine,
// the Beam SDK release on its classpath) and writes them as the small JSON document the driver
// reads after a child run. After a warm-up pass (startMeasuredPass) CPU, GC and peak-RSS figures
// count from the start of the measured pass.
// Threading: static helpers called from the harness's main thread only (the measured-pass
// baseline is a plain static field written and read there).
package dev.weir.nexmark.harness;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Process facts of a benchmark child JVM, written to the file named by the system property
 * {@value #OUT_PROPERTY}. Units: CPU in seconds, GC time in milliseconds, memory in bytes,
 * wall time in seconds.
 */
public final class ProcessFacts {
  /** System property naming the JSON file to write; nothing is written when it is absent. */
  public static final String OUT_PROPERTY = "weir.harness.out";

  /** CPU seconds, GC ms and GC count when the measured pass started; zeros without a warm-up. */
  private static double baselineCpuSeconds;
  private static long baselineGcTimeMs;
  private static long baselineGcCount;
  private static boolean warmedUp;
  /** VmHWM when the measured pass started (the warm-up's peak); -1 unknown. */
  private static long warmupPeakRssBytes = -1;
  /** Whether VmHWM was reset when the measured pass started, so that it is the measured pass's. */
  private static boolean peakRssReset;

  /**
   * The process's figures when the measured passes ended, if a pass that is not measured ran after
   * them ({@link #endMeasuredPasses}); null otherwise.
   */
  private static MeasuredEnd measuredEnd;

  /** CPU seconds, GC ms, GC count and VmHWM (bytes) at the end of the measured passes. */
  private record MeasuredEnd(double cpuSeconds, long gcTimeMs, long gcCount, long peakRssBytes) {}

  private ProcessFacts() {}

  /**
   * Marks the end of the measured passes, when another pass follows them (the no-delay pass): from
   * now on {@link #collect} reports CPU seconds, GC time, GC count and peak RSS as they were at this
   * point, so what runs after is in no measured figure.
   */
  public static void endMeasuredPasses() {
    long[] gc = gcTotals();
    measuredEnd = new MeasuredEnd(processCpuSeconds(), gc[0], gc[1], peakRssBytes());
  }

  /**
   * Marks the end of the warm-up passes: from now on {@link #collect} reports CPU seconds, GC time,
   * GC count and peak RSS of the measured pass only, and the warm-up's as
   * {@code warmupCpuSeconds}, {@code warmupGcTimeMs}, {@code warmupGcCount} and
   * {@code warmupPeakRssBytes}. The peak is reset by writing {@code 5} to
   * {@code /proc/self/clear_refs} (Linux 4.0 and later: the high-water mark becomes the current
   * RSS), so the measured pass's peak still includes all the memory the warm-up left resident,
   * the committed heap included; where the reset fails, {@code peakRssScope} says the peak is the
   * whole process's.
   *
   * <p>Before that, a full collection ({@link System#gc()}; HotSpot's G1 then also shrinks the
   * committed heap to its {@code MaxHeapFreeRatio}), for every runner alike: the measured pass
   * starts without the warm-up passes' garbage (finished pipelines, their caches and clusters), and
   * its peak RSS is the memory the measured pass made the JVM commit, not a heap the warm-up grew.
   * G1 (JDK 16 and later) gives the shrunk regions back to the OS on a background thread, over a
   * few hundred ms after the collection, so the reset waits until the RSS stops falling
   * ({@link #awaitRssSettled}); resetting at once kept the warm-up's heap in the measured peak (on
   * Weir's Nexmark Q7 the two peaks were equal to 1 MB). The collection's and the wait's time count
   * for the warm-up.
   */
  public static void startMeasuredPass() {
    System.gc();
    awaitRssSettled(RSS_SETTLE_POLL_MS, RSS_SETTLE_QUIET_POLLS, RSS_SETTLE_MAX_MS);
    baselineCpuSeconds = Math.max(0, processCpuSeconds());
    long[] gc = gcTotals();
    baselineGcTimeMs = gc[0];
    baselineGcCount = gc[1];
    warmupPeakRssBytes = peakRssBytes();
    peakRssReset = resetPeakRss();
    warmedUp = true;
  }

  /** Interval between RSS reads while waiting for the heap's uncommit, ms. */
  static final long RSS_SETTLE_POLL_MS = 20;
  /** Reads in a row without the RSS falling by more than {@link #RSS_SETTLE_SLACK_BYTES} that end the wait. */
  static final int RSS_SETTLE_QUIET_POLLS = 5;
  /** The longest wait for the heap's uncommit, ms. */
  static final long RSS_SETTLE_MAX_MS = 3_000;
  /** A fall of at most this much between reads counts as settled (the kernel's counters lag). */
  static final long RSS_SETTLE_SLACK_BYTES = 1L << 20;

  /**
   * Waits until the resident set stops falling: {@code quietPolls} reads {@code pollMs} apart in a
   * row without it falling by more than {@link #RSS_SETTLE_SLACK_BYTES}, at most {@code maxMs}.
   *
   * @return ms waited; 0 off Linux (no RSS to read)
   */
  static long awaitRssSettled(long pollMs, int quietPolls, long maxMs) {
    long start = System.nanoTime();
    long last = rssBytes();
    if (last < 0) {
      return 0;
    }
    int quiet = 0;
    while (quiet < quietPolls && (System.nanoTime() - start) / 1_000_000 < maxMs) {
      try {
        Thread.sleep(pollMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      long now = rssBytes();
      quiet = now >= last - RSS_SETTLE_SLACK_BYTES ? quiet + 1 : 0;
      last = Math.min(last, now);
    }
    return (System.nanoTime() - start) / 1_000_000;
  }

  /** Resets VmHWM to the current RSS; false where /proc/self/clear_refs cannot be written. */
  static boolean resetPeakRss() {
    try {
      Files.writeString(Path.of("/proc/self/clear_refs"), "5");
      return true;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** {total GC time in ms, total GC count} over the JVM's collectors. */
  private static long[] gcTotals() {
    long gcTime = 0;
    long gcCount = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      gcTime += Math.max(0, gc.getCollectionTime());
      gcCount += Math.max(0, gc.getCollectionCount());
    }
    return new long[] {gcTime, gcCount};
  }

  /**
   * Collects the facts now (CPU and GC of the measured pass when {@link #startMeasuredPass} ran).
   *
   * @param wallSec wall-clock seconds since the harness started
   * @param error the first line of the error that ended the run, or null
   */
  public static Map<String, Object> collect(double wallSec, String error) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("wallSec", wallSec);
    double cpu = measuredEnd != null ? measuredEnd.cpuSeconds() : processCpuSeconds();
    long[] gc = measuredEnd != null ? new long[] {measuredEnd.gcTimeMs(), measuredEnd.gcCount()} : gcTotals();
    m.put("cpuSeconds", cpu < 0 ? cpu : cpu - baselineCpuSeconds);
    m.put("gcTimeMs", gc[0] - baselineGcTimeMs);
    m.put("gcCount", gc[1] - baselineGcCount);
    if (warmedUp) {
      m.put("warmupCpuSeconds", baselineCpuSeconds);
      m.put("warmupGcTimeMs", baselineGcTimeMs);
      m.put("warmupGcCount", baselineGcCount);
      m.put("warmupPeakRssBytes", warmupPeakRssBytes);
    }
    m.put("peakRssBytes", measuredEnd != null ? measuredEnd.peakRssBytes() : peakRssBytes());
    m.put("peakRssScope", warmedUp && peakRssReset ? "measured" : "process");
    Map<String, Object> jvm = new LinkedHashMap<>();
    jvm.put("version", System.getProperty("java.runtime.version"));
    jvm.put("vendor", System.getProperty("java.vm.vendor"));
    jvm.put("vmName", System.getProperty("java.vm.name"));
    jvm.put("maxHeapBytes", Runtime.getRuntime().maxMemory());
    List<String> jvmArgs = ManagementFactory.getRuntimeMXBean().getInputArguments();
    jvm.put("inputArguments", jvmArgs);
    m.put("jvm", jvm);
    Map<String, Object> machine = new LinkedHashMap<>();
    machine.put("availableProcessors", Runtime.getRuntime().availableProcessors());
    machine.put("osName", System.getProperty("os.name"));
    machine.put("osVersion", System.getProperty("os.version"));
    machine.put("osArch", System.getProperty("os.arch"));
    machine.put("systemLoadAverage", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    m.put("machine", machine);
    m.put("beamVersion", beamVersion());
    m.put("error", error);
    return m;
  }

  /** Writes {@link #collect} to the file named by {@value #OUT_PROPERTY}, if set. */
  public static void writeIfRequested(double wallSec, String error) {
    writeIfRequested(wallSec, error, Map.of());
  }

  /** As {@link #writeIfRequested(double, String)}, with extra top-level entries. */
  public static void writeIfRequested(double wallSec, String error, Map<String, Object> extra) {
    String out = System.getProperty(OUT_PROPERTY);
    if (out == null || out.isEmpty()) {
      return;
    }
    try {
      Path p = Path.of(out);
      if (p.getParent() != null) {
        Files.createDirectories(p.getParent());
      }
      Map<String, Object> facts = collect(wallSec, error);
      facts.putAll(extra);
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(p.toFile(), facts);
    } catch (IOException e) {
      System.err.println("ERROR RunHarness: cannot write " + out + ": " + e);
    }
  }

  /**
   * The Beam SDK release this JVM runs on: {@code sdk_version} of the beam-sdks-java-core jar on
   * the classpath ({@code ReleaseInfo}), whatever release the harness was compiled against (each
   * runner's classpath brings its own Beam: Weir's 2.73, Direct's and Flink's 2.70). Null when
   * Beam is not on the classpath or does not say.
   */
  static String beamVersion() {
    try {
      String v = org.apache.beam.sdk.util.ReleaseInfo.getReleaseInfo().getSdkVersion();
      return v == null || v.isBlank() ? null : v;
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }

  /** Process CPU time (all threads, user + system) in seconds, or -1 if unavailable. */
  public static double processCpuSeconds() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean) {
      long ns = ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
      return ns < 0 ? -1 : ns / 1e9;
    }
    return -1;
  }

  /** Current resident set size (VmRSS of /proc/self/status) in bytes, or -1 off Linux. */
  static long rssBytes() {
    return statusBytes("VmRSS:");
  }

  /** Peak resident set size (VmHWM of /proc/self/status) in bytes, or -1 off Linux. */
  public static long peakRssBytes() {
    return statusBytes("VmHWM:");
  }

  /** A {@code kB} field of /proc/self/status in bytes, or -1 when it cannot be read. */
  private static long statusBytes(String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith(field)) {
          String[] parts = line.substring(field.length()).trim().split("\\s+");
          return Long.parseLong(parts[0]) * 1024L; // the kernel reports kB
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or an unexpected format: report unknown
    }
    return -1;
  }
}
