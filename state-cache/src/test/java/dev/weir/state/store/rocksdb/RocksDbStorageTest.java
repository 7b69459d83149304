package dev.weir.state.store.rocksdb;

import static dev.weir.state.store.TestBytes.b;
import static dev.weir.state.store.TestBytes.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StateStoreException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.samza.checkpoint.CheckpointId;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.CompressionType;

/** RocksDB-specific behaviour: atomic commit, restore on reopen, lock and corruption errors. */
class RocksDbStorageTest {

  /**
   * Holds the storage directory and every checkpoint beside it (checkpoint targets and the store's
   * own {@code <dir>.checkpoints}), so that JUnit deletes them all with the test.
   */
  @TempDir Path root;
  Path dir;

  @BeforeEach
  void createStorageDirectory() throws java.io.IOException {
    dir = Files.createDirectories(root.resolve("db"));
  }

  private RocksDbStorage open() {
    return RocksDbStorage.open(dir, RocksDbSettings.defaults());
  }

  @Test
  void reopen_restoresExactlyTheLastCommit_andDropsStagedWrites() {
    try (RocksDbStorage storage = open()) {
      SortedByteStore counts = storage.store("counts");
      SortedByteStore other = storage.store("other");
      counts.put(b("a"), b("1"));
      other.put(b("x"), b("9"));
      storage.commit(Map.of("offset", b("100")));
      counts.put(b("a"), b("2")); // staged, never committed
      counts.put(b("b"), b("1"));
      other.delete(b("x"));
      assertThat(storage.stagedBytes()).isPositive();
    }
    try (RocksDbStorage storage = open()) {
      assertThat(storage.storeNames()).containsExactly("counts", "other");
      assertThat(s(storage.store("counts").get(b("a")))).isEqualTo("1");
      assertThat(storage.store("counts").get(b("b"))).isNull();
      assertThat(s(storage.store("other").get(b("x")))).isEqualTo("9");
      assertThat(s(storage.committedMetadata().get("offset"))).isEqualTo("100");
      assertThat(storage.commitSequence()).isEqualTo(1);
      assertThat(storage.stagedBytes()).isZero();
    }
  }

  @Test
  void checkpointTo_keepsTheLastCommit_whileTheWorkingStorageMovesOn() {
    Path checkpoint = root.resolve("checkpoint");
    try (RocksDbStorage storage = open()) {
      storage.store("counts").put(b("a"), b("1"));
      storage.commit(Map.of("mark", b("7")));
      storage.checkpointTo(checkpoint);
      storage.store("counts").put(b("a"), b("2"));
      storage.commit(Map.of("mark", b("8")));
    }
    try (RocksDbStorage restored = RocksDbStorage.open(checkpoint, RocksDbSettings.defaults())) {
      assertThat(s(restored.store("counts").get(b("a")))).isEqualTo("1");
      assertThat(s(restored.committedMetadata().get("mark"))).isEqualTo("7");
    }
    try (RocksDbStorage working = open()) {
      assertThat(s(working.store("counts").get(b("a")))).isEqualTo("2");
    }
  }

  @Test
  void withoutTheWriteAheadLog_checkpointsAndACleanCloseStillHoldEveryCommit() {
    RocksDbSettings noWal = RocksDbSettings.defaults().withWriteAheadLog(false);
    assertThat(noWal.syncCommits()).isFalse();
    Path checkpoint = root.resolve("nowal-checkpoint");
    try (RocksDbStorage storage = RocksDbStorage.open(dir, noWal)) {
      storage.store("counts").put(b("a"), b("1"));
      storage.store("timers").put(b("t"), b("5"));
      storage.commit(Map.of("mark", b("7")));
      assertThat(s(storage.store("counts").get(b("a")))).isEqualTo("1");
      storage.checkpointTo(checkpoint);
      storage.store("counts").put(b("a"), b("2"));
      storage.commit(Map.of("mark", b("8")));
    }
    try (RocksDbStorage restored = RocksDbStorage.open(checkpoint, noWal)) {
      assertThat(s(restored.store("counts").get(b("a")))).isEqualTo("1");
      assertThat(s(restored.store("timers").get(b("t")))).isEqualTo("5");
      assertThat(s(restored.committedMetadata().get("mark"))).isEqualTo("7");
    }
    try (RocksDbStorage working = RocksDbStorage.open(dir, noWal)) {
      assertThat(s(working.store("counts").get(b("a")))).isEqualTo("2"); // flushed at close
      assertThat(s(working.committedMetadata().get("mark"))).isEqualTo("8");
    }
  }

