package dev.weir.runner.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.state.StateBackend;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.runners.core.StateTags;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.joda.time.Instant;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Randomized model test of bag state ({@link CachedBag}, chunks of elements): long random
 * sequences of add (nulls included), read, clear, eviction of the whole cache, commit and
 * (RocksDB) close and reopen after a commit, with a safe point after every step, over several keys and windows, each bag checked after every
 * read against a plain {@link List} model. Bags grow past several chunks and are cleared and refilled, so chunk boundaries, partly
 * filled chunks written back and read again, and chunks dropped before any write-back all occur.
 *
 * <p>Each configuration uses a fixed seed plus one fresh seed; a failure names the seed, the step
 * and the last operations. Reproduce with
 * {@code mvn -pl runner/beam2.70 test -Dtest=CachedBagModelTest -Dweir.model.seed=<seed>}.
 */
class CachedBagModelTest {
  private static final int OPERATIONS = 4_000;
  private static final String[] KEYS = {"a", "b", "c"};
  private static final StateNamespace[] WINDOWS = {
    StateNamespaces.global(),
    StateNamespaces.window(IntervalWindow.getCoder(), new IntervalWindow(new Instant(0), new Instant(10))),
    StateNamespaces.window(IntervalWindow.getCoder(), new IntervalWindow(new Instant(10), new Instant(20)))
  };
  private static final StateTag<BagState<String>> BAG = StateTags.bag("b", NullableCoder.of(StringUtf8Coder.of()));
  private static final byte[] OPERATOR = {0, 0, 0, 3};

  @TempDir Path dir;

  static Stream<Arguments> configurations() {
    long fixed = Long.getLong("weir.model.seed", 20261125L);
    long fresh = Long.getLong("weir.model.seed", System.nanoTime());
    List<Arguments> out = new ArrayList<>();
    for (StateBackend backend : StateBackend.values()) {
      for (long cache : new long[] {2, 16, 100_000}) {
        out.add(Arguments.of(backend, cache, fixed));
      }
      out.add(Arguments.of(backend, 8L, fresh));
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0}, cache {1}, seed {2}")
  @MethodSource("configurations")
  void bagsEqualTheirModelThroughEvictionsCommitsAndReopens(StateBackend backend, long cache, long seed) {
    Random random = new Random(seed);
    int cells = KEYS.length * WINDOWS.length;
    List<List<String>> model = new ArrayList<>();
    for (int i = 0; i < cells; i++) {
      model.add(new ArrayList<>());
    }
    Deque<String> recent = new ArrayDeque<>();
    ContainerState state = new ContainerState(backend, dir.resolve("c"), cache, "model");
    CachedStateInternals[] internals = bind(state);
    try {
      for (int step = 0; step < OPERATIONS; step++) {
        int bag = random.nextInt(cells);
        BagState<String> b = internals[bag / WINDOWS.length].state(WINDOWS[bag % WINDOWS.length], BAG);
        int op = random.nextInt(100);
        String what;
        if (op < 70) {
          String value = random.nextInt(20) == 0 ? null : "v" + step;
          b.add(value);
          model.get(bag).add(value);
          what = "add " + value + " to " + bag;
        } else if (op < 85) {
          List<String> read = new ArrayList<>();
          b.read().forEach(read::add);
          what = "read " + bag;
          remember(recent, what);
          assertThat(read).as("seed %d, step %d, bag %d, last ops %s", seed, step, bag, recent)
              .isEqualTo(model.get(bag));
          assertThat(b.isEmpty().read()).isEqualTo(model.get(bag).isEmpty());
        } else if (op < 89) {
          b.clear();
          model.get(bag).clear();
          what = "clear " + bag;
        } else if (op < 94) {
          state.cache().evictAll();
          what = "evict all";
        } else if (op < 99) {
          state.commit();
          what = "commit";
        } else if (backend == StateBackend.ROCKSDB) {
          state.commit(); // a working store is reopened only after a commit (restores read checkpoints)
          state.close();
          state = new ContainerState(backend, dir.resolve("c"), cache, "model");
          internals = bind(state);
          what = "commit, close and reopen";
        } else {
          what = "nothing";
        }
        remember(recent, what);
        state.safePoint();
      }
      for (int bag = 0; bag < cells; bag++) {
        List<String> read = new ArrayList<>();
        internals[bag / WINDOWS.length].state(WINDOWS[bag % WINDOWS.length], BAG).read().forEach(read::add);
        assertThat(read).as("seed %d, final read of bag %d", seed, bag).isEqualTo(model.get(bag));
      }
    } finally {
      state.close();
    }
  }

  private static CachedStateInternals[] bind(ContainerState state) {
    CachedStateInternals[] internals = new CachedStateInternals[KEYS.length];
    for (int k = 0; k < KEYS.length; k++) {
      internals[k] = new CachedStateInternals(KEYS[k], KEYS[k].getBytes(), OPERATOR, state.store(), new WatermarkHolds(),
          IntervalWindow.getCoder());
    }
    return internals;
  }

  private static void remember(Deque<String> recent, String what) {
    recent.addLast(what);
    if (recent.size() > 12) {
      recent.removeFirst();
    }
  }
}
