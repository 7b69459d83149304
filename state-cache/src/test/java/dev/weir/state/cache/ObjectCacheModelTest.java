package dev.weir.state.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.state.store.Backend;
import dev.weir.state.store.ByteKeys;
import dev.weir.state.store.StateStorage;
import dev.weir.state.store.rocksdb.RocksDbSettings;
import dev.weir.state.store.rocksdb.RocksDbStorage;
import dev.weir.state.store.StoreIterator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.samza.storage.kv.Entry;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Randomized model test: long random sequences of get / put / putSealed / delete / range / prefix / flush /
 * commit / evict / reopen against the object cache over each backend, checked after every step
 * against a plain {@link TreeMap} model (and, for reopen, against the model as of the last
 * commit). Cache sizes run from one entry to more than the key space, so that eviction write-back
 * is exercised from "always" to "never".
 *
 * <p>Each run uses a fixed seed plus one fresh seed; a failure reports the seed, the
 * configuration, the step and the last operations. Reproduce with
 * {@code mvn -pl state-cache test -Dtest=ObjectCacheModelTest -Dweir.model.seed=<seed>}.
 */
@Tag("slow")
class ObjectCacheModelTest {

  private static final int OPERATIONS = 12_000;
  private static final int GROUPS = 8;
  private static final int KEYS_PER_GROUP = 25; // 200 keys in all
  private static final StringUtf8Coder CODER = StringUtf8Coder.of();

  @TempDir Path dir;
  /** Where {@code verifyCheckpoint} writes its checkpoints (deleted with the test, unlike siblings of dir). */
  @TempDir Path checkpoints;

  static Stream<Arguments> configurations() {
    long fixed = Long.getLong("weir.model.seed", 20261121L);
    long fresh = Long.getLong("weir.model.seed", System.nanoTime());
    List<Arguments> out = new ArrayList<>();
    for (Backend backend : Backend.values()) {
      for (int cacheSize : new int[] {1, 3, 16, 64, 1000}) {
        out.add(Arguments.of(backend, cacheSize, Bound.ENTRIES, fixed, false));
      }
      out.add(Arguments.of(backend, 40, Bound.WEIGHER, fixed, false)); // weighted by value length
      out.add(Arguments.of(backend, 40, Bound.BYTES, fixed, false));
      out.add(Arguments.of(backend, 8, Bound.ENTRIES, fresh, false));
      out.add(Arguments.of(backend, 500, Bound.ENTRIES, fresh, false));
      out.add(Arguments.of(backend, 16, Bound.BYTES, fresh, false));
      // Sealed puts encoded on a sealer thread, installed at whichever safe point finds them done.
      out.add(Arguments.of(backend, 3, Bound.ENTRIES, fixed, true));
      out.add(Arguments.of(backend, 64, Bound.ENTRIES, fixed, true));
      out.add(Arguments.of(backend, 40, Bound.BYTES, fixed, true));
      out.add(Arguments.of(backend, 16, Bound.ENTRIES, fresh, true));
    }
    List<Arguments> both = new ArrayList<>();
    for (Arguments a : out) {
      both.add(Arguments.of(append(a.get(), ObjectCacheSettings.Eviction.LRU)));
    }
    // Caffeine's W-TinyLFU, which may evict an entry in the put that inserted it.
    for (Backend backend : Backend.values()) {
      for (int cacheSize : new int[] {1, 3, 64}) {
        both.add(Arguments.of(backend, cacheSize, Bound.ENTRIES, fixed, false, ObjectCacheSettings.Eviction.W_TINY_LFU));
      }
      both.add(Arguments.of(backend, 40, Bound.WEIGHER, fixed, false, ObjectCacheSettings.Eviction.W_TINY_LFU));
      both.add(Arguments.of(backend, 40, Bound.BYTES, fixed, true, ObjectCacheSettings.Eviction.W_TINY_LFU));
      both.add(Arguments.of(backend, 16, Bound.ENTRIES, fresh, false, ObjectCacheSettings.Eviction.W_TINY_LFU));
    }
    return both.stream();
  }

  /**
   * How a run bounds its cache: by entries; by a weigher of value lengths ({@code cacheSize * 10});
   * or by estimated bytes ({@code cacheSize} entries of ~600-byte values, far fewer fit the byte bound,
   * and values whose size changes a lot are weighed again at flushes).
   */
  enum Bound {
    ENTRIES,
    WEIGHER,
    BYTES
  }

