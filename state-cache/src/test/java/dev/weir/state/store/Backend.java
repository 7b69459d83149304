package dev.weir.state.store;

import dev.weir.state.store.memory.InMemoryStorage;
import dev.weir.state.store.rocksdb.RocksDbSettings;
import dev.weir.state.store.rocksdb.RocksDbStorage;
import java.nio.file.Path;
import java.util.function.Function;

/** The storage backends tests run over: every store behaviour must hold on each. */
public enum Backend {
  MEMORY(dir -> new InMemoryStorage()),
  ROCKSDB(dir -> RocksDbStorage.open(dir, RocksDbSettings.defaults().withSyncCommits(false))),
  /** RocksDB with direct writes and no write-ahead log, as Weir's runner opens it. */
  ROCKSDB_DIRECT(dir -> RocksDbStorage.open(dir,
      RocksDbSettings.defaults().withWriteAheadLog(false).withStagedWrites(false)));

  private final Function<Path, StateStorage> opener;

  Backend(Function<Path, StateStorage> opener) {
    this.opener = opener;
  }

  /** Opens a storage of this backend in {@code dir} (ignored by the in-memory backend). */
  public StateStorage open(Path dir) {
    return opener.apply(dir);
  }

  /** Whether reopening the same directory restores the last commit. */
  public boolean durable() {
    return this == ROCKSDB;
  }

  /** Whether a checkpoint taken right after a commit holds that commit (direct writes: not the directory). */
  public boolean checkpoints() {
    return this != MEMORY;
  }
}
