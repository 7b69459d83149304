// Role: one child JVM of `weir bench` and `weir latency`: started in its row folder, waited for
// with a timeout, and its row document merged into the row's result.
// Threading: the driver's main thread.
package dev.weir.nexmark.driver;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs one bench or latency row's JVM. */
final class RowProcess {
  private RowProcess() {}

  /**
   * The start of a row's command line: this JVM's {@code java} with a 2 GiB heap and
   * {@code runner}'s JVM flags, on {@code runner}'s own classpath, running {@code main}; the row
   * adds its arguments.
   *
   * @throws IOException if the runner's classpath file cannot be read
   */
  static List<String> javaCommand(SuiteLayout layout, RunnerKind runner, String main) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx2g");
    cmd.addAll(runner.jvmFlags());
    cmd.add("-cp");
    cmd.add(layout.classpath(runner));
    cmd.add(main);
    return cmd;
  }

  /**
   * Runs {@code cmd} in {@code rowDir} (stdout and stderr to its {@code output.log}), waits up to
   * {@code timeoutSeconds} (then kills it), and puts into {@code result} what the child wrote to
   * {@code rowOut}, under the driver's own fields already in {@code result} (they win), or an
   * {@code error} saying why there is none; then {@code ok}.
   *
   * @return whether the child ended in time with status 0, wrote its document and reported no error
   * @throws IOException if the process cannot be started or its document cannot be read
   */
  static boolean run(List<String> cmd, Path rowDir, Path rowOut, long timeoutSeconds, ObjectNode result,
      ObjectMapper json) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(cmd).directory(rowDir.toFile()).redirectErrorStream(true)
        .redirectOutput(rowDir.resolve("output.log").toFile()).start();
    boolean ended = process.waitFor(timeoutSeconds, TimeUnit.SECONDS);
    if (!ended) {
      process.destroyForcibly().waitFor();
    }
    if (ended && Files.isRegularFile(rowOut)) {
      ObjectNode own = result.deepCopy();
      result.setAll((ObjectNode) json.readTree(rowOut.toFile()));
      result.setAll(own);
    } else {
      result.put("error", ended ? "no result (exit " + process.exitValue() + "; see " + rowDir.resolve("output.log")
          + ")" : "killed after " + timeoutSeconds + " s");
    }
    boolean ok = ended && process.exitValue() == 0 && !result.has("error");
    result.put("ok", ok);
    return ok;
  }
}
