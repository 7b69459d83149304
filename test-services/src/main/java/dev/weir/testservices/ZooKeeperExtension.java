package dev.weir.testservices;

import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that gives a test class one running {@link ZooKeeperServer} (standalone, on loopback), started before its
 * first test and stopped after its last, with its data in {@code
 * target/zookeeper/<TestClass>-<millis>} (relative to the working directory, which is the
 * module's under Maven).
 *
 * <p>Use it either way:
 *
 * <pre>{@code
 * @RegisterExtension static final ZooKeeperExtension ZK = new ZooKeeperExtension();
 * ... ZK.server().connectString();
 *
 * @ExtendWith(ZooKeeperExtension.class)
 * class MyIT { @Test void connects(ZooKeeperServer zk) { ... } }
 * }</pre>
 *
 * A test method or constructor may declare a {@link ZooKeeperServer} parameter to receive the server.
 * The extension is not meant for parallel test classes sharing one instance. Threading: the
 * callbacks run on JUnit's thread; {@link #server()} may be read from any thread after start.
 */
public final class ZooKeeperExtension
    implements BeforeAllCallback, AfterAllCallback, ParameterResolver {

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(ZooKeeperExtension.class);

  private final Path baseDir;
  private volatile ZooKeeperServer server;

  /** Servers under {@code target/zookeeper}. */
  public ZooKeeperExtension() {
    this(Paths.get("target", "zookeeper"));
  }

  /** Servers under {@code baseDir} (one subdirectory per test class). */
  public ZooKeeperExtension(Path baseDir) {
    this.baseDir = baseDir;
  }

  /**
   * The running server.
   *
   * @throws IllegalStateException before the test class started or after it finished
   */
  public ZooKeeperServer server() {
    ZooKeeperServer b = server;
    if (b == null) {
      throw new IllegalStateException(
          "No ZooKeeper server: ZooKeeperExtension starts one before a test class's first test");
    }
    return b;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    String name = context.getRequiredTestClass().getSimpleName() + "-" + System.currentTimeMillis();
    ZooKeeperServer started = ZooKeeperServer.start(ZooKeeperServer.Config.in(baseDir.resolve(name)));
    server = started;
    // Stored so that JUnit closes it (an AutoCloseable) even if afterAll is not reached.
    context.getStore(NAMESPACE).put("zookeeper", started);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    ZooKeeperServer b = server;
    server = null;
    if (b != null) {
      b.close();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == ZooKeeperServer.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return server();
  }
}
