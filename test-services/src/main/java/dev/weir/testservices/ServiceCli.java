// Role: the shared command line of the services a developer starts by hand (scripts/kafka-broker.sh,
// scripts/zookeeper.sh): parses start|stop|status [--port P] [--dir D] and drives one Kind of
// service (KafkaBrokerCli, ZooKeeperCli).
// Threading: single-threaded; called from a main thread or a test.
package dev.weir.testservices;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * {@code start|stop|status [--port P] [--dir D]} for one kind of service. {@code start} starts the
 * service so that it outlives this process (its pid in a file under {@code D}) and prints its
 * address; {@code stop} stops the service started from {@code D}; {@code status} says whether it
 * runs. Exit codes: 0 done (status: running), 1 not running (status, stop), 2 bad usage or a failed
 * start (the message names the address or path).
 */
final class ServiceCli {
  private ServiceCli() {}

  /**
   * What one kind of service gives the command line.
   *
   * @param title the service as messages name it, e.g. "Kafka broker"
   * @param script the script that runs this command line, for the usage line
   * @param defaultPort the port without {@code --port} (0 = any free port)
   * @param defaultDir the directory without {@code --dir}, relative to the working directory
   * @param logFile the service's log file name in its directory
   * @param start starts the service in (directory, port) so that it outlives this JVM; throws a
   *     RuntimeException naming the address or path when it cannot
   * @param attach the service started from a directory, if it still runs
   */
  record Kind(String title, String script, int defaultPort, Path defaultDir, String logFile,
              BiFunction<Path, Integer, Running> start, Function<Path, Optional<Running>> attach) {}

  /**
   * A running service as the command line reports it.
   *
   * @param address what clients connect to (host:port)
   * @param pid the service process's id
   * @param stop stops it and waits for its end
   */
  record Running(String address, long pid, Runnable stop) {}

  /** Runs the command for {@code kind}; returns the exit code. Messages go to {@code out} and {@code err}. */
  static int run(Kind kind, String[] args, PrintStream out, PrintStream err) {
    String command = null;
    int port = kind.defaultPort();
    Path dir = kind.defaultDir();
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
        dir = Path.of(value);
      } else if (command == null && !arg.startsWith("-")) {
        command = arg;
      } else {
        err.println("Unknown argument " + arg + "; " + usage(kind));
        return 2;
      }
    }
    if (command == null) {
      err.println(usage(kind));
      return 2;
    }
    dir = dir.toAbsolutePath();
    try {
      switch (command) {
        case "start": {
          Running s = kind.start().apply(dir, port);
          out.println(kind.title() + " running at " + s.address() + " (pid " + s.pid() + ", dir " + dir
              + ", log " + dir.resolve(kind.logFile()) + ")");
          return 0;
        }
        case "stop": {
          Optional<Running> s = kind.attach().apply(dir);
          if (s.isEmpty()) {
            out.println("No " + kind.title() + " runs from " + dir);
            return 1;
          }
          s.get().stop().run();
          out.println("Stopped the " + kind.title() + " at " + s.get().address());
          return 0;
        }
        case "status": {
          Optional<Running> s = kind.attach().apply(dir);
          if (s.isEmpty()) {
            out.println("No " + kind.title() + " runs from " + dir);
            return 1;
          }
          out.println(kind.title() + " running at " + s.get().address() + " (pid " + s.get().pid() + ", dir " + dir + ")");
          return 0;
        }
        default:
          err.println("Unknown command " + command + "; " + usage(kind));
          return 2;
      }
    } catch (RuntimeException e) {
      err.println(e.getMessage());
      return 2;
    }
  }

  static String usage(Kind kind) {
    return "usage: " + kind.script() + " start|stop|status [--port P (default " + kind.defaultPort()
        + ", 0 = any free)] [--dir D (default " + kind.defaultDir() + ")]";
  }
}
