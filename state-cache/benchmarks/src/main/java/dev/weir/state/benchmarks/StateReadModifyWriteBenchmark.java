package dev.weir.state.benchmarks;

import static java.nio.charset.StandardCharsets.US_ASCII;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.ObjectCache;
import dev.weir.state.cache.ObjectCacheSettings;
import dev.weir.state.cache.ObjectCacheStats;
import dev.weir.state.cache.StateKey;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StateStorage;
import dev.weir.state.store.memory.InMemoryStorage;
import dev.weir.state.store.rocksdb.RocksDbSettings;
import dev.weir.state.store.rocksdb.RocksDbStorage;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.ToLongFunction;
import java.util.function.UnaryOperator;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.util.CoderUtils;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Beam state read-modify-write, <b>through the object cache</b> against <b>bytes only</b>: what
 * one {@code ValueState.read()} followed by {@code ValueState.write(...)} costs a runner per
 * element, with and without Weir's {@link ObjectCache}.
 *
 * <p>Workload: per operation, pick a state cell uniformly at random among {@code keys} cells,
 * read its value, build the next value (values are immutable), write it, and every
 * {@code commitEvery} = 10,000 operations commit (as a runner does at a bundle or checkpoint).
 *
 * <ul>
 *   <li>{@code objectCache}: {@link CachedStore#get(StateKey, Coder)} → new value →
 *       {@link CachedStore#put(StateKey, Object, Coder)}; commit with
 *       {@link ObjectCache#commit(Map) ObjectCache.commit(Map.of())}. The {@link StateKey}s are
 *       built once in setup, as a runner would keep them per (key, namespace, state id). A hit
 *       costs a hash lookup; a miss reads and decodes once; dirty values are encoded at commit or
 *       when evicted.
 *   <li>{@code bytesOnly}: what a runner without an object cache does (Beam's Samza runner before
 *       LinkedIn's 2020 fix): {@link SortedByteStore#get} → {@link CoderUtils#decodeFromByteArray}
 *       → new value → {@link CoderUtils#encodeToByteArray} → {@link SortedByteStore#put}; commit
 *       with {@link StateStorage#commit(Map) StateStorage.commit(Map.of())}. Keys are precomputed
 *       byte arrays here too.
 * </ul>
 *
 * <p>Data shapes ({@code @Param}):
 *
 * <ul>
 *   <li>{@code shape} = {@code keys/cacheEntries}: {@code 10000/100000}, the hot set fits in the
 *       cache (after warm-up every read hits); {@code 100000/10000}, the hot set is 10x the cache
 *       (a uniform pick hits about 10% of the time; most operations miss, evict and write a dirty
 *       victim back). The cache is bounded by entry count.
 *   <li>{@code value}: {@code VAR_LONG}, a {@code ValueState<Long>} counter with
 *       {@link VarLongCoder} (1-9 bytes); {@code TALLY}, a small record ({@link Tally}: a long, a
 *       20-character string, an int; ~25 bytes) with a hand-written {@link Tally.TallyCoder}
 *       composing {@code VarLongCoder}, {@code StringUtf8Coder} and {@code VarIntCoder};
 *       {@code TALLY_SERIALIZABLE}, the same record with Beam's {@link SerializableCoder} (Java
 *       serialization, ~100+ bytes), the coder users get when they do not write one.
 *   <li>{@code backend}: {@code ROCKSDB} ({@link RocksDbStorage}, default settings with
 *       {@code syncCommits=false}, scratch directory under {@code java.io.tmpdir}) or
 *       {@code IN_MEMORY} ({@link InMemoryStorage}).
 * </ul>
 *
 * <p>Keys are ~26 bytes ({@code user-00000042}, a NUL, the namespace {@code global}, a NUL, the
 * state id {@code tally}). Every cell is prepopulated (initial value encoded and committed) before
 * measuring, so reads always find a value; the object cache starts empty. After measuring, the
 * teardown prints the cache's hit rate and eviction counts and, with
 * {@code -jvmArgsAppend "-Xms2g -Xmx2g -Dweir.bench.check=true"}, checks that the cells record
 * exactly the number of updates made.
 *
 * <p>The score is read-modify-writes per second. The number that matters is the ratio
 * {@code objectCache / bytesOnly} for the same {@code shape}, {@code value} and {@code backend} in
 * one run.
 *
 * <pre>{@code
 * mvn -B -q -pl state-cache,state-cache/benchmarks -am package -DskipTests
 * java -jar state-cache/benchmarks/target/benchmarks.jar StateReadModifyWriteBenchmark \
 *     -f 1 -wi 2 -w 2s -i 3 -r 3s -rf json -rff state-rmw.json
 * # one shape only, RocksDB only:
 * java -jar state-cache/benchmarks/target/benchmarks.jar StateReadModifyWriteBenchmark \
 *     -p shape=100000/10000 -p backend=ROCKSDB -f 1 -wi 2 -w 2s -i 3 -r 3s
 * }</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class StateReadModifyWriteBenchmark {

  /** Name of the logical store holding the state cells. */
  private static final String STORE = "state";

  /** Backends the state can live in. */
  public enum Backend {
    ROCKSDB,
    IN_MEMORY
  }

  /** The kinds of state value, each with its coder and its update. */
  public enum ValueKind {
    /** {@code ValueState<Long>} with {@link VarLongCoder}: a counter. */
    VAR_LONG(new Cell<>(VarLongCoder.of(), i -> 0L, v -> v + 1, v -> v)),
    /** {@link Tally} with the hand-written {@link Tally.TallyCoder}. */
    TALLY(new Cell<>(Tally.TallyCoder.of(), ValueKind::initialTally, v -> v.plus(1), Tally::updates)),
    /** {@link Tally} with Beam's {@link SerializableCoder} (Java serialization). */
    TALLY_SERIALIZABLE(new Cell<>(
        SerializableCoder.of(Tally.class), ValueKind::initialTally, v -> v.plus(1), Tally::updates));

    final Cell<?> cell;

    ValueKind(Cell<?> cell) {
      this.cell = cell;
    }

    private static Tally initialTally(int i) {
      return new Tally(0, String.format("u%010d@weir.dev", i), 0); // 20 characters
    }
  }

  /**
   * How to make, update and encode one kind of value.
   *
   * @param coder the value's Beam coder
   * @param initial the prepopulated value of cell {@code i}
   * @param update the next value after one update (a new object)
   * @param updates how many updates a value records, for the teardown check
   */
  record Cell<V>(
      Coder<V> coder, IntFunction<V> initial, UnaryOperator<V> update, ToLongFunction<V> updates) {}

  /** Parameters, storage and key stream common to both paths; one per benchmark thread. */
  @State(Scope.Thread)
  public abstract static class Fixture {
    /** {@code keys/cacheEntries}: the number of state cells and the object cache's entry bound. */
    @Param({"10000/100000", "100000/10000"})
    String shape;

    /** The value kind and its coder. */
    @Param({"VAR_LONG", "TALLY", "TALLY_SERIALIZABLE"})
    ValueKind value;

    /** The storage under the state. */
    @Param({"ROCKSDB", "IN_MEMORY"})
    Backend backend;

    /** Operations between two commits. */
    @Param("10000")
    int commitEvery;

    int keys;
    long cacheEntries;
    Coder<Object> coder;
    UnaryOperator<Object> update;
    StateStorage storage;
    byte[][] keyBytes;
    private Path directory;
    private IntFunction<Object> initial;
    private ToLongFunction<Object> updatesOf;
    private int[] indices;
    private int indexMask;
    private int cursor;
    private int sinceCommit;
    /** Read-modify-writes done, warm-up included. */
    long operations;

    @Setup
    @SuppressWarnings("unchecked")
    public void setUp() {
      String[] parts = shape.split("/");
      if (parts.length != 2) {
        throw new IllegalArgumentException("shape must be keys/cacheEntries, was " + shape);
      }
      keys = Integer.parseInt(parts[0]);
      cacheEntries = Long.parseLong(parts[1]);
      Cell<Object> cell = (Cell<Object>) value.cell;
      coder = cell.coder();
      update = cell.update();
      initial = cell.initial();
      updatesOf = cell.updates();
      indices = Workload.uniformIndices(keys);
      indexMask = indices.length - 1;
      keyBytes = new byte[keys][];
      for (int i = 0; i < keys; i++) {
        keyBytes[i] = String.format("user-%08d\0global\0tally", i).getBytes(US_ASCII);
      }
      if (backend == Backend.ROCKSDB) {
        directory = Workload.scratchDirectory("weir-state-rmw-");
        storage = RocksDbStorage.open(directory, RocksDbSettings.defaults().withSyncCommits(false));
      } else {
        storage = new InMemoryStorage();
      }
      SortedByteStore bytes = storage.store(STORE);
      for (int i = 0; i < keys; i++) {
        bytes.put(keyBytes[i], encode(initial.apply(i)));
      }
      storage.commit(Map.of());
      openPath();
    }

    /** Opens what the path needs on top of the prepopulated storage. */
    abstract void openPath();

    /** The value of cell {@code i} as the path sees it, for the teardown check. */
    abstract Object readForCheck(int i);

    /** Releases what {@link #openPath()} opened; the storage is closed after it. */
    void closePath() {}

    /** The path's name in reports. */
    abstract String pathName();

    /** Path-specific report lines, printed at teardown. */
    abstract String report();

    /** The index of the next cell to update: a uniform random pick. */
    final int nextIndex() {
      return indices[cursor++ & indexMask];
    }

    /** Counts one operation and returns whether it is time to commit. */
    final boolean countAndCheckCommit() {
      operations++;
      if (++sinceCommit == commitEvery) {
        sinceCommit = 0;
        return true;
      }
      return false;
    }

    final byte[] encode(Object v) {
      try {
        return CoderUtils.encodeToByteArray(coder, v);
      } catch (CoderException e) {
        throw new IllegalStateException("cannot encode " + v, e);
      }
    }

    final Object decode(byte[] bytes) {
      try {
        return CoderUtils.decodeFromByteArray(coder, bytes);
      } catch (CoderException e) {
        throw new IllegalStateException("cannot decode a " + value + " value", e);
      }
    }

    /**
     * Prints the report and, with {@code -Dweir.bench.check=true} ({@link Workload#CHECK_STATE}),
     * checks that all cells together record exactly {@link #operations} updates; then closes and
     * deletes the storage. Not timed.
     */
    @TearDown
    public void tearDown() {
      try {
        System.out.printf("%n[state-rmw] %s %s %s %s: %,d operations%s%n",
            pathName(), shape, value, backend, operations, report());
        if (Workload.CHECK_STATE) {
          long recorded = 0;
          for (int i = 0; i < keys; i++) {
            Object v = readForCheck(i);
            recorded += v == null ? 0 : updatesOf.applyAsLong(v);
          }
          System.out.printf("[state-rmw] updates add up: %s%n", recorded == operations);
          if (recorded != operations) {
            throw new IllegalStateException(
                "cells record " + recorded + " updates, but " + operations + " were made");
          }
        }
      } finally {
        closePath();
        storage.close();
        Workload.deleteRecursively(directory);
      }
    }
  }

  /** Path A: the object cache in front of the byte store. */
  @State(Scope.Thread)
  public static class ObjectCachePath extends Fixture {
    ObjectCache cache;
    CachedStore cells;
    StateKey[] stateKeys;

    @Override
    void openPath() {
      cache = new ObjectCache(storage, ObjectCacheSettings.maximumEntries(cacheEntries));
      cells = cache.store(STORE);
      stateKeys = new StateKey[keys];
      for (int i = 0; i < keys; i++) {
        stateKeys[i] = cells.key(keyBytes[i]);
      }
    }

    /** One read-modify-write through the cache. */
    Object readModifyWrite() {
      StateKey key = stateKeys[nextIndex()];
      Object next = update.apply(cells.get(key, coder));
      cells.put(key, next, coder);
      if (countAndCheckCommit()) {
        cache.commit(Map.of());
      }
      return next;
    }

    @Override
    Object readForCheck(int i) {
      return cells.get(stateKeys[i], coder);
    }

    @Override
    void closePath() {
      cache.close(); // drops cached entries; dirty ones since the last commit are discarded
    }

    @Override
    String pathName() {
      return "objectCache";
    }

    @Override
    String report() {
      ObjectCacheStats s = cache.stats();
      return String.format(
          "%n[state-rmw]   object cache: hit rate %.3f (%,d hits, %,d misses), %,d evictions "
              + "(%,d dirty write-backs), %,d entries flushed by %,d flushes, %,d bytes encoded, %,d decoded",
          s.hitRate(), s.hits(), s.misses(), s.evictions(), s.dirtyWriteBacks(), s.flushedEntries(),
          s.flushes(), s.bytesEncoded(), s.bytesDecoded());
    }
  }

  /** Path B: bytes only, decoding and encoding on every access. */
  @State(Scope.Thread)
  public static class BytesOnlyPath extends Fixture {
    SortedByteStore bytes;

    @Override
    void openPath() {
      bytes = storage.store(STORE);
    }

    /** One read-modify-write on the byte store. */
    Object readModifyWrite() {
      byte[] key = keyBytes[nextIndex()];
      Object next = update.apply(decode(bytes.get(key)));
      bytes.put(key, encode(next));
      if (countAndCheckCommit()) {
        storage.commit(Map.of());
      }
      return next;
    }

    @Override
    Object readForCheck(int i) {
      byte[] stored = bytes.get(keyBytes[i]);
      return stored == null ? null : decode(stored);
    }

    @Override
    String pathName() {
      return "bytesOnly";
    }

    @Override
    String report() {
      return "";
    }
  }

  /** Path A: get through the object cache, new value, put; commit every 10,000 operations. */
  @Benchmark
  public Object objectCache(ObjectCachePath path) {
    return path.readModifyWrite();
  }

  /** Path B: get bytes, decode, new value, encode, put bytes; commit every 10,000 operations. */
  @Benchmark
  public Object bytesOnly(BytesOnlyPath path) {
    return path.readModifyWrite();
  }
}
