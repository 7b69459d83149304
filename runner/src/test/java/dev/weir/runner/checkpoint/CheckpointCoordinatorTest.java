package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The coordinator's protocol with container threads: a checkpoint starts when due, is written only
 * once every live container is quiet and every stream empty, completes once (by the last container
 * to report) and then lets all of them go on; a container that gets input while it waits leaves the
 * round; a container that leaves does not hold the others back.
 */
class CheckpointCoordinatorTest {
  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    threads.shutdownNow();
  }

  @Test
  void aCheckpointIsWrittenOnlyOnceEveryContainerIsQuietAndTheStreamsAreEmpty() throws Exception {
    AtomicBoolean empty = new AtomicBoolean(false);
    List<Long> completed = new CopyOnWriteArrayList<>();
    CheckpointCoordinator coordinator = new CheckpointCoordinator(2, 1, 4, empty::get, id -> {
      completed.add(id);
      return 100;
    });
    Thread.sleep(2);
    coordinator.poll(System.nanoTime());
    assertThat(coordinator.phase()).isEqualTo(CheckpointCoordinator.Phase.PAUSING);

    // round 1: both quiet but a stream still holds envelopes: go on draining
    Future<Long> a = threads.submit(() -> coordinator.arriveQuiet(0, () -> true, () -> false));
    Future<Long> b = threads.submit(() -> coordinator.arriveQuiet(1, () -> true, () -> false));
    assertThat(a.get(5, TimeUnit.SECONDS)).isZero();
    assertThat(b.get(5, TimeUnit.SECONDS)).isZero();
    assertThat(coordinator.phase()).isEqualTo(CheckpointCoordinator.Phase.PAUSING);

    // round 2: quiescent: both write checkpoint 5 (the restored one was 4)
    empty.set(true);
    a = threads.submit(() -> coordinator.arriveQuiet(0, () -> true, () -> false));
    b = threads.submit(() -> coordinator.arriveQuiet(1, () -> true, () -> false));
    assertThat(a.get(5, TimeUnit.SECONDS)).isEqualTo(5);
    assertThat(b.get(5, TimeUnit.SECONDS)).isEqualTo(5);
    assertThat(coordinator.phase()).isEqualTo(CheckpointCoordinator.Phase.SNAPSHOT);

    Future<Boolean> doneA = threads.submit(() -> coordinator.snapshotDone(0, 5, null, () -> true));
    Thread.sleep(20);
    assertThat(doneA.isDone()).as("waits for the other container's part").isFalse();
    assertThat(coordinator.snapshotDone(1, 5, null, () -> true)).isTrue();
    assertThat(doneA.get(5, TimeUnit.SECONDS)).isTrue();
    assertThat(completed).containsExactly(5L);
    assertThat(coordinator.phase()).isEqualTo(CheckpointCoordinator.Phase.RUNNING);
    CheckpointStats stats = coordinator.stats();
    assertThat(stats.completed()).isEqualTo(1);
    assertThat(stats.lastSizeBytes()).isEqualTo(100);
    assertThat(stats.lastCompletedId()).isEqualTo(5);
  }

  @Test
  void aFailedPartFailsTheCheckpoint_andNothingIsCompleted() throws Exception {
    AtomicInteger completions = new AtomicInteger();
    CheckpointCoordinator coordinator = new CheckpointCoordinator(1, 1, 0, () -> true, id -> {
      completions.incrementAndGet();
      return 0;
    });
    Thread.sleep(2);
    coordinator.poll(System.nanoTime());
    assertThat(coordinator.arriveQuiet(0, () -> true, () -> false)).isEqualTo(1);
    assertThat(coordinator.snapshotDone(0, 1, new IllegalStateException("disk full"), () -> true)).isFalse();
    assertThat(completions).hasValue(0);
    assertThat(coordinator.phase()).isEqualTo(CheckpointCoordinator.Phase.RUNNING);
  }

  @Test
  void aWaitingContainerThatGetsInput_leavesTheRoundToDrainIt() throws Exception {
    CheckpointCoordinator coordinator = new CheckpointCoordinator(2, 1, 0, () -> true, id -> 0);
    Thread.sleep(2);
    coordinator.poll(System.nanoTime());
    AtomicBoolean input = new AtomicBoolean(false);
    Future<Long> a = threads.submit(() -> coordinator.arriveQuiet(0, () -> true, input::get));
    Thread.sleep(20);
    input.set(true);
    assertThat(a.get(5, TimeUnit.SECONDS)).isZero();
    // it drained, and is quiet again: with the other container the round completes
    input.set(false);
    a = threads.submit(() -> coordinator.arriveQuiet(0, () -> true, input::get));
    assertThat(coordinator.arriveQuiet(1, () -> true, () -> false)).isEqualTo(1);
    assertThat(a.get(5, TimeUnit.SECONDS)).isEqualTo(1);
  }

  @Test
  void aContainerThatLeaves_doesNotHoldTheOthersBack() throws Exception {
    CheckpointCoordinator coordinator = new CheckpointCoordinator(2, 1, 0, () -> true, id -> 0);
    Thread.sleep(2);
    coordinator.poll(System.nanoTime());
    Future<Long> a = threads.submit(() -> coordinator.arriveQuiet(0, () -> true, () -> false));
    Thread.sleep(20);
    coordinator.leave(1);
    assertThat(a.get(5, TimeUnit.SECONDS)).as("no checkpoint while the job ends").isZero();
    assertThat(coordinator.phase()).isEqualTo(CheckpointCoordinator.Phase.RUNNING);
  }

  @Test
  void aPauseThatDoesNotBecomeQuiescentInTime_isSkipped() {
    CheckpointCoordinator coordinator = new CheckpointCoordinator(2, 1, 0, () -> true, id -> 0);
    long start = System.nanoTime() + 2_000_000L;
    coordinator.poll(start);
    assertThat(coordinator.phase()).isEqualTo(CheckpointCoordinator.Phase.PAUSING);
    coordinator.poll(start + TimeUnit.SECONDS.toNanos(3)); // timeout: max(2 s, interval)
    assertThat(coordinator.phase()).isEqualTo(CheckpointCoordinator.Phase.RUNNING);
    assertThat(coordinator.stats().skipped()).isEqualTo(1);
  }
}
