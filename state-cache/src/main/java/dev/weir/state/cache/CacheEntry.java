package dev.weir.state.cache;

import org.apache.beam.sdk.coders.Coder;

/**
 * A cached state cell: the decoded value (or {@code null} for "absent"), the coder that encodes
 * it, and its {@link State}. Mutated in place by the owning thread only.
 */
final class CacheEntry {

  /** Where an entry stands relative to the byte store. */
  enum State {
    /** The value equals what the byte store holds (null: the store has no such key). */
    CLEAN,
    /** The value (null: a delete, i.e. a tombstone) has not yet been written to the byte store. */
    DIRTY,
    /** Evicted from the cache (and written back first if it was dirty); no longer authoritative. */
    EVICTED
  }

  final StateKey key;
  Object value;
  Coder<?> coder;
  State state;

  CacheEntry(StateKey key, Object value, Coder<?> coder, State state) {
    this.key = key;
    this.value = value;
    this.coder = coder;
    this.state = state;
  }
}