  @Test
  void directWrites_areReadAtOnce_stageNothing_andACheckpointAfterACommitHoldsThemAll() {
    RocksDbSettings direct = RocksDbSettings.defaults().withWriteAheadLog(false).withStagedWrites(false);
    Path checkpoint = root.resolve("direct-checkpoint");
    try (RocksDbStorage storage = RocksDbStorage.open(dir, direct)) {
      SortedByteStore counts = storage.store("counts");
      counts.put(b("a"), b("1"));
      counts.put(b("b"), b("1"));
      counts.delete(b("b"));
      assertThat(s(counts.get(b("a")))).isEqualTo("1");
      assertThat(counts.get(b("b"))).isNull();
      assertThat(storage.stagedBytes()).as("nothing is staged").isZero();
      storage.commit(Map.of("mark", b("7")));
      storage.checkpointTo(checkpoint);
      counts.put(b("a"), b("2")); // after the checkpoint: not in it
    }
    try (RocksDbStorage restored = RocksDbStorage.open(checkpoint, RocksDbSettings.defaults())) {
      assertThat(s(restored.store("counts").get(b("a")))).isEqualTo("1");
      assertThat(restored.store("counts").get(b("b"))).isNull();
      assertThat(s(restored.committedMetadata().get("mark"))).isEqualTo("7");
    }
    try (RocksDbStorage working = RocksDbStorage.open(dir, direct)) {
      assertThat(s(working.store("counts").get(b("a")))).as("not atomic: a write after the last commit stays")
          .isEqualTo("2");
      assertThat(s(working.committedMetadata().get("mark"))).isEqualTo("7");
    }
  }

  @Test
  void syncedCommits_needTheWriteAheadLog() {
    assertThatThrownBy(() -> new RocksDbSettings(1, 1, 0, CompressionType.NO_COMPRESSION, 1, 1, 1, true, false, true))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("writeAheadLog");
  }

  @Test
  void checkpointTo_refusesStagedWrites_andAnExistingTarget() throws Exception {
    Path existing = Files.createDirectories(root.resolve("existing"));
    try (RocksDbStorage storage = open()) {
      storage.store("counts").put(b("a"), b("1"));
      assertThatThrownBy(() -> storage.checkpointTo(root.resolve("never")))
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("commit first");
      storage.commit(Map.of());
      assertThatThrownBy(() -> storage.checkpointTo(existing))
          .isInstanceOf(StateStoreException.class).hasMessageContaining(existing.toString());
    }
  }

  @Test
  void commit_replacesMetadata_andCountsSequence() {
    try (RocksDbStorage storage = open()) {
      assertThat(storage.committedMetadata()).isEmpty();
      assertThat(storage.commitSequence()).isZero();
      storage.commit(Map.of("a", b("1"), "b", b("2")));
      storage.commit(Map.of("b", b("3")));
      assertThat(storage.committedMetadata()).containsOnlyKeys("b");
    }
    try (RocksDbStorage storage = open()) {
      assertThat(storage.commitSequence()).isEqualTo(2);
      assertThat(storage.committedMetadata()).containsOnlyKeys("b");
      assertThat(s(storage.committedMetadata().get("b"))).isEqualTo("3");
    }
  }

  @Test
  void commit_copiesMetadata_soLaterChangesDoNotLeak() {
    byte[] mark = b("1");
    try (RocksDbStorage storage = open()) {
      storage.commit(Map.of("mark", mark));
      mark[0] = '9';
      assertThat(s(storage.committedMetadata().get("mark"))).isEqualTo("1");
    }
  }

  @Test
  void flush_commitsWithThePreviousMetadata() {
    try (RocksDbStorage storage = open()) {
      storage.commit(Map.of("m", b("1")));
      storage.store("s").put(b("k"), b("v"));
      storage.store("s").flush();
    }
    try (RocksDbStorage storage = open()) {
      assertThat(s(storage.store("s").get(b("k")))).isEqualTo("v");
      assertThat(s(storage.committedMetadata().get("m"))).isEqualTo("1");
    }
  }

  @Test
  void manyCommits_thenReopen_matchesLastCommit() {
    try (RocksDbStorage storage = open()) {
      SortedByteStore store = storage.store("s");
      for (int i = 0; i < 1000; i++) {
        store.put(b("k" + (i % 50)), b(Integer.toString(i)));
        if (i % 100 == 99) {
          storage.commit(Map.of("i", b(Integer.toString(i))));
        }
      }
    }
    try (RocksDbStorage storage = open()) {
      assertThat(s(storage.committedMetadata().get("i"))).isEqualTo("999");
      assertThat(s(storage.store("s").get(b("k49")))).isEqualTo("999");
      assertThat(s(storage.store("s").get(b("k0")))).isEqualTo("950");
    }
  }

