package dev.weir.state.benchmarks;

import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StateStorage;
import dev.weir.state.store.memory.InMemoryStorage;
import dev.weir.state.store.rocksdb.RocksDbSettings;
import dev.weir.state.store.rocksdb.RocksDbStorage;
import java.nio.file.Path;
import java.util.Map;

/**
 * The stateful task of Samza's key-counting scenarios: per message, read the 8-byte count of the
 * message's key from a byte store, add one, write it back; commit every {@code commitEvery}
 * messages with the input offset as commit metadata (what Samza's checkpoint records).
 *
 * <p>The store is prepopulated with a zero count for every key and committed before measuring,
 * so every read finds a value, as in a job that has run long enough to have seen every key.
 *
 * <p>Threading: one thread, like the storage.
 */
public final class KeyCountingTask implements AutoCloseable {

  /** Backends the task can count on. */
  public enum Backend {
    /** {@link InMemoryStorage}: a skip list on the heap; commit only records the metadata. */
    IN_MEMORY,
    /** {@link RocksDbStorage} in a scratch directory, commits not fsynced. */
    ROCKSDB,
    /** {@link RocksDbStorage} in a scratch directory, every commit fsyncs RocksDB's WAL. */
    ROCKSDB_SYNC
  }

  /** Keys written per commit while prepopulating. */
  private static final int PREPOPULATE_BATCH = 100_000;

  private final StateStorage storage;
  private final Path directory;
  private final SortedByteStore counts;
  private final InProcessStream stream;
  private final int keys;
  private final int commitEvery;
  private int sinceCommit;
  /** Messages consumed since the task started (the "input offset"). */
  private long offset;

  private KeyCountingTask(StateStorage storage, Path directory, int keys, int commitEvery) {
    if (commitEvery < 1) {
      throw new IllegalArgumentException("commitEvery must be >= 1, was " + commitEvery);
    }
    this.storage = storage;
    this.directory = directory;
    this.counts = storage.store("counts");
    this.keys = keys;
    this.commitEvery = commitEvery;
    prepopulate();
    this.stream = new InProcessStream(
        InProcessStream.Kind.ARRAY_BLOCKING_QUEUE, Workload.messages(keys), Workload.uniformIndices(keys));
  }

  /** Opens {@code backend} (in a fresh scratch directory for RocksDB) and prepopulates it. */
  static KeyCountingTask open(Backend backend, int keys, int commitEvery) {
    return switch (backend) {
      case IN_MEMORY -> new KeyCountingTask(new InMemoryStorage(), null, keys, commitEvery);
      case ROCKSDB, ROCKSDB_SYNC -> {
        Path dir = Workload.scratchDirectory("weir-keycount-");
        RocksDbSettings settings =
            RocksDbSettings.defaults().withSyncCommits(backend == Backend.ROCKSDB_SYNC);
        RocksDbStorage storage = RocksDbStorage.open(dir, settings);
        try {
          yield new KeyCountingTask(storage, dir, keys, commitEvery);
        } catch (RuntimeException e) {
          storage.close();
          Workload.deleteRecursively(dir);
          throw e;
        }
      }
    };
  }

  private void prepopulate() {
    byte[] zero = Workload.encodeCount(0);
    for (int i = 0; i < keys; i++) {
      counts.put(Workload.messageKey(i), zero);
      if ((i + 1) % PREPOPULATE_BATCH == 0) {
        storage.commit(Map.of());
      }
    }
    storage.commit(Map.of());
  }

  /** Consumes one message and counts its key; returns the key's new count. */
  long process() {
    byte[] key = Workload.keyOf(stream.next());
    byte[] stored = counts.get(key);
    long count = stored == null ? 1 : Workload.decodeCount(stored) + 1;
    counts.put(key, Workload.encodeCount(count));
    offset++;
    if (++sinceCommit == commitEvery) {
      storage.commit(Map.of("offset", Workload.encodeCount(offset)));
      sinceCommit = 0;
    }
    return count;
  }

  /**
   * With {@code -Dweir.bench.check=true} ({@link Workload#CHECK_STATE}), checks that the counts of
   * all keys add up to the number of messages consumed (reading staged writes too); then closes
   * and deletes the storage. Run after measuring; not timed.
   *
   * @throws IllegalStateException if the counts do not add up
   */
  @Override
  public void close() {
    try {
      System.out.printf("%n[key-counting] %s: %,d messages, %,d commits%n",
          storage.getClass().getSimpleName(), offset, storage.commitSequence());
      if (Workload.CHECK_STATE) {
        long total = 0;
        for (int i = 0; i < keys; i++) {
          byte[] stored = counts.get(Workload.messageKey(i));
          total += stored == null ? 0 : Workload.decodeCount(stored);
        }
        System.out.printf("[key-counting] counts add up: %s%n", total == offset);
        if (total != offset) {
          throw new IllegalStateException(
              "counts add up to " + total + ", but " + offset + " messages were consumed");
        }
      }
    } finally {
      storage.close();
      Workload.deleteRecursively(directory);
    }
  }
}
