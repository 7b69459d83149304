package dev.weir.runner;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Where a translated Weir job runs ({@code --executionEnvironment}): Weir's embedded executor (the
 * default), or Apache Samza's samza-core, in one process ({@link #SAMZA_LOCAL}) or several
 * ({@link #SAMZA_STANDALONE}). The Samza environments live in the artifact
 * {@value #SAMZA_ARTIFACT}, found through {@link ExecutionEnvironmentProvider}; this enum only
 * names them. Beam's option parser reads it through {@link #fromOption}, so users may type it in
 * any case. Stateless; safe from any thread.
 */
public enum ExecutionEnvironment {
  /** Weir's embedded executor: containers as threads of this JVM, in-process streams. The default. */
  EMBEDDED,
  /**
   * samza-core's {@code LocalApplicationRunner} with its passthrough coordinator and one processor
   * in this JVM; intermediate streams on Kafka topics.
   */
  SAMZA_LOCAL,
  /**
   * Several processes running the same {@code main}, as Samza standalone jobs do: samza-core's passthrough
   * coordinator (each process with its own {@code processor.id}) or its ZooKeeper coordinator, whose
   * survivors take over a dead process's tasks; needs {@code weir-runner-samza} on the classpath.
   */
  SAMZA_STANDALONE;

  /** Maven coordinates of the artifact that provides the Samza environments. */
  public static final String SAMZA_ARTIFACT = "dev.weir:weir-runner-samza";

  /** Whether this environment runs on samza-core (every value but {@link #EMBEDDED}). */
  public boolean isSamza() {
    return this != EMBEDDED;
  }

  /**
   * Parses the value of {@code --executionEnvironment}, case-insensitively; Beam's option parser
   * calls this through Jackson ({@code @JsonCreator}).
   *
   * @throws IllegalArgumentException naming the option, the bad value and the allowed values
   */
  @com.fasterxml.jackson.annotation.JsonCreator
  public static ExecutionEnvironment fromOption(String value) {
    String trimmed = value == null ? "" : value.trim();
    for (ExecutionEnvironment environment : values()) {
      if (environment.name().equalsIgnoreCase(trimmed)) {
        return environment;
      }
    }
    throw new IllegalArgumentException(String.format(Locale.ROOT,
        "--executionEnvironment=%s is not an execution environment; allowed values: %s", value,
        Arrays.stream(values()).map(Enum::name).collect(Collectors.joining(", "))));
  }
}
