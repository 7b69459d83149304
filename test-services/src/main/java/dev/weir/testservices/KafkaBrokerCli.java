package dev.weir.testservices;

import java.io.PrintStream;
import java.nio.file.Path;

/**
 * The command line behind {@code scripts/kafka-broker.sh}: {@code start|stop|status [--port P]
 * [--dir D]} ({@link ServiceCli}). {@code start} starts a {@link KafkaBroker} that outlives this
 * process (its pid in {@code D/broker.pid}) and prints its bootstrap address; {@code stop} stops
 * the broker started from {@code D}; {@code status} says whether it runs. The default directory is
 * {@code target/kafka-broker/cli}, the default port 9092. Exit codes: 0 done (status: running), 1
 * not running (status, stop), 2 bad usage or a failed start (the message names the address or
 * path). Single-threaded.
 */
public final class KafkaBrokerCli {
  static final ServiceCli.Kind KIND = new ServiceCli.Kind("Kafka broker", "kafka-broker.sh", 9092,
      Path.of("target", "kafka-broker", "cli"), KafkaBroker.LOG_FILE,
      (dir, port) -> running(KafkaBroker.start(KafkaBroker.Config.in(dir).withPort(port).withStopOnJvmExit(false))),
      dir -> KafkaBroker.attach(dir).map(KafkaBrokerCli::running));

  private KafkaBrokerCli() {}

  /** Runs the command and exits the JVM with its code. */
  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs the command; returns the exit code. Messages go to {@code out} and {@code err}. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    return ServiceCli.run(KIND, args, out, err);
  }

  private static ServiceCli.Running running(KafkaBroker broker) {
    return new ServiceCli.Running(broker.bootstrapServers(), broker.pid(), broker::close);
  }
}
