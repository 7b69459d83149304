package dev.weir.state.store.memory;

import dev.weir.state.store.ByteKeys;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StateStorage;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * A {@link StateStorage} held on the Java heap, for small state and for tests: the in-memory
 * store of the Samza 2015 single-node benchmark.
 *
 * <p>Not durable: writes apply at once (there is no staged batch, so {@link #stagedBytes()} is
 * always 0), {@link #commit(Map)} only records the metadata and bumps the sequence number, and
 * {@link #close()} discards everything.
 *
 * <p>Threading: confined to one thread at a time, like every storage; the maps underneath are
 * concurrent so that iterating while writing never throws.
 */
public final class InMemoryStorage implements StateStorage {

  private final Map<String, InMemoryStore> stores = new LinkedHashMap<>();
  private Map<String, byte[]> metadata = Map.of();
  private long sequence;
  private boolean closed;

  /** Creates an empty storage. */
  public InMemoryStorage() {}

  @Override
  public SortedByteStore store(String name) {
    checkOpen();
    SortedByteStore.checkName(name);
    return stores.computeIfAbsent(name, n -> new InMemoryStore(n, this));
  }

  @Override
  public Set<String> storeNames() {
    checkOpen();
    return Collections.unmodifiableSet(new TreeSet<>(stores.keySet()));
  }

  @Override
  public void commit(Map<String, byte[]> metadata) {
    checkOpen();
    Objects.requireNonNull(metadata, "metadata");
    this.metadata = ByteKeys.copyMetadata(metadata);
    sequence++;
  }

  @Override
  public Map<String, byte[]> committedMetadata() {
    return metadata;
  }

  @Override
  public long commitSequence() {
    return sequence;
  }

  @Override
  public long stagedBytes() {
    return 0;
  }

  @Override
  public Optional<Path> directory() {
    return Optional.empty();
  }

  @Override
  public boolean isDurable() {
    return false;
  }

  @Override
  public void close() {
    closed = true;
    stores.values().forEach(InMemoryStore::clear);
  }

  void checkOpen() {
    if (closed) {
      throw new IllegalStateException("in-memory state storage is closed");
    }
  }
}
