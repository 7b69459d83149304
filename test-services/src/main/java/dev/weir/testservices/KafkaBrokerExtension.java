package dev.weir.testservices;

import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that gives a test class one running {@link KafkaBroker}, started before its
 * first test and stopped after its last, with its data in {@code
 * target/kafka-broker/<TestClass>-<millis>} (relative to the working directory, which is the
 * module's under Maven).
 *
 * <p>Use it either way:
 *
 * <pre>{@code
 * @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
 * ... KAFKA.broker().createTopic("in", 4);
 *
 * @ExtendWith(KafkaBrokerExtension.class)
 * class MyIT { @Test void reads(KafkaBroker broker) { ... } }
 * }</pre>
 *
 * A test method or constructor may declare a {@link KafkaBroker} parameter to receive the broker.
 * The extension is not meant for parallel test classes sharing one instance. Threading: the
 * callbacks run on JUnit's thread; {@link #broker()} may be read from any thread after start.
 */
public final class KafkaBrokerExtension
    implements BeforeAllCallback, AfterAllCallback, ParameterResolver {

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(KafkaBrokerExtension.class);

  private final Path baseDir;
  private volatile KafkaBroker broker;

  /** Brokers under {@code target/kafka-broker}. */
  public KafkaBrokerExtension() {
    this(Paths.get("target", "kafka-broker"));
  }

  /** Brokers under {@code baseDir} (one subdirectory per test class). */
  public KafkaBrokerExtension(Path baseDir) {
    this.baseDir = baseDir;
  }

  /**
   * The running broker.
   *
   * @throws IllegalStateException before the test class started or after it finished
   */
  public KafkaBroker broker() {
    KafkaBroker b = broker;
    if (b == null) {
      throw new IllegalStateException(
          "No Kafka broker: KafkaBrokerExtension starts one before a test class's first test");
    }
    return b;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    String name = context.getRequiredTestClass().getSimpleName() + "-" + System.currentTimeMillis();
    KafkaBroker started = KafkaBroker.start(KafkaBroker.Config.in(baseDir.resolve(name)));
    broker = started;
    // Stored so that JUnit closes it (an AutoCloseable) even if afterAll is not reached.
    context.getStore(NAMESPACE).put("broker", started);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    KafkaBroker b = broker;
    broker = null;
    if (b != null) {
      b.close();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == KafkaBroker.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return broker();
  }
}
