package dev.weir.testservices;

import java.io.PrintStream;
import java.nio.file.Path;

/**
 * The command line behind {@code scripts/zookeeper.sh}: {@code start|stop|status [--port P]
 * [--dir D]} ({@link ServiceCli}). {@code start} starts a {@link ZooKeeperServer} (standalone,
 * 127.0.0.1) that outlives this process (its pid in {@code D/zookeeper.pid}) and prints its connect
 * string; {@code stop} stops the server started from {@code D}; {@code status} says whether it
 * runs. The default directory is {@code target/zookeeper/cli}, the default port 2181. Exit codes:
 * 0 done (status: running), 1 not running (status, stop), 2 bad usage or a failed start (the
 * message names the address or path). Single-threaded.
 */
public final class ZooKeeperCli {
  static final ServiceCli.Kind KIND = new ServiceCli.Kind("ZooKeeper", "zookeeper.sh", 2181,
      Path.of("target", "zookeeper", "cli"), ZooKeeperServer.LOG_FILE,
      (dir, port) -> running(ZooKeeperServer.start(
          ZooKeeperServer.Config.in(dir).withPort(port).withStopOnJvmExit(false))),
      dir -> ZooKeeperServer.attach(dir).map(ZooKeeperCli::running));

  private ZooKeeperCli() {}

  /** Runs the command and exits the JVM with its code. */
  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs the command; returns the exit code. Messages go to {@code out} and {@code err}. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    return ServiceCli.run(KIND, args, out, err);
  }

  private static ServiceCli.Running running(ZooKeeperServer server) {
    return new ServiceCli.Running(server.connectString(), server.pid(), server::close);
  }
}