  private static Object[] append(Object[] values, Object last) {
    Object[] out = java.util.Arrays.copyOf(values, values.length + 1);
    out[values.length] = last;
    return out;
  }

  @ParameterizedTest(name = "{0} cache={1} bound={2} seed={3} backgroundSealing={4} eviction={5}")
  @MethodSource("configurations")
  void randomOperations_matchTheTreeMapModel(Backend backend, int cacheSize, Bound bound, long seed,
      boolean backgroundSealing, ObjectCacheSettings.Eviction eviction) {
    new Run(backend, cacheSize, bound, seed, backgroundSealing, eviction).execute();
  }

  private final class Run {
    final Backend backend;
    final int cacheSize;
    final Bound bound;
    final long seed;
    final ObjectCacheSettings.Eviction eviction;
    /** A sealer thread of its own, or null: sealed puts encode inline. */
    final SealerQueue sealers;
    final Random random;
    final Deque<String> recent = new ArrayDeque<>();
    TreeMap<byte[], String> model = new TreeMap<>(ByteKeys.ORDER);
    TreeMap<byte[], String> committedModel = new TreeMap<>(ByteKeys.ORDER);
    String committedMark = null;
    int checkpointsLeft = 4;
    StateStorage storage;
    ObjectCache cache;
    CachedStore store;

    Run(Backend backend, int cacheSize, Bound bound, long seed, boolean backgroundSealing,
        ObjectCacheSettings.Eviction eviction) {
      this.backend = backend;
      this.eviction = eviction;
      this.cacheSize = cacheSize;
      this.bound = bound;
      this.seed = seed;
      this.sealers = backgroundSealing ? new SealerQueue() : null;
      if (sealers != null) {
        sealers.startThreads(1, "model-sealer");
      }
      this.random = new Random(seed);
    }

    void open() {
      storage = backend.open(dir);
      ObjectCacheSettings settings = switch (bound) {
        case ENTRIES -> ObjectCacheSettings.maximumEntries(cacheSize);
        case WEIGHER -> ObjectCacheSettings.maximumWeight(
            cacheSize * 10L, (k, v) -> 1 + (v == null ? 0 : ((String) v).length()));
        case BYTES -> ObjectCacheSettings.bounded(1000, cacheSize * 300L);
      };
      cache = new ObjectCache(storage, settings.withEviction(eviction), sealers);
      store = cache.store("model");
    }

    void close() {
      cache.close();
      storage.close();
    }

    byte[] randomKey() {
      return key(random.nextInt(GROUPS), random.nextInt(KEYS_PER_GROUP));
    }

    byte[] key(int group, int k) {
      return ("g" + group + "/k" + (k < 10 ? "0" : "") + k).getBytes(StandardCharsets.UTF_8);
    }

    void execute() {
      open();
      int step = 0;
      try {
        for (step = 0; step < OPERATIONS; step++) {
          step(step);
        }
        verifyEverything("final");
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError(String.format(
            "model test failed: seed=%d backend=%s cacheSize=%d bound=%s backgroundSealing=%b eviction=%s step=%d%n"
                + "reproduce: -Dweir.model.seed=%d%nlast operations:%n  %s",
            seed, backend, cacheSize, bound, sealers != null, eviction, step, seed, String.join("\n  ", recent)), e);
      } finally {
        close();
        if (sealers != null) {
          sealers.close();
        }
      }
    }

    void log(String op) {
      recent.addLast(op);
      if (recent.size() > 25) {
        recent.removeFirst();
      }
    }

