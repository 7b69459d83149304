package dev.weir.runner;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.beam.sdk.annotations.Internal;

/**
 * The Samza config a user gives a Samza execution environment: the properties file
 * {@code --samzaConfig=FILE}, then {@code --samzaConfigOverride=k=v,...} on top. Weir generates
 * the rest of the job's config (systems, streams, serdes, grouper, coordinator); a user key that
 * Weir owns ({@link #isOwnedByWeir}) is rejected, naming the file (or the override option) and the
 * key, as is a file that is missing or unreadable. Both options are rejected with
 * {@code --executionEnvironment=EMBEDDED}, which has no Samza config.
 *
 * <p>Threading: stateless static helpers.
 */
@Internal
public final class SamzaUserConfig {
  /** Config keys Weir writes itself; a user may not set them. */
  public static final List<String> OWNED_KEYS = List.of("job.coordinator.factory",
      "job.systemstreampartition.grouper.factory", "task.name.grouper.factory", "app.class", "app.runner.class",
      "task.class", "task.inputs", "task.window.ms", "job.name");
  /**
   * Keys a user sets only with {@code SAMZA_STANDALONE} (which processor this process is, how many
   * there are, the job instance): with {@code SAMZA_LOCAL} Weir generates them (one processor, a
   * fresh instance id per run).
   */
  public static final List<String> STANDALONE_KEYS = List.of("processor.id", "job.container.count", "job.id");
  /**
   * Key prefixes Weir writes itself: its own systems ({@code systems.weir...}: sources, in-process
   * streams, Kafka streams) and the config of every stream ({@code streams.}).
   */
  public static final List<String> OWNED_PREFIXES = List.of("systems.weir", "streams.");

  private SamzaUserConfig() {}

  /** Whether Weir generates {@code key} itself in {@code environment} (then a user may not set it). */
  public static boolean isOwnedByWeir(ExecutionEnvironment environment, String key) {
    if (OWNED_KEYS.contains(key)
        || (environment != ExecutionEnvironment.SAMZA_STANDALONE && STANDALONE_KEYS.contains(key))) {
      return true;
    }
    for (String prefix : OWNED_PREFIXES) {
      if (key.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Reads and checks the user's Samza config for {@code environment}.
   *
   * @param file {@code --samzaConfig}, or null/blank for none
   * @param overrides {@code --samzaConfigOverride} ({@code k=v,k2=v2}), or null/blank for none
   * @return the config, file first, overrides on top; sorted by key; unmodifiable
   * @throws IllegalArgumentException naming the option and, as applicable, the file, the key or
   *     the malformed entry: a Samza option with {@code EMBEDDED}, a missing or unreadable file, a
   *     malformed override, a key Weir owns
   */
  public static Map<String, String> read(ExecutionEnvironment environment, String file, String overrides) {
    boolean hasFile = file != null && !file.isBlank();
    boolean hasOverrides = overrides != null && !overrides.isBlank();
    if (!environment.isSamza()) {
      if (hasFile || hasOverrides) {
        throw new IllegalArgumentException((hasFile ? "--samzaConfig=" + file + (hasOverrides ? " and " : "") : "")
            + (hasOverrides ? "--samzaConfigOverride=" + overrides : "")
            + " make no sense with --executionEnvironment=" + environment + " (Samza config is read only by "
            + "SAMZA_LOCAL and SAMZA_STANDALONE); remove " + (hasFile && hasOverrides ? "them" : "it")
            + " or choose a Samza execution environment");
      }
      return Map.of();
    }
    Map<String, String> config = new TreeMap<>();
    if (hasFile) {
      readFile(environment, file, config);
    }
    if (hasOverrides) {
      readOverrides(environment, overrides, config);
    }
    return Collections.unmodifiableMap(config);
  }

  private static void readFile(ExecutionEnvironment environment, String file, Map<String, String> config) {
    Path path;
    try {
      path = Path.of(file);
    } catch (InvalidPathException e) {
      throw new IllegalArgumentException("--samzaConfig=" + file + " is not a path (" + e.getMessage() + ")", e);
    }
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
      properties.load(reader);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException("--samzaConfig=" + file + ": file not found (" + path.toAbsolutePath()
          + ")", e);
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException("--samzaConfig=" + file + " cannot be read as a properties file ("
          + e.getClass().getSimpleName() + ": " + e.getMessage() + ")", e);
    }
    Map<String, String> sorted = new TreeMap<>();
    for (String key : properties.stringPropertyNames()) {
      sorted.put(key, properties.getProperty(key));
    }
    for (Map.Entry<String, String> e : sorted.entrySet()) {
      if (isOwnedByWeir(environment, e.getKey())) {
        throw owned(environment, "--samzaConfig=" + file, e.getKey());
      }
      config.put(e.getKey(), e.getValue());
    }
  }

  private static void readOverrides(ExecutionEnvironment environment, String overrides, Map<String, String> config) {
    Map<String, String> parsed = new LinkedHashMap<>();
    for (String entry : overrides.split(",")) {
      if (entry.isBlank()) {
        continue;
      }
      int eq = entry.indexOf('=');
      String key = eq < 0 ? "" : entry.substring(0, eq).trim();
      if (key.isEmpty()) {
        throw new IllegalArgumentException("--samzaConfigOverride=" + overrides + ": entry '" + entry
            + "' is not key=value; allowed: comma-separated key=value pairs, e.g. task.commit.ms=1000");
      }
      if (isOwnedByWeir(environment, key)) {
        throw owned(environment, "--samzaConfigOverride", key);
      }
      parsed.put(key, entry.substring(eq + 1).trim());
    }
    config.putAll(parsed);
  }

  private static IllegalArgumentException owned(ExecutionEnvironment environment, String where, String key) {
    return new IllegalArgumentException(where + " sets " + key + ", which Weir generates itself with "
        + "--executionEnvironment=" + environment + " (keys it owns: " + String.join(", ", OWNED_KEYS)
        + (environment == ExecutionEnvironment.SAMZA_STANDALONE ? "" : ", " + String.join(", ", STANDALONE_KEYS)
            + " (which only SAMZA_STANDALONE takes from the user)")
        + ", and every key under " + String.join(", ", OWNED_PREFIXES) + "); remove it");
  }
}
