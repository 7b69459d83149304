package dev.weir.runner.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.state.StateBackend;
import dev.weir.state.store.StateStorage;
import dev.weir.state.store.rocksdb.RocksDbSettings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.runners.core.StateTags;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a container's state refuses to open: state written in another cell layout. */
class ContainerStateTest {
  @TempDir Path dir;

  @Test
  void stateCommittedWithoutALayoutVersion_isRefusedAsVersion1NamingTheDirectory() {
    Path c = dir.resolve("c0");
    try (StateStorage old = StateBackend.ROCKSDB.open(c, RocksDbSettings.defaults())) {
      old.store(ContainerState.STORE).put(new byte[] {1, 0, 0, 0, 0}, new byte[] {3});
      old.commit(Map.of("weir.owner", "old".getBytes(StandardCharsets.UTF_8)));
    }
    assertThatThrownBy(() -> new ContainerState(StateBackend.ROCKSDB, c, 100, "test"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(c.toString())
        .hasMessageContaining("layout version 1")
        .hasMessageContaining("version " + ContainerState.CELL_LAYOUT_VERSION);
    // the refusal closed the storage: it opens again
    try (StateStorage again = StateBackend.ROCKSDB.open(c, RocksDbSettings.defaults())) {
      assertThat(again.committedMetadata()).containsKey("weir.owner");
    }
  }

  @Test
  void stateCommittedByThisLayout_reopensWithItsCells() {
    Path c = dir.resolve("c1");
    try (ContainerState state = new ContainerState(StateBackend.ROCKSDB, c, 100, "test")) {
      CachedStateInternals s = new CachedStateInternals("k", "k".getBytes(), state.operatorId("step", "state"), state.store(),
          new WatermarkHolds(), null);
      s.state(StateNamespaces.global(), StateTags.bag("b", VarIntCoder.of())).add(7);
      state.commit();
      assertThat(state.storage().committedMetadata().get(ContainerState.LAYOUT_METADATA_KEY))
          .asString(StandardCharsets.UTF_8).isEqualTo(Integer.toString(ContainerState.CELL_LAYOUT_VERSION));
    }
    try (ContainerState state = new ContainerState(StateBackend.ROCKSDB, c, 100, "test")) {
      CachedStateInternals s = new CachedStateInternals("k", "k".getBytes(), state.operatorId("step", "state"), state.store(),
          new WatermarkHolds(), null);
      assertThat(s.state(StateNamespaces.global(), StateTags.bag("b", VarIntCoder.of())).read()).containsExactly(7);
    }
  }
}
