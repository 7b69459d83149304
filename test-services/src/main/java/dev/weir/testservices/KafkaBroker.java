package dev.weir.testservices;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * A real single-node Apache Kafka broker in KRaft mode (broker and controller in one process, no
 * ZooKeeper), started in a child JVM on loopback with its data under a caller-chosen directory.
 *
 * <h2>Version: Kafka 3.9</h2>
 *
 * The broker is {@code org.apache.kafka:kafka_2.13} at the root pom's {@code kafka.version}
 * (3.9.2): the last 3.x line, whose KRaft mode is production-ready (since 3.3) and which runs on
 * Java 17 (supported since 3.1, KAFKA-13273). Kafka 4.0 removed the pre-2.1 protocol versions
 * (KIP-896); 3.9 still serves every version, so both clients Weir needs talk to it with nothing to
 * negotiate away: Beam 2.70's KafkaIO (compiled against kafka-clients 2.4.1, tested by Beam up to
 * the 3.9 clients; Weir's tests use kafka-clients 3.9.2) and Samza 1.8's samza-kafka (kafka-clients
 * 2.4.1).
 *
 * <h2>Why a child JVM</h2>
 *
 * The broker runs as {@code java -cp <its resolved classpath> kafka.Kafka server.properties}, the
 * classpath being the one Maven resolved for {@code kafka_2.13} in this module (written to the
 * resource {@code kafka-broker.classpath} at build time). So the broker's Scala, Jackson and
 * ZooKeeper jars never meet Beam's or Samza's on one classpath, and a crash test can kill a Weir
 * process with SIGKILL while the broker lives on. Before the first start the storage directory is
 * formatted with Kafka's own {@code kafka.tools.StorageTool} (a second, short child JVM), as
 * {@code kafka-storage.sh format} does. Note: the root pom's dependencyManagement pins (Jackson,
 * Caffeine, slf4j) apply to that classpath too; the broker runs with them.
 *
 * <h2>Layout under {@link #dir()}</h2>
 *
 * {@code server.properties}, {@code data/} (the log dirs and KRaft metadata log), {@code broker.log}
 * (the child's stdout and stderr) and {@code broker.pid} (read by {@link #attach} and by
 * {@code scripts/kafka-broker.sh}).
 *
 * <h2>Failures</h2>
 *
 * {@link #start} fails within {@link Config#startTimeout} (60 s by default) with an {@link
 * IllegalStateException} naming the cause: the address {@code 127.0.0.1:port} when the port is
 * taken, the directory when it cannot be written, the java executable and the tail of {@code
 * broker.log} when the child exits (e.g. a Java too old for Kafka 3.9, which needs 11+).
 *
 * <h2>Threading</h2>
 *
 * An instance may be used from any thread; {@link #createTopic} and {@link #close} are
 * synchronized. {@link #close} stops the broker (SIGTERM, then SIGKILL after {@link
 * Config#stopTimeout}); a broker started with {@link Config#stopOnJvmExit} (the default) is also
 * stopped by a shutdown hook, so a test JVM never leaves one behind.
 */
public final class KafkaBroker implements AutoCloseable {

  /** The resource (next to this class) that lists the broker's classpath, one path per entry. */
  static final String CLASSPATH_RESOURCE = "kafka-broker.classpath";

  static final String PID_FILE = "broker.pid";
  static final String PORT_FILE = "broker.port";
  static final String LOG_FILE = "broker.log";

  /**
   * How to start a broker. {@code port} 0 takes a free loopback port. Immutable; use the {@code
   * with*} methods.
   */
  public static final class Config {
    final Path dir;
    final int port;
    final Duration startTimeout;
    final Duration stopTimeout;
    final String javaExecutable;
    final boolean stopOnJvmExit;

    private Config(
        Path dir,
        int port,
        Duration startTimeout,
        Duration stopTimeout,
        String javaExecutable,
        boolean stopOnJvmExit) {
      this.dir = dir;
      this.port = port;
      this.startTimeout = startTimeout;
      this.stopTimeout = stopTimeout;
      this.javaExecutable = javaExecutable;
      this.stopOnJvmExit = stopOnJvmExit;
    }

    /**
     * A broker on a free port with its data in {@code dir} (created if missing; e.g. {@code
     * target/kafka/<test>}), started within 60 s, stopped within 30 s, on this JVM's {@code java},
     * stopped on JVM exit.
     */
    public static Config in(Path dir) {
      return new Config(
          dir.toAbsolutePath(),
          0,
          Duration.ofSeconds(60),
          Duration.ofSeconds(30),
          Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
          true);
    }

    /** The client port on 127.0.0.1 (1..65535), or 0 for a free one. */
    public Config withPort(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException(
            "Kafka broker port must be 0 (a free port) or 1..65535, got " + port);
      }
      return new Config(dir, port, startTimeout, stopTimeout, javaExecutable, stopOnJvmExit);
    }

    /** How long {@link #start} waits until the broker serves metadata. */
    public Config withStartTimeout(Duration timeout) {
      return new Config(dir, port, timeout, stopTimeout, javaExecutable, stopOnJvmExit);
    }

    /**
     * The {@code java} executable of the child JVM (Kafka 3.9 needs Java 11 or newer): a path
     * (relative ones are taken from this JVM's working directory) or a bare name looked up on
     * {@code PATH}.
     */
    public Config withJavaExecutable(String java) {
      String executable =
          java.contains(File.separator) ? Paths.get(java).toAbsolutePath().toString() : java;
      return new Config(dir, port, startTimeout, stopTimeout, executable, stopOnJvmExit);
    }

    /**
     * Whether a shutdown hook stops the broker when this JVM exits (true by default; the command
     * line's {@code start} turns it off so the broker outlives it).
     */
    public Config withStopOnJvmExit(boolean stop) {
      return new Config(dir, port, startTimeout, stopTimeout, javaExecutable, stop);
    }
  }

  private final Path dir;
  private final int port;
  private final ProcessHandle process;
  private final Thread shutdownHook;
  private final Duration stopTimeout;
  private boolean closed;

  private KafkaBroker(
      Path dir, int port, ProcessHandle process, Thread shutdownHook, Duration stopTimeout) {
    this.dir = dir;
    this.port = port;
    this.process = process;
    this.shutdownHook = shutdownHook;
    this.stopTimeout = stopTimeout;
  }

  /**
   * Starts a broker and returns once it serves metadata (its one node is listed by the admin
   * client). Blocks the calling thread for a few seconds (~5 s on 2 cores).
   *
   * @throws IllegalStateException naming the address, directory or java executable when the broker
   *     cannot start, or when it does not serve metadata within {@code startTimeout}
   */
  public static KafkaBroker start(Config config) {
    Path dir = config.dir;
    prepareDirectory(dir);
    Optional<KafkaBroker> running = attach(dir);
    if (running.isPresent()) {
      throw new IllegalStateException(
          "A Kafka broker already runs from "
              + dir
              + " (pid "
              + running.get().pid()
              + ", "
              + running.get().bootstrapServers()
              + "); stop it first");
    }
    int port = config.port == 0 ? freePort() : checkFree(config.port);
    int controllerPort = freePort();
    List<String> classpath = brokerClasspath();
    Path properties = dir.resolve("server.properties");
    Path data = dir.resolve("data");
    writeServerProperties(properties, data, port, controllerPort);
    Path log = dir.resolve(LOG_FILE);
    long deadlineNs = System.nanoTime() + config.startTimeout.toNanos();

    if (!Files.exists(data.resolve("meta.properties"))) {
      format(config, classpath, properties, log, deadlineNs);
    }
    Process child =
        launch(
            config,
            classpath,
            List.of("kafka.Kafka", properties.toString()),
            log,
            /* append= */ true);
    writeString(dir.resolve(PID_FILE), Long.toString(child.pid()));
    writeString(dir.resolve(PORT_FILE), Integer.toString(port));
    Thread hook = null;
    if (config.stopOnJvmExit) {
      ProcessHandle handle = child.toHandle();
      hook =
          new Thread(() -> stopProcess(handle, config.stopTimeout), "kafka-broker-stop-" + port);
      Runtime.getRuntime().addShutdownHook(hook);
    }
    KafkaBroker broker = new KafkaBroker(dir, port, child.toHandle(), hook, config.stopTimeout);
    try {
      broker.awaitMetadata(deadlineNs, config);
    } catch (RuntimeException e) {
      broker.close();
      throw e;
    }
    return broker;
  }

  /**
   * The broker started from {@code dir} whose process still runs (by {@code broker.pid}), if any.
   * The returned handle does not stop it on JVM exit; {@link #close} does stop it.
   */
  public static Optional<KafkaBroker> attach(Path dir) {
    return Recorded.read(dir.resolve(PID_FILE), dir.resolve(PORT_FILE)).map(r ->
        new KafkaBroker(dir.toAbsolutePath(), r.port(), r.process(), null, Duration.ofSeconds(30)));
  }

  /**
   * A service's live process and port as its pid and port files record them (shared with
   * {@link ZooKeeperServer#attach}).
   */
  record Recorded(ProcessHandle process, int port) {
    /** Empty when either file is missing or unreadable, or the process is no longer alive. */
    static Optional<Recorded> read(Path pidFile, Path portFile) {
      if (!Files.isRegularFile(pidFile) || !Files.isRegularFile(portFile)) {
        return Optional.empty();
      }
      try {
        long pid = Long.parseLong(Files.readString(pidFile).trim());
        int port = Integer.parseInt(Files.readString(portFile).trim());
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).map(h -> new Recorded(h, port));
      } catch (IOException | NumberFormatException e) {
        return Optional.empty();
      }
    }
  }

  /** {@code 127.0.0.1:port}, for {@code bootstrap.servers}. */
  public String bootstrapServers() {
    return "127.0.0.1:" + port;
  }

  /** The client (PLAINTEXT) port on 127.0.0.1. */
  public int port() {
    return port;
  }

  /** The broker's directory (absolute). */
  public Path dir() {
    return dir;
  }

  /** The child JVM's process id. */
  public long pid() {
    return process.pid();
  }

  /** Whether the broker's process is alive. */
  public boolean isRunning() {
    return process.isAlive();
  }

  /**
   * Creates a topic with {@code partitions} partitions (replication factor 1) and waits until
   * every partition has a leader. An existing topic with the same partition count is accepted.
   *
   * @throws IllegalStateException when the topic exists with another partition count, or when the
   *     broker does not answer within 60 s
   */
  public synchronized void createTopic(String topic, int partitions) {
    if (partitions < 1) {
      throw new IllegalArgumentException(
          "Topic " + topic + ": partitions must be at least 1, got " + partitions);
    }
    try (Admin admin = admin()) {
      try {
        admin
            .createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
            .all()
            .get(60, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof TopicExistsException)) {
          throw new IllegalStateException(
              "Cannot create topic " + topic + " on " + bootstrapServers(), e.getCause());
        }
      }
      long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (true) {
        TopicDescription description;
        try {
          description =
              admin.describeTopics(List.of(topic)).allTopicNames().get(60, TimeUnit.SECONDS)
                  .get(topic);
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof UnknownTopicOrPartitionException)
              || System.nanoTime() > deadlineNs) {
            throw e;
          }
          Thread.sleep(50); // created, but the broker's metadata cache does not list it yet
          continue;
        }
        if (description.partitions().size() != partitions) {
          throw new IllegalStateException(
              "Topic "
                  + topic
                  + " on "
                  + bootstrapServers()
                  + " has "
                  + description.partitions().size()
                  + " partitions, not "
                  + partitions);
        }
        if (description.partitions().stream().allMatch(p -> p.leader() != null)) {
          return;
        }
        if (System.nanoTime() > deadlineNs) {
          throw new IllegalStateException(
              "Topic " + topic + " on " + bootstrapServers() + " has no leader after 60 s");
        }
        Thread.sleep(50);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while creating topic " + topic, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException(
          "Cannot create topic " + topic + " on " + bootstrapServers(), e);
    }
  }

  /** An admin client on this broker; the caller closes it. */
  public Admin admin() {
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
    return Admin.create(props);
  }

  /**
   * Stops the broker: SIGTERM (Kafka's controlled shutdown), then SIGKILL if it has not exited
   * within the stop timeout. Idempotent. The data directory stays.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    stopProcess(process, stopTimeout);
    if (shutdownHook != null) {
      try {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
      } catch (IllegalStateException e) {
        // The JVM is shutting down; the hook runs (harmlessly) as well.
      }
    }
    try {
      Files.deleteIfExists(dir.resolve(PID_FILE));
    } catch (IOException e) {
      // Only a stale pid file remains; attach() checks that the process lives.
    }
  }

  @Override
  public String toString() {
    return "KafkaBroker{" + bootstrapServers() + ", pid " + pid() + ", " + dir + "}";
  }

  // ---------------------------------------------------------------- starting

  private void awaitMetadata(long deadlineNs, Config config) {
    Throwable last = null;
    while (System.nanoTime() < deadlineNs) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "The Kafka broker for "
                + bootstrapServers()
                + " (java "
                + config.javaExecutable
                + ", dir "
                + dir
                + ") exited during start; the end of "
                + dir.resolve(LOG_FILE)
                + ":\n"
                + logTail(dir.resolve(LOG_FILE)));
      }
      if (!accepts(port)) {
        sleepMs(200);
        continue;
      }
      try (Admin admin = admin()) {
        Collection<?> nodes = admin.describeCluster().nodes().get(5, TimeUnit.SECONDS);
        if (!nodes.isEmpty()) {
          return;
        }
      } catch (ExecutionException | TimeoutException e) {
        last = e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while starting " + this, e);
      }
      sleepMs(200);
    }
    throw new IllegalStateException(
        "The Kafka broker at "
            + bootstrapServers()
            + " (dir "
            + dir
            + ") did not serve metadata within "
            + config.startTimeout.toSeconds()
            + " s; last error: "
            + last
            + "; the end of "
            + dir.resolve(LOG_FILE)
            + ":\n"
            + logTail(dir.resolve(LOG_FILE)));
  }

  /** Whether 127.0.0.1:port accepts a TCP connection (so the admin client does not log retries). */
  static boolean accepts(int port) {
    try (java.net.Socket socket = new java.net.Socket()) {
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static void prepareDirectory(Path dir) {
    try {
      Files.createDirectories(dir);
      Path probe = Files.createTempFile(dir, ".writable", ".probe");
      Files.delete(probe);
    } catch (IOException | SecurityException e) {
      throw new IllegalStateException(
          "Kafka broker directory " + dir + " cannot be created or written: " + e, e);
    }
  }

  private static void format(
      Config config, List<String> classpath, Path properties, Path log, long deadlineNs) {
    Process format =
        launch(
            config,
            classpath,
            List.of(
                "kafka.tools.StorageTool",
                "format",
                "-t",
                Uuid.randomUuid().toString(),
                "-c",
                properties.toString(),
                "--ignore-formatted"),
            log,
            /* append= */ false);
    try {
      long leftNs = Math.max(0, deadlineNs - System.nanoTime());
      if (!format.waitFor(leftNs, TimeUnit.NANOSECONDS)) {
        format.destroyForcibly();
        throw new IllegalStateException(
            "Formatting the Kafka storage in " + config.dir + " did not finish in time");
      }
    } catch (InterruptedException e) {
      format.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while formatting " + config.dir, e);
    }
    if (format.exitValue() != 0) {
      throw new IllegalStateException(
          "Formatting the Kafka storage in "
              + config.dir
              + " failed (java "
              + config.javaExecutable
              + ", exit "
              + format.exitValue()
              + "); the end of "
              + log
              + ":\n"
              + logTail(log));
    }
  }

  private static Process launch(
      Config config, List<String> classpath, List<String> mainAndArgs, Path log, boolean append) {
    List<String> command = new ArrayList<>();
    command.add(config.javaExecutable);
    command.add("-Xms128m");
    command.add("-Xmx512m");
    command.add("-XX:+UseG1GC");
    command.add("-Djava.awt.headless=true");
    command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=info");
    command.add("-Dorg.slf4j.simpleLogger.showDateTime=true");
    command.add("-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients=warn");
    command.add("-cp");
    command.add(String.join(java.io.File.pathSeparator, classpath));
    command.addAll(mainAndArgs);
    ProcessBuilder builder = new ProcessBuilder(command).directory(config.dir.toFile());
    builder.redirectErrorStream(true);
    builder.redirectOutput(
        append
            ? ProcessBuilder.Redirect.appendTo(log.toFile())
            : ProcessBuilder.Redirect.to(log.toFile()));
    builder.redirectInput(ProcessBuilder.Redirect.from(nullDevice()));
    try {
      return builder.start();
    } catch (IOException e) {
      throw new IllegalStateException(
          "Cannot run the Kafka broker's JVM with java executable "
              + config.javaExecutable
              + ": "
              + e.getMessage(),
          e);
    }
  }

  static java.io.File nullDevice() {
    return new java.io.File(
        System.getProperty("os.name").startsWith("Windows") ? "NUL" : "/dev/null");
  }

  private static void writeServerProperties(Path file, Path data, int port, int controllerPort) {
    Map<String, String> p = new java.util.LinkedHashMap<>();
    p.put("process.roles", "broker,controller");
    p.put("node.id", "1");
    p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    p.put("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
    p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
    p.put("controller.listener.names", "CONTROLLER");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.put("log.dirs", data.toString());
    p.put("num.partitions", "1");
    p.put("default.replication.factor", "1");
    p.put("min.insync.replicas", "1");
    p.put("offsets.topic.replication.factor", "1");
    // 50 partitions (the default) take seconds to create on 2 cores; a test needs few.
    p.put("offsets.topic.num.partitions", "4");
    p.put("transaction.state.log.replication.factor", "1");
    p.put("transaction.state.log.min.isr", "1");
    p.put("transaction.state.log.num.partitions", "4");
    p.put("group.initial.rebalance.delay.ms", "0");
    p.put("log.segment.bytes", Integer.toString(16 * 1024 * 1024));
    StringBuilder text =
        new StringBuilder("# Written by dev.weir.testservices.KafkaBroker; rewritten on each start.\n");
    p.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
    writeString(file, text.toString());
  }

  /** The broker's classpath from the build-time resource; each entry must exist. */
  static List<String> brokerClasspath() {
    String text;
    try (InputStream in = KafkaBroker.class.getResourceAsStream(CLASSPATH_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(
            "Resource dev/weir/testservices/"
                + CLASSPATH_RESOURCE
                + " is missing: build the test-services module with Maven (generate-resources"
                + " writes it)");
      }
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> entries = new ArrayList<>();
    for (String entry : text.split(java.util.regex.Pattern.quote(java.io.File.pathSeparator))) {
      if (entry.isBlank()) {
        continue;
      }
      if (!Files.exists(Paths.get(entry))) {
        throw new IllegalStateException(
            "The Kafka broker's classpath names "
                + entry
                + ", which does not exist; rebuild test-services (mvn -pl test-services"
                + " generate-resources)");
      }
      entries.add(entry);
    }
    return entries;
  }

  static int freePort() {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException("No free port on 127.0.0.1: " + e.getMessage(), e);
    }
  }

  private static int checkFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return port;
    } catch (IOException e) {
      throw new IllegalStateException(
          "Kafka broker address 127.0.0.1:" + port + " is taken (" + e.getMessage() + ")", e);
    }
  }

  // ---------------------------------------------------------------- stopping

  static void stopProcess(ProcessHandle handle, Duration timeout) {
    if (!handle.isAlive()) {
      return;
    }
    handle.destroy();
    try {
      handle.onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      handle.destroyForcibly();
      try {
        handle.onExit().get(10, TimeUnit.SECONDS);
      } catch (Exception ignored) {
        // Gone or unkillable; nothing more to do.
      }
    } catch (InterruptedException e) {
      handle.destroyForcibly();
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      handle.destroyForcibly();
    }
  }

  // ---------------------------------------------------------------- helpers

  private static void writeString(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  static String logTail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException | UncheckedIOException e) {
      return "(cannot read " + log + ": " + e.getMessage() + ")";
    }
  }

  private static void sleepMs(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while starting a Kafka broker", e);
    }
  }
}
