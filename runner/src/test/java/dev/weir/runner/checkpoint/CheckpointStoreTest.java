package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The on-disk contract of checkpoints: complete only with a manifest; a restore takes the newest
 * one that verifies, falls back past damaged ones, never starts empty over checkpoints it could not
 * read, and refuses a checkpoint of another plan naming the difference. Container parts are plain
 * files here (the RocksDB side is {@code RocksDbStorageTest}).
 */
class CheckpointStoreTest {
  private static final PlanFingerprint PLAN = new PlanFingerprint(List.of("containers 1", "stage a x 2"));

  @TempDir Path job;
  private CheckpointStore store;

  @BeforeEach
  void open() {
    store = new CheckpointStore(job, "job", 2);
  }

  private void write(long id, String content) throws IOException {
    store.prepare(id);
    Path container = store.containerDirectory(id, 0);
    Files.createDirectories(container);
    Files.writeString(container.resolve("000012.sst"), content);
    Files.writeString(container.resolve("MANIFEST-000005"), "manifest of " + content);
    store.complete(id, PLAN, 1);
  }

  private Path working(int container) {
    return job.resolve("working").resolve("container-" + container);
  }

  @Test
  void restore_takesTheNewestCompleteCheckpoint_andCopiesItsFiles() throws IOException {
    write(1, "one");
    write(2, "two");
    CheckpointStore.Restored restored = store.restoreLatest(PLAN, this::working);
    assertThat(restored.manifest().id()).isEqualTo(2);
    assertThat(Files.readString(working(0).resolve("000012.sst"))).isEqualTo("two");
    assertThat(restored.manifest().sizeBytes()).isPositive();
  }

  @Test
  void aCheckpointThatLostItsManifest_isDamaged_andTheRestoreFallsBack() throws IOException {
    write(1, "one");
    write(2, "two");
    Files.delete(store.directory(2).resolve(CheckpointStore.MANIFEST));
    assertThat(store.restoreLatest(PLAN, this::working).manifest().id()).isEqualTo(1);
  }

  @Test
  void aCheckpointInterruptedWhileWritten_isSkipped_andAloneIsAFreshStart() throws IOException {
    store.prepare(1);
    Files.createDirectories(store.containerDirectory(1, 0));
    Files.writeString(store.containerDirectory(1, 0).resolve("000012.sst"), "half");
    assertThat(store.restoreLatest(PLAN, this::working)).isNull();
    write(2, "two");
    store.prepare(3);
    assertThat(store.restoreLatest(PLAN, this::working).manifest().id()).isEqualTo(2);
  }

  @Test
  void whenEveryCheckpointLostItsManifest_theRestoreFailsNamingThem_neverStartsEmpty() throws IOException {
    write(1, "one");
    write(2, "two");
    Files.delete(store.directory(1).resolve(CheckpointStore.MANIFEST));
    Files.delete(store.directory(2).resolve(CheckpointStore.MANIFEST));
    assertThatThrownBy(() -> store.restoreLatest(PLAN, this::working))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(store.directory(1).toString())
        .hasMessageContaining(store.directory(2).toString())
        .hasMessageContaining("--restoreMode=NONE");
  }

  @Test
  void aCompletedCheckpoint_keepsNoInProgressMarker_andItsManifestDoesNotListOne() throws IOException {
    write(1, "one");
    assertThat(store.directory(1).resolve(CheckpointStore.IN_PROGRESS)).doesNotExist();
    assertThat(store.restoreLatest(PLAN, this::working).manifest().files())
        .noneMatch(f -> f.path().contains(CheckpointStore.IN_PROGRESS));
  }

  @Test
  void aTruncatedFile_makesTheRestoreFallBackToTheCheckpointBefore() throws IOException {
    write(1, "one");
    write(2, "two");
    try (FileChannel file = FileChannel.open(store.containerDirectory(2, 0).resolve("000012.sst"),
        StandardOpenOption.WRITE)) {
      file.truncate(1);
    }
    CheckpointStore.Restored restored = store.restoreLatest(PLAN, this::working);
    assertThat(restored.manifest().id()).isEqualTo(1);
    assertThat(Files.readString(working(0).resolve("000012.sst"))).isEqualTo("one");
  }

  @Test
  void aChangedFileOfTheSameSize_failsItsChecksum() throws IOException {
    write(1, "one");
    write(2, "two");
    Files.writeString(store.containerDirectory(2, 0).resolve("000012.sst"), "TWO");
    assertThat(store.restoreLatest(PLAN, this::working).manifest().id()).isEqualTo(1);
  }

  @Test
  void whenEveryCheckpointIsDamaged_theRestoreFailsNamingThePath_neverStartsEmpty() throws IOException {
    write(1, "one");
    Path sst = store.containerDirectory(1, 0).resolve("000012.sst");
    Files.delete(sst);
    assertThatThrownBy(() -> store.restoreLatest(PLAN, this::working))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(sst.toString())
        .hasMessageContaining("--restoreMode=NONE");
  }

  @Test
  void noCheckpointAtAll_isAFreshStart() {
    assertThat(store.restoreLatest(PLAN, this::working)).isNull();
  }

  @Test
  void aCheckpointOfAnotherPlan_isRefusedNamingTheFirstDifference() throws IOException {
    write(1, "one");
    PlanFingerprint other = new PlanFingerprint(List.of("containers 1", "stage a x 4"));
    assertThatThrownBy(() -> store.restoreLatest(other, this::working))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'stage a x 2' where the job has 'stage a x 4'");
  }

  @Test
  void completing_keepsOnlyTheNewestRetainedCheckpoints_andDropsOlderIncompleteOnes() throws IOException {
    write(1, "one");
    store.prepare(2); // an attempt that never completed
    write(3, "three");
    write(4, "four");
    assertThat(store.ids()).containsExactly(3L, 4L);
  }

  @Test
  void aManifestThatCannotBeWritten_failsNamingThePath_andLeavesThePreviousCheckpointIntact() throws IOException {
    write(1, "one");
    store.prepare(2);
    Files.createDirectories(store.containerDirectory(2, 0));
    Files.createDirectories(store.directory(2).resolve(CheckpointStore.MANIFEST + ".tmp")); // EISDIR on write
    assertThatThrownBy(() -> store.complete(2, PLAN, 1))
        .isInstanceOf(java.io.UncheckedIOException.class)
        .hasMessageContaining(store.directory(2).toString());
    assertThat(store.restoreLatest(PLAN, this::working).manifest().id()).isEqualTo(1);
  }

  @Test
  void firstDifference_namesLinesOnlyOneSideHas() {
    PlanFingerprint longer = new PlanFingerprint(List.of("containers 1", "stage a x 2", "stage b x 1"));
    assertThat(PLAN.firstDifference(PLAN)).isNull();
    assertThat(PLAN.firstDifference(longer)).contains("the job has 'stage b x 1'");
    assertThat(longer.firstDifference(PLAN)).contains("the checkpoint has 'stage b x 1'");
  }
}
