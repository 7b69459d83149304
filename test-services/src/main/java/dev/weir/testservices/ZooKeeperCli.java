package dev.weir.testservices;

import java.io.PrintStream;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Optional;

/**
 * The command line behind {@code scripts/zookeeper.sh}: {@code start|stop|status [--port P]
 * [--dir D]}. {@code start} starts a {@link ZooKeeperServer} (standalone, 127.0.0.1) that outlives this process (its pid in
 * {@code D/zookeeper.pid}) and prints its connect string; {@code stop} stops the server started
 * from {@code D}; {@code status} says whether it runs. The default directory is {@code
 * target/zookeeper/cli}, the default port 2181. Exit codes: 0 done (status: running), 1 not
 * running (status, stop), 2 bad usage or a failed start (the message names the address or path).
 * Single-threaded.
 */
public final class ZooKeeperCli {

  private ZooKeeperCli() {}

  /** Runs the command and exits the JVM with its code. */
  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs the command; returns the exit code. Messages go to {@code out} and {@code err}. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    String command = null;
    int port = 2181;
    Path dir = Paths.get("target", "zookeeper", "cli");
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
            ZooKeeperServer server =
                ZooKeeperServer.start(
                    ZooKeeperServer.Config.in(dir).withPort(port).withStopOnJvmExit(false));
            out.println(
                "ZooKeeper running at "
                    + server.connectString()
                    + " (pid "
                    + server.pid()
                    + ", dir "
                    + dir
                    + ", log "
                    + dir.resolve(ZooKeeperServer.LOG_FILE)
                    + ")");
            return 0;
          }
        case "stop":
          {
            Optional<ZooKeeperServer> server = ZooKeeperServer.attach(dir);
            if (server.isEmpty()) {
              out.println("No ZooKeeper server runs from " + dir);
              return 1;
            }
            server.get().close();
            out.println("Stopped the ZooKeeper server at " + server.get().connectString());
            return 0;
          }
        case "status":
          {
            Optional<ZooKeeperServer> server = ZooKeeperServer.attach(dir);
            if (server.isEmpty()) {
              out.println("No ZooKeeper server runs from " + dir);
              return 1;
            }
            out.println(
                "ZooKeeper running at "
                    + server.get().connectString()
                    + " (pid "
                    + server.get().pid()
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
    return "usage: zookeeper.sh start|stop|status [--port P (default 2181, 0 = any free)]"
        + " [--dir D (default target/zookeeper/cli)]";
  }
}
