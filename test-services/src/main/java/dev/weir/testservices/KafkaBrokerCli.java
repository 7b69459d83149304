package dev.weir.testservices;

import java.io.PrintStream;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Optional;

/**
 * The command line behind {@code scripts/kafka-broker.sh}: {@code start|stop|status [--port P]
 * [--dir D]}. {@code start} starts a {@link KafkaBroker} that outlives this process (its pid in
 * {@code D/broker.pid}) and prints its bootstrap address; {@code stop} stops the broker started
 * from {@code D}; {@code status} says whether it runs. The default directory is {@code
 * target/kafka-broker/cli}, the default port 9092. Exit codes: 0 done (status: running), 1 not
 * running (status, stop), 2 bad usage or a failed start (the message names the address or path).
 * Single-threaded.
 */
public final class KafkaBrokerCli {

  private KafkaBrokerCli() {}

  /** Runs the command and exits the JVM with its code. */
  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs the command; returns the exit code. Messages go to {@code out} and {@code err}. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    String command = null;
    int port = 9092;
    Path dir = Paths.get("target", "kafka-broker", "cli");
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      String value = null;
      if ((arg.equals("--port") || arg.equals("--dir")) && i + 1 < args.length) {
        value = args[++i];
      } else if (arg.startsWith("--port=") || arg.startsWith("--dir=")) {
        value = arg.substring(arg.indexOf('=') + 1);
        arg = arg.substring(0, arg.indexOf('='));
      }
      if (arg.equals("--port") && value != null) {
        try {
          port = Integer.parseInt(value);
        } catch (NumberFormatException e) {
          err.println("--port: not a port number: " + value + " (allowed: 0..65535)");
          return 2;
        }
      } else if (arg.equals("--dir") && value != null) {
        dir = Paths.get(value);
      } else if (command == null && !arg.startsWith("-")) {
        command = arg;
      } else {
        err.println("Unknown argument " + arg + "; " + usage());
        return 2;
      }
    }
    if (command == null) {
      err.println(usage());
      return 2;
    }
    dir = dir.toAbsolutePath();
    try {
      switch (command) {
        case "start":
          {
            KafkaBroker broker =
                KafkaBroker.start(
                    KafkaBroker.Config.in(dir).withPort(port).withStopOnJvmExit(false));
            out.println(
                "Kafka broker running at "
                    + broker.bootstrapServers()
                    + " (pid "
                    + broker.pid()
                    + ", dir "
                    + dir
                    + ", log "
                    + dir.resolve(KafkaBroker.LOG_FILE)
                    + ")");
            return 0;
          }
        case "stop":
          {
            Optional<KafkaBroker> broker = KafkaBroker.attach(dir);
            if (broker.isEmpty()) {
              out.println("No Kafka broker runs from " + dir);
              return 1;
            }
            broker.get().close();
            out.println("Stopped the Kafka broker at " + broker.get().bootstrapServers());
            return 0;
          }
        case "status":
          {
            Optional<KafkaBroker> broker = KafkaBroker.attach(dir);
            if (broker.isEmpty()) {
              out.println("No Kafka broker runs from " + dir);
              return 1;
            }
            out.println(
                "Kafka broker running at "
                    + broker.get().bootstrapServers()
                    + " (pid "
                    + broker.get().pid()
                    + ", dir "
                    + dir
                    + ")");
            return 0;
          }
        default:
          err.println("Unknown command " + command + "; " + usage());
          return 2;
      }
    } catch (RuntimeException e) {
      err.println(e.getMessage());
      return 2;
    }
  }

  static String usage() {
    return "usage: kafka-broker.sh start|stop|status [--port P (default 9092, 0 = any free)]"
        + " [--dir D (default target/kafka-broker/cli)]";
  }
}
