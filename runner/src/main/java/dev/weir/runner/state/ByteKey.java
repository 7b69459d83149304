package dev.weir.runner.state;

import dev.weir.state.store.ByteKeys;
import java.util.Arrays;
import org.apache.beam.sdk.annotations.Internal;

/**
 * Encoded key bytes with their hash computed once ({@link ByteKeys#hash}), for hash maps keyed by
 * Beam's structural key identity (keys group by their encoding, not by {@code equals}). Immutable
 * by contract: the array is kept by reference.
 */
@Internal
public final class ByteKey {
  private final byte[] bytes;
  private final int hash;

  /** Wraps {@code bytes}; the caller must not modify them afterwards. */
  public ByteKey(byte[] bytes) {
    this.bytes = bytes;
    this.hash = ByteKeys.hash(bytes);
  }

  /** The encoded key; do not modify. */
  public byte[] bytes() {
    return bytes;
  }

  @Override
  public int hashCode() {
    return hash;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ByteKey other && other.hash == hash && Arrays.equals(other.bytes, bytes);
  }
}
