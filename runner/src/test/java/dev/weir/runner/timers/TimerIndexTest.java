package dev.weir.runner.timers;

import dev.weir.runner.state.CellLayout;
import dev.weir.runner.state.ContainerState;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.runners.core.TimerInternals.TimerData;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/** The store-backed event-time timer index with a heap far smaller than its timers. */
class TimerIndexTest {

  private static TimerData timer(String id, long ts) {
    return TimerData.of(id, "", StateNamespaces.global(), new Instant(ts), new Instant(ts), TimeDomain.EVENT_TIME);
  }

  @Test
  void firesEveryTimerInTimestampOrderWithASmallHeapAcrossResetsAndDeletes() {
    try (ContainerState state = ContainerState.inMemory(64)) {
      TimerIndex index = new TimerIndex(state, "step", 0, GlobalWindow.Coder.INSTANCE, 8);
      index.open(null);
      Random random = new Random(7);
      Map<String, Long> expected = new HashMap<>(); // "key/id" -> timestamp
      for (int i = 0; i < 5_000; i++) {
        byte[] key = {(byte) random.nextInt(50)};
        String id = "t" + random.nextInt(40);
        long ts = random.nextInt(100_000);
        if (random.nextInt(10) == 0) {
          index.delete(key, StateNamespaces.global(), id, "");
          expected.remove(key[0] + "/" + id);
        } else {
          index.set(key, timer(id, ts));
          expected.put(key[0] + "/" + id, ts);
        }
      }
      assertThat(index.size()).isEqualTo(expected.size());
      assertThat(index.heapSize()).isLessThanOrEqualTo(8);
      List<Long> fired = new ArrayList<>();
      Map<String, Long> seen = new HashMap<>();
      TimerIndex.Pending p;
      while ((p = index.pollBefore(Long.MAX_VALUE)) != null) {
        long ts = p.data().getTimestamp().getMillis();
        fired.add(ts);
        assertThat(seen.put(p.keyBytes()[0] + "/" + p.data().getTimerId(), ts)).isNull();
      }
      assertThat(seen).isEqualTo(expected);
      assertThat(fired).isSorted();
      assertThat(index.size()).isZero();
    }
  }

  @Test
  void pollBeforeStopsAtTheWatermark() {
    try (ContainerState state = ContainerState.inMemory(64)) {
      TimerIndex index = new TimerIndex(state, "step", 0, GlobalWindow.Coder.INSTANCE, 2);
      index.open(null);
      for (long ts = 10; ts > 0; ts--) {
        index.set(new byte[] {1}, timer("t" + ts, ts));
      }
      List<Long> fired = new ArrayList<>();
      TimerIndex.Pending p;
      while ((p = index.pollBefore(6)) != null) {
        fired.add(p.data().getTimestamp().getMillis());
      }
      assertThat(fired).containsExactly(1L, 2L, 3L, 4L, 5L);
      assertThat(index.size()).isEqualTo(5);
    }
  }

