package dev.weir.state;

import dev.weir.state.store.StateStorage;
import dev.weir.state.store.memory.InMemoryStorage;
import dev.weir.state.store.rocksdb.RocksDbSettings;
import dev.weir.state.store.rocksdb.RocksDbStorage;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The state backends a user can choose ({@code --stateBackend=rocksdb|memory}), and how to open
 * a {@link StateStorage} of each. This is the one backend enum of Weir: the runner's
 * {@code WeirPipelineOptions.getStateBackend()} returns it, and Beam's option parser reads it
 * through {@link #fromOption} (Jackson), so users may type it in any case. Stateless; safe from
 * any thread.
 */
public enum StateBackend {
  /** RocksDB in a directory: durable, atomic commits, state larger than memory. The default. */
  ROCKSDB,
  /** The Java heap: fast, not durable, for small state and tests. */
  MEMORY;

  /**
   * Opens a storage of this backend.
   *
   * @param directory the storage directory (ignored by {@link #MEMORY})
   * @param settings RocksDB settings (ignored by {@link #MEMORY})
   * @throws dev.weir.state.store.StateStoreException if RocksDB cannot open the directory
   */
  public StateStorage open(Path directory, RocksDbSettings settings) {
    return switch (this) {
      case ROCKSDB -> RocksDbStorage.open(Objects.requireNonNull(directory, "directory"), settings);
      case MEMORY -> new InMemoryStorage();
    };
  }

  /** The lower-case name users type. */
  public String optionValue() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Parses the value of {@code --stateBackend}, case-insensitively; Beam's option parser calls
   * this through Jackson ({@code @JsonCreator}).
   *
   * @throws IllegalArgumentException naming the option, the bad value and the allowed values
   */
  @com.fasterxml.jackson.annotation.JsonCreator
  public static StateBackend fromOption(String value) {
    return parse("stateBackend", value);
  }

  /**
   * Parses a user's choice, case-insensitively.
   *
   * @param optionName the option being parsed, named in the error (e.g. "stateBackend")
   * @throws IllegalArgumentException naming the option, the bad value and the allowed values
   */
  public static StateBackend parse(String optionName, String value) {
    for (StateBackend backend : values()) {
      if (backend.optionValue().equalsIgnoreCase(value == null ? "" : value.trim())) {
        return backend;
      }
    }
    throw new IllegalArgumentException(String.format("--%s=%s is not a state backend; allowed values: %s",
        optionName, value, Arrays.stream(values()).map(StateBackend::optionValue).collect(Collectors.joining(", "))));
  }
}
