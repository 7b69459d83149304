// Role: what the `bin/weir bench` child mains (RemoteIoBench, StateCountBench) share: splitting
// their own arguments from the pipeline's, running and measuring the pipeline, the process's CPU
// time, and writing the row's document.
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;

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

  /**
   * Builds a pipeline of {@code pipelineArgs} with {@code build}, runs it to its end and puts into
   * {@code doc} the runner, wall time (s), elements/s over it, CPU ms per element and what
   * {@code counted} holds afterwards (the pipeline's global count), or the error.
   *
   * @return 0 if the pipeline counted {@code n} elements, 1 if it counted another number or failed
   */
  static int run(List<String> pipelineArgs, long n, Consumer<Pipeline> build, AtomicLong counted,
      Map<String, Object> doc) {
    try {
      PipelineOptions options = PipelineOptionsFactory.fromArgs(pipelineArgs.toArray(new String[0])).create();
      Pipeline p = Pipeline.create(options);
      build.accept(p);
      long cpu0 = processCpuNs();
      long t0 = System.nanoTime();
      PipelineResult result = p.run();
      result.waitUntilFinish();
      long wallNs = System.nanoTime() - t0;
      long cpuNs = processCpuNs() - cpu0;
      doc.put("runner", options.getRunner().getSimpleName());
      doc.put("wallSec", wallNs / 1e9);
      doc.put("elementsPerSec", n / (wallNs / 1e9));
      doc.put("cpuMsPerElement", cpuNs / 1e6 / n);
      doc.put("counted", counted.get());
      if (counted.get() != n) {
        doc.put("error", "the pipeline counted " + counted.get() + " elements, expected " + n);
        return 1;
      }
      return 0;
    } catch (RuntimeException e) {
      doc.put("error", String.valueOf(e));
      e.printStackTrace();
      return 1;
    }
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
