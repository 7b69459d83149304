// Role: what the `bin/weir bench` child mains (RemoteIoBench, StateCountBench) share: splitting
// their own arguments from the pipeline's, the process's CPU time, and writing the row's document.
// Threading: static helpers, called from a bench main's thread.
package dev.weir.nexmark.harness;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Helpers of the bench child mains. */
final class BenchRun {
  private BenchRun() {}

  /**
   * Splits {@code args}: each {@code --name=value} whose name is in {@code own} goes into the
   * returned map, everything else, in order, into {@code pipelineArgs}.
   */
  static Map<String, String> split(String[] args, List<String> own, List<String> pipelineArgs) {
    Map<String, String> values = new LinkedHashMap<>();
    for (String arg : args) {
      String name = arg.startsWith("--") && arg.contains("=") ? arg.substring(2, arg.indexOf('=')) : "";
      if (own.contains(name)) {
        values.put(name, arg.substring(arg.indexOf('=') + 1));
      } else {
        pipelineArgs.add(arg);
      }
    }
    return values;
  }

  /** This JVM's CPU time so far, in ns (every thread, the runner's and a bench service's). */
  static long processCpuNs() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /** Writes {@code doc} as indented JSON to {@code out} and as one line to stdout. */
  static void write(Path out, Map<String, Object> doc) throws IOException {
    ObjectMapper json = new ObjectMapper();
    Files.writeString(out, json.copy().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(doc),
        StandardCharsets.UTF_8);
    System.out.println(json.writeValueAsString(doc));
  }
}
