// Role: the Kafka broker of one suite, for the runners whose jobs carry their intermediate streams
// on Kafka (weir-samza): started on first use (a real single-node KRaft broker from test-services'
// KafkaBroker, data under the results folder), or an existing broker named with --kafka; each
// run's topics are deleted after the run; the broker is stopped when the suite ends (also on
// failure, and on Ctrl-C through KafkaBroker's shutdown hook).
// Threading: used from the driver's main thread (runs never overlap); close() also runs from a
// shutdown hook when the driver is terminated, so bootstrapServers() and close() are synchronized
// (KafkaBroker's own stop-on-exit hook may run at the same time: stopping twice is harmless).
package dev.weir.nexmark.driver;

import dev.weir.testservices.KafkaBroker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * The suite's Kafka: {@link #bootstrapServers()} starts the broker on first call (about 5-10 s on
 * 2 cores) in {@code <dir>} ({@code server.properties}, {@code data/}, {@code broker.log}), or
 * returns the address given with {@code --kafka}. A broker that could not start is not retried:
 * every later call throws the same error, so each weir-samza run records it and the suite goes
 * on. {@link #close()} stops a broker this suite started and deletes its {@code data/} (the log
 * stays); an existing broker is left running.
 */
public final class SuiteKafka implements AutoCloseable {
  /** {@code --kafka} value that makes the suite start its own broker. */
  public static final String START = "start";

  private final Path dir;
  private final String external;
  private KafkaBroker broker;
  private IllegalStateException startFailure;
  private Double startSec;
  private boolean closed;
  /** Stops the broker and deletes its data when the driver is terminated (Ctrl-C, SIGTERM). */
  private Thread shutdownHook;

  /**
   * @param kafka {@value #START} (start a broker in {@code dir} on first use) or {@code host:port}
   *     of an existing broker
   * @param dir where a started broker keeps its files (e.g. {@code <results>/kafka-broker})
   * @throws IllegalArgumentException naming {@code --kafka} when the value is neither
   */
  public SuiteKafka(String kafka, Path dir) {
    String k = check(kafka);
    this.dir = dir;
    this.external = k.equals(START) ? null : k;
  }

  /**
   * Checks a {@code --kafka} value.
   *
   * @return the value, trimmed ({@value #START} for null)
   * @throws IllegalArgumentException naming {@code --kafka} and the allowed values
   */
  public static String check(String kafka) {
    String k = kafka == null ? START : kafka.trim();
    if (!k.equals(START) && !k.matches("[^\\s,:=]+:\\d{1,5}(,[^\\s,:=]+:\\d{1,5})*")) {
      throw new IllegalArgumentException("--kafka=" + kafka + " is neither 'start' (the suite starts a broker) "
          + "nor host:port[,host:port...] of an existing Kafka broker");
    }
    return k;
  }

  /**
   * The brokers' bootstrap address, starting the suite's broker on the first call.
   *
   * @throws IllegalStateException naming the address or directory when the broker cannot start
   *     (within 60 s), also on every call after such a failure
   */
  public synchronized String bootstrapServers() {
    if (external != null) {
      return external;
    }
    if (closed) {
      throw new IllegalStateException("the suite's Kafka broker is already stopped");
    }
    if (startFailure != null) {
      throw startFailure;
    }
    if (broker == null) {
      long t0 = System.nanoTime();
      try {
        System.out.println("weir nexmark: starting a Kafka broker for weir-samza in " + dir + " ...");
        broker = KafkaBroker.start(KafkaBroker.Config.in(dir).withStartTimeout(Duration.ofSeconds(60)));
        startSec = (System.nanoTime() - t0) / 1e9;
        shutdownHook = new Thread(this::close, "weir-nexmark-kafka-stop");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        System.out.printf("weir nexmark: Kafka broker at %s (pid %d), started in %.1f s%n",
            broker.bootstrapServers(), broker.pid(), startSec);
      } catch (RuntimeException e) {
        startFailure = new IllegalStateException("the suite's Kafka broker (for weir-samza) did not start: "
            + firstLine(e.getMessage()), e);
        throw startFailure;
      }
    }
    return broker.bootstrapServers();
  }

  /**
   * Deletes the topics named {@code <prefix>.*} or {@code <prefix>-*} (one run's intermediate
   * streams and changelog; a cancelled or killed Samza job leaves them). Best effort: a failure is returned as
   * a message, never thrown.
   *
   * @return null when done (or nothing to do), else why not
   */
  public String deleteTopics(String prefix) {
    String servers;
    if (external != null) {
      servers = external;
    } else if (broker == null || closed) {
      return null;
    } else {
      servers = broker.bootstrapServers();
    }
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000);
    try (Admin admin = Admin.create(p)) {
      List<String> topics = admin.listTopics().names().get(20, TimeUnit.SECONDS).stream()
          .filter(t -> t.startsWith(prefix + ".") || t.startsWith(prefix + "-")).sorted().toList();
      if (!topics.isEmpty()) {
        admin.deleteTopics(topics).all().get(30, TimeUnit.SECONDS);
      }
      return null;
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      return "could not delete the topics " + prefix + "* on " + servers + ": " + e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted while deleting the topics " + prefix + "*";
    }
  }

  /** What results.json records about the broker (settings.kafka). */
  public synchronized Map<String, Object> describe() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("startedBySuite", external == null);
    if (external != null) {
      m.put("bootstrapServers", external);
    } else {
      m.put("dir", dir.toString());
      m.put("broker", "Apache Kafka 3.9 (KRaft, single node, loopback) from test-services' KafkaBroker");
      if (broker != null) {
        m.put("bootstrapServers", broker.bootstrapServers());
        m.put("startSec", startSec);
      }
      if (startFailure != null) {
        m.put("startFailure", startFailure.getMessage());
      }
    }
    return m;
  }

  /** Whether this suite started (or tried to start) a broker. */
  public synchronized boolean started() {
    return broker != null || startFailure != null;
  }

  /**
   * Stops the suite's broker (if it started one) and deletes its data; idempotent. Also runs from a
   * shutdown hook when the driver is terminated.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (shutdownHook != null && Thread.currentThread() != shutdownHook) {
      try {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
      } catch (IllegalStateException e) {
        // the JVM is shutting down: the hook runs too, and finds the broker closed
      }
    }
    if (broker != null) {
      broker.close();
      deleteTree(dir.resolve("data"));
      System.out.println("weir nexmark: Kafka broker stopped (log: " + dir.resolve("broker.log") + ")");
    }
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "(no message)";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  private static void deleteTree(Path d) {
    if (!Files.isDirectory(d)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(d)) {
      paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException | java.io.UncheckedIOException e) {
      // only disk space: the broker is stopped
    }
  }
}
