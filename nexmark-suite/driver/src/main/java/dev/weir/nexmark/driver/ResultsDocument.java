// Role: the results.json document (versioned; schema in results.schema.json on the classpath)
// and its CSV twin; also the machine/JVM facts of the driver's host.
// Threading: built and written on the driver's main thread.
package dev.weir.nexmark.driver;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything one {@code weir nexmark} invocation produced. {@link #SCHEMA_VERSION} follows
 * semantic versioning: a new optional field bumps the minor version, a renamed or removed field
 * the major version.
 */
@JsonPropertyOrder({"schemaVersion", "tool", "startedAt", "finishedAt", "settings", "machine",
    "jvm", "runnerConfigs", "runs", "summary"})
public final class ResultsDocument {
  /** Version of the results format; results.schema.json describes it. */
  public static final String SCHEMA_VERSION = "1.10.0";

  public String schemaVersion = SCHEMA_VERSION;
  public String tool = "weir nexmark";
  public String startedAt;
  public String finishedAt;
  public Map<String, Object> settings = new LinkedHashMap<>();
  public Map<String, Object> machine = new LinkedHashMap<>();
  public Map<String, Object> jvm = new LinkedHashMap<>();
  public Map<String, Object> runnerConfigs = new LinkedHashMap<>();
  public List<RunRecord> runs = new ArrayList<>();
  public Summary summary;

  /** Facts about this machine; load averages are filled by the caller. */
  public static Map<String, Object> machineFacts() {
    Map<String, Object> m = new LinkedHashMap<>();
    try {
      m.put("hostname", InetAddress.getLocalHost().getHostName());
    } catch (IOException e) {
      m.put("hostname", null);
    }
    m.put("osName", System.getProperty("os.name"));
    m.put("osVersion", System.getProperty("os.version"));
    m.put("osArch", System.getProperty("os.arch"));
    m.put("availableProcessors", Runtime.getRuntime().availableProcessors());
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean) {
      m.put("totalMemoryBytes", ((com.sun.management.OperatingSystemMXBean) os).getTotalMemorySize());
    }
    m.put("cpuModel", cpuModel());
    return m;
  }

  /** Facts about the JVM that children are started with (the driver's own). */
  public static Map<String, Object> jvmFacts() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("version", System.getProperty("java.runtime.version"));
    m.put("vendor", System.getProperty("java.vm.vendor"));
    m.put("vmName", System.getProperty("java.vm.name"));
    m.put("javaHome", System.getProperty("java.home"));
    m.put("childHeap", "-Xms1g -Xmx4g");
    return m;
  }

  /** 1-minute load average now, or null where the OS does not tell. */
  public static Double loadAverage() {
    double l = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    return l < 0 ? null : l;
  }

  private static String cpuModel() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          return line.substring(line.indexOf(':') + 1).trim();
        }
      }
    } catch (IOException | RuntimeException e) {
      return null;
    }
    return null;
  }

  /** Writes results.json into {@code dir}. */
  public void writeJson(Path dir) throws IOException {
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
        .writeValue(dir.resolve("results.json").toFile(), this);
  }

  /**
   * Writes results.csv (one line per run, the scalar fields) into {@code dir}. Columns added in a
   * later schema version go last, so that readers of older files find the others where they were.
   */
  public void writeCsv(Path dir) throws IOException {
    StringBuilder sb = new StringBuilder();
    sb.append("runner,query,queryName,mode,events,repeat,sweep,status,exitStatus,eventsPerSec,"
        + "resultsPerSec,numResults,runtimeSec,wallSec,cpuSeconds,peakRssBytes,gcTimeMs,gcCount,"
        + "correct,firstErrorLine,warmupEvents,beamVersion\n");
    for (RunRecord r : runs) {
      sb.append(csv(r.runner)).append(',').append(r.query).append(',').append(csv(r.queryName))
          .append(',').append(csv(r.mode)).append(',').append(r.events).append(',').append(r.repeat)
          .append(',').append(csv(Summary.sweepLabel(r.sweep))).append(',').append(csv(r.status))
          .append(',').append(csv(r.exitStatus)).append(',').append(csv(r.eventsPerSec))
          .append(',').append(csv(r.resultsPerSec)).append(',').append(csv(r.numResults))
          .append(',').append(csv(r.runtimeSec)).append(',').append(csv(r.wallSec))
          .append(',').append(csv(r.cpuSeconds)).append(',').append(csv(r.peakRssBytes))
          .append(',').append(csv(r.gcTimeMs)).append(',').append(csv(r.gcCount))
          .append(',').append(csv(r.correct)).append(',').append(csv(r.firstErrorLine))
          .append(',').append(r.warmupEvents).append(',').append(csv(r.beamVersion)).append('\n');
    }
    Files.writeString(dir.resolve("results.csv"), sb.toString(), StandardCharsets.UTF_8);
  }

  /** RFC 4180 quoting; null becomes an empty field. */
  static String csv(Object v) {
    if (v == null) {
      return "";
    }
    String s = String.valueOf(v);
    if (s.contains(",") || s.contains("\"") || s.contains("\n")) {
      return '"' + s.replace("\"", "\"\"") + '"';
    }
    return s;
  }
}
