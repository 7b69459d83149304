package dev.weir.runner.state;

import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.sdk.annotations.Internal;

/**
 * What a keyed operator keeps in memory for one key of one task: the key object (the first one
 * seen with these encoded bytes), its state view, and how many processing-time timers it has
 * pending. A handle only: state and event-time timers live in the store, so operators keep these
 * in a bounded {@link KeyContexts} and rebuild one from the encoded key when needed.
 *
 * <p>Timers compare keys by their encoding ({@link #id()}), never by context identity, so two
 * contexts of one key (an evicted one still referenced by a processing-time timer, and a fresh
 * one) are interchangeable. Confined to the task's thread.
 */
@Internal
public final class KeyContext<K> {
  final K key;
  final ByteKey id;
  final StateInternals state;
  public int pendingTimers;

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

  /** Processing-time timers set through this context and not yet fired or deleted. */
  public int pendingTimers() {
    return pendingTimers;
  }
}
