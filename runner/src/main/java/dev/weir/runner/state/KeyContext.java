package dev.weir.runner.state;

import org.apache.beam.runners.core.StateInternals;

/**
 * Everything a keyed operator keeps for one key of one task: the key object (the first one seen
 * with these encoded bytes), its state, and how many timers it has pending. A key whose state is
 * empty and that has no timers is dropped by its operator.
 *
 * <p>Identity matters: timers refer to their key context by reference. Confined to the task's
 * thread.
 */
public final class KeyContext<K> {
  final K key;
  final ByteKey id;
  final StateInternals state;
  int pendingTimers;

  /** Creates the context of {@code key}, identified by its encoding {@code id}, with its state. */
  public KeyContext(K key, ByteKey id, StateInternals state) {
    this.key = key;
    this.id = id;
    this.state = state;
  }

  /** The key object. */
  public K key() {
    return key;
  }

  /** The encoded key. */
  public ByteKey id() {
    return id;
  }

  /** The key's state. */
  public StateInternals state() {
    return state;
  }

  /** Timers currently set for this key, in all domains. */
  public int pendingTimers() {
    return pendingTimers;
  }
}
