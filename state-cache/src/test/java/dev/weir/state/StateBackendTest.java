package dev.weir.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.state.store.StateStorage;
import dev.weir.state.store.rocksdb.RocksDbSettings;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateBackendTest {

  @TempDir Path dir;

  @Test
  void parse_acceptsNamesCaseInsensitively() {
    assertThat(StateBackend.parse("stateBackend", "rocksdb")).isEqualTo(StateBackend.ROCKSDB);
    assertThat(StateBackend.parse("stateBackend", " Memory ")).isEqualTo(StateBackend.MEMORY);
  }

  @Test
  void parse_badValue_namesTheOptionAndAllowedValues() {
    assertThatThrownBy(() -> StateBackend.parse("stateBackend", "redis"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--stateBackend=redis")
        .hasMessageContaining("rocksdb, memory");
  }

  @Test
  void open_givesADurableOrVolatileStorage() {
    try (StateStorage rocks = StateBackend.ROCKSDB.open(dir, RocksDbSettings.defaults());
        StateStorage memory = StateBackend.MEMORY.open(null, null)) {
      assertThat(rocks.isDurable()).isTrue();
      assertThat(rocks.directory()).contains(dir.toAbsolutePath());
      assertThat(memory.isDurable()).isFalse();
    }
  }
}