    void step(int step) {
      int dice = random.nextInt(100);
      if (dice < 30) {
        byte[] k = randomKey();
        log("get " + s(k));
        assertThat(store.get(k, CODER)).as("get %s", s(k)).isEqualTo(model.get(k));
      } else if (dice < 57) {
        byte[] k = randomKey();
        String v = "v" + step + "x".repeat(random.nextInt(12) * (bound == Bound.BYTES ? 100 : 1));
        if (random.nextInt(4) == 0) {
          log("putSealed " + s(k) + "=" + v);
          store.putSealed(store.key(k), v, CODER);
        } else {
          log("put " + s(k) + "=" + v);
          store.put(k, v, CODER);
        }
        model.put(k, v);
      } else if (dice < 69) {
        byte[] k = randomKey();
        log("delete " + s(k));
        store.delete(k);
        model.remove(k);
      } else if (dice < 76) {
        byte[] from = randomKey();
        byte[] to = random.nextInt(5) == 0 ? null : randomKey();
        if (to != null && ByteKeys.ORDER.compare(from, to) > 0) {
          byte[] t = from;
          from = to;
          to = t;
        }
        log("range " + s(from) + ".." + (to == null ? "end" : s(to)));
        List<String> actual = collect(store.range(from, to, CODER));
        Map<byte[], String> expected = to == null ? model.tailMap(from, true) : model.subMap(from, true, to, false);
        assertThat(actual).as("range").isEqualTo(render(expected));
      } else if (dice < 81) {
        int group = random.nextInt(GROUPS);
        byte[] prefix = ("g" + group + "/").getBytes(StandardCharsets.UTF_8);
        log("prefix " + s(prefix));
        List<String> actual = collect(store.prefix(prefix, CODER));
        assertThat(actual).as("prefix").isEqualTo(render(model.subMap(prefix, true, ByteKeys.prefixEnd(prefix), false)));
      } else if (dice < 83) {
        log("safePoint");
        cache.safePoint();
      } else if (dice < 85) {
        log("flush");
        cache.flush();
      } else if (dice < 91) {
        String mark = "mark" + step;
        log("commit " + mark);
        cache.commit(Map.of("mark", mark.getBytes(StandardCharsets.UTF_8)));
        committedModel = new TreeMap<>(model);
        committedMark = mark;
        if (backend.checkpoints() && checkpointsLeft > 0 && random.nextInt(20) == 0) {
          checkpointsLeft--; // a checkpoint flushes the memtables: a few per run
          verifyCheckpoint(step);
        }
      } else if (dice < 95) {
        log("evictAll");
        cache.evictAll();
      } else if (dice < 97) {
        int group = random.nextInt(GROUPS);
        byte[] prefix = ("g" + group + "/").getBytes(StandardCharsets.UTF_8);
        log("deletePrefix " + s(prefix));
        int expected = model.subMap(prefix, true, ByteKeys.prefixEnd(prefix), false).size();
        assertThat(store.deletePrefix(prefix)).as("deletePrefix count").isEqualTo(expected);
        model.subMap(prefix, true, ByteKeys.prefixEnd(prefix), false).clear();
      } else if (backend.durable()) {
        log("reopen");
        close();
        open();
        model = new TreeMap<>(committedModel);
        String mark = committedMark == null ? null
            : new String(storage.committedMetadata().get("mark"), StandardCharsets.UTF_8);
        assertThat(mark).as("restored commit metadata").isEqualTo(committedMark);
        if (step % 4 == 0) {
          verifyEverything("after reopen");
        }
      } else {
        log("verify");
        verifyEverything("verify");
      }
    }

    /** A checkpoint taken right after the commit holds exactly the committed model and mark. */
    void verifyCheckpoint(int step) {
      log("checkpoint");
      Path target = checkpoints.resolve("checkpoint-" + step);
      storage.checkpointTo(target);
      try (StateStorage restored = RocksDbStorage.open(target, RocksDbSettings.defaults())) {
        ObjectCache restoredCache = new ObjectCache(restored, ObjectCacheSettings.maximumEntries(10));
        List<String> actual = collect(restoredCache.store("model").range(new byte[0], null, CODER));
        assertThat(actual).as("checkpoint after commit " + committedMark).isEqualTo(render(committedModel));
        assertThat(new String(restored.committedMetadata().get("mark"), StandardCharsets.UTF_8))
            .isEqualTo(committedMark);
        restoredCache.close();
      }
    }

    void verifyEverything(String when) {
      for (int g = 0; g < GROUPS; g++) {
        for (int k = 0; k < KEYS_PER_GROUP; k++) {
          byte[] key = key(g, k);
          assertThat(store.get(key, CODER)).as("%s: get %s", when, s(key)).isEqualTo(model.get(key));
        }
      }
      assertThat(collect(store.range(new byte[0], null, CODER))).as("%s: full scan", when).isEqualTo(render(model));
    }

    List<String> collect(StoreIterator<byte[], String> it) {
      try (it) {
        List<String> out = new ArrayList<>();
        while (it.hasNext()) {
          Entry<byte[], String> e = it.next();
          out.add(s(e.getKey()) + "=" + e.getValue());
        }
        return out;
      }
    }

    List<String> render(Map<byte[], String> map) {
      List<String> out = new ArrayList<>();
      map.forEach((k, v) -> out.add(s(k) + "=" + v));
      return out;
    }

    String s(byte[] key) {
      return new String(key, StandardCharsets.UTF_8);
    }
  }
}
