package dev.weir.runner.executor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.checkpoint.CheckpointCoordinator;
import dev.weir.runner.checkpoint.CheckpointParticipant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A container's part of a checkpoint, step by step, through its seams: recording participants in
 * place of tasks, a part writer in place of the store, and a coordinator of one container on a
 * clock the test moves (so nothing sleeps and nothing waits for another thread).
 */
class ContainerCheckpointerTest {
  private static final long INTERVAL_MS = 1_000;
  private static final long DUE_NS = INTERVAL_MS * 1_000_000L + 1;

  private final AtomicLong nowNs = new AtomicLong();
  private final List<Long> completed = new ArrayList<>();
  private final CheckpointCoordinator coordinator = new CheckpointCoordinator(1, INTERVAL_MS, 0, () -> true,
      id -> {
        completed.add(id);
        return 42;
      }, nowNs::get);
  private final Map<Long, Map<String, byte[]>> written = new HashMap<>();
  private final Recording first = new Recording("first");
  private final Recording second = new Recording("second");
  private final ContainerCheckpointer checkpointer = new ContainerCheckpointer(0, coordinator, List.of(first, second),
      (id, metadata) -> written.put(id, Map.copyOf(metadata)), () -> true, () -> false);

  /** A task as the checkpointer sees it, recording what it was asked. */
  static final class Recording implements CheckpointParticipant {
    final String name;
    final List<String> calls = new ArrayList<>();
    int openBundles;
    boolean quiet = true;
    Map<String, byte[]> restored;

    Recording(String name) {
      this.name = name;
    }

    @Override
    public void restore(Map<String, byte[]> metadata) {
      restored = metadata;
    }

    @Override
    public int finishBundleForCheckpoint() {
      calls.add("finishBundle");
      if (openBundles > 0) {
        openBundles--;
        return 1;
      }
      return 0;
    }

    @Override
    public boolean quietForCheckpoint() {
      calls.add("quiet?");
      return quiet;
    }

    @Override
    public void snapshot(Map<String, byte[]> metadata) {
      calls.add("snapshot");
      metadata.put("task/" + name + "/part", new byte[] {1});
    }

    @Override
    public void checkpointCompleted() {
      calls.add("completed");
    }
  }

  private int pass(int work) throws InterruptedException {
    return checkpointer.pass(work, nowNs.get());
  }

  @Test
  void beforeTheIntervalPassed_aPassTouchesNoTask() throws Exception {
    assertThat(pass(0)).isZero();
    assertThat(checkpointer.paused()).isFalse();
    assertThat(first.calls).isEmpty();
  }

  @Test
  void aDueCheckpoint_quiescesSnapshotsEveryTaskIntoOnePartAndCompletes() throws Exception {
    nowNs.set(DUE_NS);
    assertThat(pass(0)).as("one checkpoint written").isEqualTo(1);
    assertThat(first.calls).containsExactly("finishBundle", "quiet?", "snapshot", "completed");
    assertThat(second.calls).containsExactly("finishBundle", "quiet?", "snapshot", "completed");
    assertThat(written).containsOnlyKeys(1L);
    assertThat(written.get(1L)).containsOnlyKeys("task/first/part", "task/second/part");
    assertThat(completed).containsExactly(1L);
    assertThat(coordinator.stats().completed()).isEqualTo(1);
    assertThat(coordinator.stats().lastSizeBytes()).isEqualTo(42);
    assertThat(checkpointer.paused()).as("the job goes on").isFalse();
  }

  @Test
  void aPassThatDidOtherWork_doesNotQuiesce() throws Exception {
    nowNs.set(DUE_NS);
    assertThat(pass(3)).isZero();
    assertThat(checkpointer.paused()).as("the checkpoint is under way: sources pause").isTrue();
    assertThat(first.calls).isEmpty();
  }

  @Test
  void anOpenBundle_isFinishedFirst_andTheCheckpointWaitsForTheNextPass() throws Exception {
    nowNs.set(DUE_NS);
    second.openBundles = 1;
    assertThat(pass(0)).as("a finished bundle is work").isEqualTo(1);
    assertThat(first.calls).containsExactly("finishBundle");
    assertThat(written).isEmpty();

    assertThat(pass(0)).isEqualTo(1);
    assertThat(written).containsOnlyKeys(1L);
  }

  @Test
  void aTaskThatIsNotQuiet_holdsTheSnapshotBack() throws Exception {
    nowNs.set(DUE_NS);
    second.quiet = false;
    assertThat(pass(0)).isZero();
    assertThat(written).isEmpty();
    assertThat(first.calls).doesNotContain("snapshot");

    second.quiet = true;
    assertThat(pass(0)).isEqualTo(1);
    assertThat(written).containsOnlyKeys(1L);
  }

  @Test
  void aPartThatCannotBeWritten_failsNamingTheCheckpoint_andNoTaskHearsItCompleted() {
    CheckpointCoordinator failing = new CheckpointCoordinator(1, INTERVAL_MS, 0, () -> true, id -> 0, nowNs::get);
    ContainerCheckpointer broken = new ContainerCheckpointer(0, failing, List.of(first), (id, metadata) -> {
      throw new IllegalStateException("disk full");
    }, () -> true, () -> false);
    nowNs.set(DUE_NS);
    assertThatThrownBy(() -> broken.pass(0, nowNs.get()))
        .isInstanceOf(IllegalStateException.class).hasMessage("disk full")
        .satisfies(e -> assertThat(e.getSuppressed()[0]).hasMessageContaining("writing checkpoint 1"));
    assertThat(first.calls).doesNotContain("completed");
    assertThat(failing.stats().completed()).isZero();
  }

  @Test
  void restore_handsEveryTaskTheContainersMetadata() {
    Map<String, byte[]> metadata = Map.of("task/first/part", new byte[] {7});
    checkpointer.restore(metadata);
    assertThat(first.restored).isSameAs(metadata);
    assertThat(second.restored).isSameAs(metadata);
  }

  @Test
  void aContainerWhoseTasksAreDone_mayEndOnlyWhenTheJobIsDone() {
    CheckpointCoordinator two = new CheckpointCoordinator(2, INTERVAL_MS, 0, () -> true, id -> 0, nowNs::get);
    ContainerCheckpointer zero = new ContainerCheckpointer(0, two, List.of(first), (id, m) -> { }, () -> true,
        () -> false);
    ContainerCheckpointer one = new ContainerCheckpointer(1, two, List.of(second), (id, m) -> { }, () -> true,
        () -> false);
    assertThat(zero.mayEnd(false)).isFalse();
    assertThat(zero.mayEnd(true)).as("container 1 still runs").isFalse();
    assertThat(one.mayEnd(true)).isTrue();
    assertThat(zero.mayEnd(true)).isTrue();
  }
}