  @Test
  void secondOpenInThisProcess_failsAsLocked_namingTheDirectory() {
    try (RocksDbStorage first = open()) {
      assertThat(first.commitSequence()).isZero();
      assertThatThrownBy(this::open)
          .isInstanceOf(StateStoreException.class)
          .hasMessageContaining(dir.toAbsolutePath().toString())
          .satisfies(e -> assertThat(((StateStoreException) e).reason()).isEqualTo(StateStoreException.Reason.LOCKED));
    }
  }

  @Test
  void openWhileAnotherProcessHoldsTheDirectory_failsAsLocked() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process holder = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
            LockHolder.class.getName(), dir.toString())
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))) {
      assertThat(out.readLine()).isEqualTo("open");
      assertThatThrownBy(this::open)
          .isInstanceOf(StateStoreException.class)
          .hasMessageContaining(dir.toAbsolutePath().toString())
          .hasMessageContaining("lock")
          .satisfies(e -> assertThat(((StateStoreException) e).reason()).isEqualTo(StateStoreException.Reason.LOCKED));
    } finally {
      holder.getOutputStream().close();
      assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    try (RocksDbStorage reopened = open()) {
      assertThat(reopened.storeNames()).isEmpty(); // the lock is released with the process
    }
  }

  @Test
  void corruptManifest_failsAsCorrupt_namingTheDirectory() throws Exception {
    try (RocksDbStorage storage = open()) {
      storage.store("s").put(b("k"), b("v"));
      storage.commit(Map.of());
    }
    try (Stream<Path> files = Files.list(dir)) {
      for (Path manifest : files.filter(p -> p.getFileName().toString().startsWith("MANIFEST")).toList()) {
        byte[] garbage = new byte[(int) Files.size(manifest)];
        java.util.Arrays.fill(garbage, (byte) 0x5A);
        Files.write(manifest, garbage);
      }
    }
    assertThatThrownBy(this::open)
        .isInstanceOf(StateStoreException.class)
        .hasMessageContaining(dir.toAbsolutePath().toString())
        .satisfies(e -> assertThat(((StateStoreException) e).reason()).isEqualTo(StateStoreException.Reason.CORRUPT));
  }

  @Test
  void directoryThatIsAFile_failsNamingThePath() throws Exception {
    Path file = dir.resolve("not-a-dir");
    Files.writeString(file, "x");
    assertThatThrownBy(() -> RocksDbStorage.open(file, RocksDbSettings.defaults()))
        .isInstanceOf(StateStoreException.class)
        .hasMessageContaining(file.toString());
  }

  @Test
  void closingTheStorage_closesLeakedIterators() {
    RocksDbStorage storage = open();
    SortedByteStore store = storage.store("s");
    store.put(b("a"), b("1"));
    storage.commit(Map.of());
    var leaked = store.all();
    var leakedStaged = store.range(b("a"), null);
    store.put(b("b"), b("2"));
    var leakedMerged = store.all();
    storage.close(); // must not crash the JVM
    assertThatThrownBy(leaked::hasNext).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(leakedStaged::hasNext).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(leakedMerged::hasNext).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void checkpoint_hardLinksTheCommittedState() {
    Path checkpoint;
    try (RocksDbStorage storage = open()) {
      storage.store("s").put(b("k"), b("v"));
      storage.commit(Map.of("m", b("1")));
      storage.store("s").put(b("k"), b("staged"));
      checkpoint = storage.store("s").checkpoint(CheckpointId.create()).orElseThrow();
    }
    try (RocksDbStorage copy = RocksDbStorage.open(checkpoint, RocksDbSettings.defaults())) {
      assertThat(s(copy.store("s").get(b("k")))).isEqualTo("v");
      assertThat(s(copy.committedMetadata().get("m"))).isEqualTo("1");
    }
  }

  @Test
  void settings_areValidated_andApplied() {
    assertThatThrownBy(() -> RocksDbSettings.defaults().withBlockCacheBytes(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("blockCacheBytes");
    assertThatThrownBy(() -> RocksDbSettings.defaults().withBloomBitsPerKey(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bloomBitsPerKey");
    RocksDbSettings settings = RocksDbSettings.defaults()
        .withCompression(CompressionType.NO_COMPRESSION).withBloomBitsPerKey(0).withSyncCommits(false);
    try (RocksDbStorage storage = RocksDbStorage.open(dir, settings)) {
      assertThat(storage.settings()).isEqualTo(settings);
      storage.store("s").putAll(List.of(new org.apache.samza.storage.kv.Entry<>(b("k"), b("v"))));
      storage.commit(Map.of());
      assertThat(s(storage.store("s").get(b("k")))).isEqualTo("v");
    }
  }
}
