package dev.weir.state.store;

import org.apache.samza.storage.kv.KeyValueIterator;

/**
 * samza-api's {@link KeyValueIterator} made {@link AutoCloseable}, so that iterators holding
 * native resources (RocksDB) are closed by try-with-resources. {@link #close()} is idempotent and
 * does not throw checked exceptions.
 */
public interface StoreIterator<K, V> extends KeyValueIterator<K, V>, AutoCloseable {
  @Override
  void close();
}
