// Role: the `weir` command line (picocli), the main class behind bin/weir. Dispatches to
// subcommands: `nexmark`, `bench` and `latency` (report and profile are handled by bin/weir).
// Threading: main thread only.
package dev.weir.nexmark.driver;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code weir <subcommand>}; exit status from the subcommand (2 on usage errors). */
@Command(name = "weir", mixinStandardHelpOptions = true, version = "weir 0.1.0-SNAPSHOT",
    subcommands = {NexmarkCommand.class, BenchCommand.class, LatencyCommand.class},
    description = "Weir's toolkit: benchmark Beam runners on Nexmark.")
public final class WeirCli implements Runnable {
  public static void main(String[] args) {
    // The Kafka admin client (weir-samza's broker) logs through slf4j-simple: warnings only, unless
    // WEIR_LOG_LEVEL (bin/weir) chose a level.
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    }
    System.exit(new CommandLine(new WeirCli()).execute(args));
  }

  @Override
  public void run() {
    new CommandLine(this).usage(System.out);
  }
}
