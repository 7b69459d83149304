package dev.weir.testservices;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A real standalone Apache ZooKeeper server (3.8.4, the root pom's {@code zookeeper.version}),
 * started in a child JVM on 127.0.0.1 with its data under a caller-chosen directory: {@code java
 * -cp <classpath> org.apache.zookeeper.server.ZooKeeperServerMain zoo.cfg}. The classpath is the
 * one {@link KafkaBroker} runs on (the resource {@code kafka-broker.classpath}, resolved by Maven
 * from Maven Central at build time), which holds the ZooKeeper 3.8.4 server jars (test-services
 * declares {@code org.apache.zookeeper:zookeeper} itself, so that version is this module's choice,
 * not an accident of Kafka's), so ZooKeeper's jars never meet Beam's or Samza's on one classpath.
 *
 * <p>Layout under {@link #dir()}: {@code zoo.cfg} (rewritten on each start), {@code data/} (the
 * snapshot and transaction log), {@code zookeeper.log} (the child's stdout and stderr), {@code
 * zookeeper.pid} and {@code zookeeper.port} (read by {@link #attach}). The admin HTTP server is
 * off; the four-letter words {@code ruok} and {@code srvr} are on ({@link #start} waits for {@code
 * imok}).
 *
 * <p>Failures: {@link #start} fails within {@link Config#startTimeout} (60 s by default) with an
 * {@link IllegalStateException} naming the address {@code 127.0.0.1:port} when the port is taken,
 * the directory when it cannot be written, and the tail of {@code zookeeper.log} when the child
 * exits or never answers.
 *
 * <p>Threading: an instance may be used from any thread; {@link #close} is synchronized and stops
 * the server (SIGTERM, then SIGKILL after {@link Config#stopTimeout}); a server started with {@link
 * Config#stopOnJvmExit} (the default) is also stopped by a shutdown hook.
 */
public final class ZooKeeperServer implements AutoCloseable {

  static final String PID_FILE = "zookeeper.pid";
  static final String PORT_FILE = "zookeeper.port";
  static final String LOG_FILE = "zookeeper.log";
  static final String MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain";

  /** How to start a server. {@code port} 0 takes a free loopback port. Immutable. */
  public static final class Config {
    final Path dir;
    final int port;
    final Duration startTimeout;
    final Duration stopTimeout;
    final String javaExecutable;
    final boolean stopOnJvmExit;

    private Config(Path dir, int port, Duration startTimeout, Duration stopTimeout,
        String javaExecutable, boolean stopOnJvmExit) {
      this.dir = dir;
      this.port = port;
      this.startTimeout = startTimeout;
      this.stopTimeout = stopTimeout;
      this.javaExecutable = javaExecutable;
      this.stopOnJvmExit = stopOnJvmExit;
    }

    /**
     * A server on a free port with its data in {@code dir} (created if missing), started within 60
     * s, stopped within 30 s, on this JVM's {@code java}, stopped on JVM exit.
     */
    public static Config in(Path dir) {
      return new Config(dir.toAbsolutePath(), 0, Duration.ofSeconds(60), Duration.ofSeconds(30),
          Paths.get(System.getProperty("java.home"), "bin", "java").toString(), true);
    }

    /** The client port on 127.0.0.1 (1..65535), or 0 for a free one. */
    public Config withPort(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException(
            "ZooKeeper port must be 0 (a free port) or 1..65535, got " + port);
      }
      return new Config(dir, port, startTimeout, stopTimeout, javaExecutable, stopOnJvmExit);
    }

    /** How long {@link #start} waits until the server answers {@code ruok}. */
    public Config withStartTimeout(Duration timeout) {
      return new Config(dir, port, timeout, stopTimeout, javaExecutable, stopOnJvmExit);
    }

    /** Whether a shutdown hook stops the server when this JVM exits (default true). */
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

  private ZooKeeperServer(Path dir, int port, ProcessHandle process, Thread shutdownHook,
      Duration stopTimeout) {
    this.dir = dir;
    this.port = port;
    this.process = process;
    this.shutdownHook = shutdownHook;
    this.stopTimeout = stopTimeout;
  }

  /**
   * Starts a server and returns once it answers {@code ruok} with {@code imok} (about 1-2 s).
   *
   * @throws IllegalStateException naming the address, directory or log tail when it cannot start
   *     within {@code startTimeout}
   */
  public static ZooKeeperServer start(Config config) {
    Path dir = config.dir;
    try {
      Files.createDirectories(dir.resolve("data"));
      Files.delete(Files.createTempFile(dir, ".writable", ".probe"));
    } catch (IOException | SecurityException e) {
      throw new IllegalStateException(
          "ZooKeeper directory " + dir + " cannot be created or written: " + e, e);
    }
    Optional<ZooKeeperServer> running = attach(dir);
    if (running.isPresent()) {
      throw new IllegalStateException("A ZooKeeper server already runs from " + dir + " (pid "
          + running.get().pid() + ", " + running.get().connectString() + "); stop it first");
    }
    int port = config.port == 0 ? KafkaBroker.freePort() : checkFree(config.port);
    Path cfg = dir.resolve("zoo.cfg");
    String text = "# Written by dev.weir.testservices.ZooKeeperServer; rewritten on each start.\n"
        + "tickTime=500\n"
        + "initLimit=10\n"
        + "syncLimit=5\n"
        + "dataDir=" + dir.resolve("data") + "\n"
        + "clientPort=" + port + "\n"
        + "clientPortAddress=127.0.0.1\n"
        + "maxClientCnxns=0\n"
        + "admin.enableServer=false\n"
        + "4lw.commands.whitelist=ruok,srvr\n"
        // sessions: 2 s .. 20 s (2x and 20x tickTime), so a killed client's session ends soon
        + "minSessionTimeout=1000\n"
        + "maxSessionTimeout=20000\n";
    write(cfg, text);
    Path log = dir.resolve(LOG_FILE);
    List<String> command = new ArrayList<>();
    command.add(config.javaExecutable);
    command.add("-Xms32m");
    command.add("-Xmx256m");
    command.add("-Djava.awt.headless=true");
    command.add("-Dzookeeper.jmx.log4j.disable=true");
    command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=info");
    command.add("-Dorg.slf4j.simpleLogger.showDateTime=true");
    command.add("-cp");
    command.add(String.join(java.io.File.pathSeparator, KafkaBroker.brokerClasspath()));
    command.add(MAIN);
    command.add(cfg.toString());
    ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile());
    builder.redirectErrorStream(true);
    builder.redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
    builder.redirectInput(ProcessBuilder.Redirect.from(KafkaBroker.nullDevice()));
    Process child;
    try {
      child = builder.start();
    } catch (IOException e) {
      throw new IllegalStateException("Cannot run ZooKeeper's JVM with java executable "
          + config.javaExecutable + ": " + e.getMessage(), e);
    }
    write(dir.resolve(PID_FILE), Long.toString(child.pid()));
    write(dir.resolve(PORT_FILE), Integer.toString(port));
    Thread hook = null;
    if (config.stopOnJvmExit) {
      ProcessHandle handle = child.toHandle();
      hook = new Thread(() -> KafkaBroker.stopProcess(handle, config.stopTimeout),
          "zookeeper-stop-" + port);
      Runtime.getRuntime().addShutdownHook(hook);
    }
    ZooKeeperServer server =
        new ZooKeeperServer(dir, port, child.toHandle(), hook, config.stopTimeout);
    try {
      server.awaitServing(System.nanoTime() + config.startTimeout.toNanos(), config);
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
    return server;
  }

  /** The server started from {@code dir} whose process still runs, if any; not stopped on exit. */
  public static Optional<ZooKeeperServer> attach(Path dir) {
    return KafkaBroker.Recorded.read(dir.resolve(PID_FILE), dir.resolve(PORT_FILE)).map(r ->
        new ZooKeeperServer(dir.toAbsolutePath(), r.port(), r.process(), null, Duration.ofSeconds(30)));
  }

  /** {@code 127.0.0.1:port}, for {@code job.coordinator.zk.connect} or any ZooKeeper client. */
  public String connectString() {
    return "127.0.0.1:" + port;
  }

  /** The client port on 127.0.0.1. */
  public int port() {
    return port;
  }

  /** The server's directory (absolute). */
  public Path dir() {
    return dir;
  }

  /** The child JVM's process id. */
  public long pid() {
    return process.pid();
  }

  /** Whether the server's process is alive. */
  public boolean isRunning() {
    return process.isAlive();
  }

  /**
   * Sends a four-letter word ({@code ruok} or {@code srvr}) and returns the answer, or null when
   * the server does not answer within 2 s.
   */
  public String fourLetterWord(String word) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
      socket.setSoTimeout(2000);
      OutputStream out = socket.getOutputStream();
      out.write(word.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return null;
    }
  }

  /** Stops the server: SIGTERM, then SIGKILL after the stop timeout. Idempotent; data stays. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    KafkaBroker.stopProcess(process, stopTimeout);
    if (shutdownHook != null) {
      try {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
      } catch (IllegalStateException e) {
        // The JVM is shutting down; the hook runs as well.
      }
    }
    try {
      Files.deleteIfExists(dir.resolve(PID_FILE));
    } catch (IOException e) {
      // a stale pid file; attach() checks that the process lives
    }
  }

  @Override
  public String toString() {
    return "ZooKeeperServer{" + connectString() + ", pid " + pid() + ", " + dir + "}";
  }

  private void awaitServing(long deadlineNs, Config config) {
    while (System.nanoTime() < deadlineNs) {
      if (!process.isAlive()) {
        throw new IllegalStateException("The ZooKeeper server for " + connectString() + " (java "
            + config.javaExecutable + ", dir " + dir + ") exited during start; the end of "
            + dir.resolve(LOG_FILE) + ":\n" + KafkaBroker.logTail(dir.resolve(LOG_FILE)));
      }
      if (KafkaBroker.accepts(port) && "imok".equals(fourLetterWord("ruok"))) {
        return;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while starting " + this, e);
      }
    }
    throw new IllegalStateException("The ZooKeeper server at " + connectString() + " (dir " + dir
        + ") did not answer ruok within " + config.startTimeout.toSeconds() + " s; the end of "
        + dir.resolve(LOG_FILE) + ":\n" + KafkaBroker.logTail(dir.resolve(LOG_FILE)));
  }

  private static int checkFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return port;
    } catch (IOException e) {
      throw new IllegalStateException(
          "ZooKeeper address 127.0.0.1:" + port + " is taken (" + e.getMessage() + ")", e);
    }
  }

  private static void write(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
