package dev.weir.state.cache;

import dev.weir.state.store.ByteKeys;
import java.util.Arrays;

/**
 * A key of one {@link CachedStore}: the encoded key bytes with their hash computed once. Callers
 * that access the same key repeatedly (a state cell touched once per element) create it once with
 * {@link CachedStore#key(byte[])} and reuse it, so that a cache lookup neither re-encodes nor
 * re-hashes the key.
 *
 * <p>Immutable by contract: the bytes are kept by reference and must not be changed.
 */
public final class StateKey {
  final CachedStore store;
  final byte[] bytes;
  private final int hash;

  StateKey(CachedStore store, byte[] bytes) {
    this.store = store;
    this.bytes = bytes;
    this.hash = 31 * System.identityHashCode(store) + ByteKeys.hash(bytes);
  }

  /** The encoded key; do not modify. */
  public byte[] bytes() {
    return bytes;
  }

  /** The store this key belongs to. */
  public CachedStore store() {
    return store;
  }

  @Override
  public int hashCode() {
    return hash;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StateKey other
        && other.hash == hash
        && other.store == store
        && Arrays.equals(other.bytes, bytes);
  }

  @Override
  public String toString() {
    return store.name() + ":" + Arrays.toString(bytes);
  }
}