  /**
   * A streaming job's pattern: the watermark advances in steps, each step fires what is due, and
   * between steps timers are set after the watermark, at it, and behind it (due at once), moved and
   * deleted, so the heap runs empty again and again with timers below and above its refill floor.
   * Every step must fire exactly what a sorted model says is due, in order.
   */
  @Test
  void interleavedSetsAndFirings_matchASortedModel_whateverTheFloor() {
    try (ContainerState state = ContainerState.inMemory(64)) {
      TimerIndex index = new TimerIndex(state, "step", 0, GlobalWindow.Coder.INSTANCE, 4);
      index.open(null);
      Random random = new Random(11);
      java.util.TreeMap<String, Long> model = new java.util.TreeMap<>(); // "key/id" -> timestamp
      long watermark = 0;
      for (int step = 0; step < 400; step++) {
        for (int i = 0; i < 12; i++) {
          byte[] key = {(byte) random.nextInt(20)};
          String id = "t" + random.nextInt(5);
          int kind = random.nextInt(10);
          if (kind == 0) {
            index.delete(key, StateNamespaces.global(), id, "");
            model.remove(key[0] + "/" + id);
          } else {
            long ts = kind == 1 ? watermark - 1 - random.nextInt(50) : watermark + random.nextInt(200);
            index.set(key, timer(id, ts));
            model.put(key[0] + "/" + id, ts);
          }
        }
        watermark += 1 + random.nextInt(60);
        List<Long> fired = new ArrayList<>();
        TimerIndex.Pending p;
        while ((p = index.pollBefore(watermark)) != null) {
          String name = p.keyBytes()[0] + "/" + p.data().getTimerId();
          assertThat(model.remove(name)).as("fired %s at step %d", name, step).isEqualTo(p.data().getTimestamp().getMillis());
          fired.add(p.data().getTimestamp().getMillis());
        }
        final long wm = watermark;
        assertThat(fired).isSorted();
        assertThat(model.values()).as("due but not fired at step %d", step).allMatch(ts -> ts >= wm);
        assertThat(index.size()).isEqualTo(model.size());
        if (random.nextInt(8) == 0) {
          state.commit();
          assertThat(index.pendingWrites()).isZero();
          assertThat(storedTimers(state)).as("the store after the commit at step %d", step).isEqualTo(model);
        }
      }
    }
  }

  /**
   * Timers set and deleted, moved, or fired between two commits never reach the store; what the
   * commit writes is exactly the pending timers, including one that was stored, deleted and set
   * again at the same timestamp and then deleted (its tombstone must be written).
   */
  @Test
  void orderedIndexWrites_waitForTheCommit_andTimersThatDieBeforeItNeverReachTheStore() {
    try (ContainerState state = ContainerState.inMemory(64)) {
      TimerIndex index = new TimerIndex(state, "step", 0, GlobalWindow.Coder.INSTANCE, 4);
      index.open(null);
      byte[] key = {1};
      index.set(key, timer("stored", 100));
      index.set(key, timer("resurrected", 200));
      state.commit();
      assertThat(storedTimers(state)).containsOnlyKeys("1/stored", "1/resurrected");

      for (long ts = 300; ts < 400; ts++) {
        index.set(key, timer("moving", ts)); // a session's garbage-collection timer, moved per element
      }
      index.set(key, timer("short-lived", 150));
      index.delete(key, StateNamespaces.global(), "short-lived", "");
      index.set(key, timer("fired", 50));
      assertThat(index.pollBefore(60).data().getTimerId()).isEqualTo("fired");
      index.set(key, timer("stored", 110)); // moved: the stored key's tombstone is pending
      index.set(key, timer("resurrected", 210));
      index.set(key, timer("resurrected", 200)); // back to its stored key
      index.delete(key, StateNamespaces.global(), "resurrected", "");
      assertThat(storedTimers(state)).as("nothing written before the commit")
          .containsOnlyKeys("1/stored", "1/resurrected");
      assertThat(index.pendingWrites()).isEqualTo(4); // stored@100 deleted, stored@110, moving@399, resurrected@200 deleted

      state.commit();
      assertThat(storedTimers(state)).isEqualTo(Map.of("1/stored", 110L, "1/moving", 399L));
      assertThat(index.size()).isEqualTo(2);
    }
  }

  /** The timers in the container's timer store, as "key/id" to timestamp (one index per state). */
  private static Map<String, Long> storedTimers(ContainerState state) {
    int prefixLength = CellLayout.TIMER_INDEX_PREFIX_BYTES;
    Map<String, Long> stored = new java.util.TreeMap<>();
    try (var it = state.timerStore().all()) {
      while (it.hasNext()) {
        CellLayout.TimerKey k = CellLayout.decodeTimerIndexKey(it.next().getKey(), prefixLength);
        assertThat(stored.put(k.keyBytes()[0] + "/" + k.timerId(), k.timestampMs())).isNull();
      }
    }
    return stored;
  }
}
