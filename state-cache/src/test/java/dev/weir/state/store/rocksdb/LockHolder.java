package dev.weir.state.store.rocksdb;

import java.nio.file.Path;

/**
 * Run in a separate JVM by {@link RocksDbStorageTest}: opens a storage, prints "open", and holds
 * it (and its directory lock) until its standard input closes.
 */
public final class LockHolder {
  private LockHolder() {}

  public static void main(String[] args) throws Exception {
    RocksDbStorage storage = RocksDbStorage.open(Path.of(args[0]), RocksDbSettings.defaults());
    try {
      System.out.println("open");
      System.out.flush();
      while (System.in.read() >= 0) {
        // hold until the parent closes our stdin
      }
    } finally {
      storage.close();
    }
  }
}
