// Role: unit test of `weir bench`'s argument checks and rows (no child JVM is started).
// Threading: single-threaded test; swaps System.err while a command runs.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class BenchCommandTest {

  /** Runs {@code weir bench args...}; returns the exit status and what it wrote to stderr. */
  private static Object[] run(String... args) {
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    PrintStream err = System.err;
    System.setErr(new PrintStream(errors, true, StandardCharsets.UTF_8));
    try {
      int status = new CommandLine(new BenchCommand()).execute(args);
      return new Object[] {status, errors.toString(StandardCharsets.UTF_8)};
    } finally {
      System.setErr(err);
    }
  }

  @Test
  void anUnknownScenarioNamesTheAllowedOnes() {
    Object[] r = run("remote-cpu");
    assertThat(r[0]).isEqualTo(2);
    assertThat((String) r[1]).contains("unknown scenario 'remote-cpu'; allowed: remote-io, rocksdb-miss, cpu-bound");
  }

  @Test
  void anUnknownRowNamesTheScenariosRows() {
    Object[] r = run("cpu-bound", "--rows", "weir-10");
    assertThat(r[0]).isEqualTo(2);
    assertThat((String) r[1]).contains("unknown row in --rows=weir-10; allowed: weir-sequential, weir-pool-1");
  }

  @Test
  void repeatsAndScaleAreChecked() {
    assertThat((String) run("remote-io", "--repeats", "0")[1]).contains("--repeats=0 is out of range; allowed: 1 or more");
    assertThat((String) run("remote-io", "--scale", "0")[1]).contains("--scale=0.0 is out of range; allowed: above 0");
  }

  @Test
  void remoteIoRowsAskForTheCallsInFlightTheyAreNamedAfter() {
    for (BenchCommand.Row row : BenchCommand.SCENARIOS.get("remote-io")) {
      if (row.runner() != RunnerKind.WEIR) {
        continue;
      }
      int threads = Integer.parseInt(option(row.options(), "--containerThreadPoolSize="));
      int perTask = Integer.parseInt(option(row.options(), "--taskMaxConcurrency="));
      int inFlight = threads == 0 ? 1 : Math.min(threads, perTask * BenchCommand.PARTITIONS);
      assertThat(inFlight).as(row.id()).isEqualTo(row.inFlight());
      assertThat(row.options()).as(row.id()).contains("--containers=1", "--parallelism=10");
    }
  }

  private static String option(List<String> options, String prefix) {
    return options.stream().filter(o -> o.startsWith(prefix)).findFirst().orElseThrow().substring(prefix.length());
  }
}
