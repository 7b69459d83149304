package dev.weir.runner.operators;

import dev.weir.runner.state.CachedStateInternals.LoadableValue;
import dev.weir.state.cache.CachedStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.state.ValueState;

/**
 * The value states of one call, taken on the container thread as the call is handed to a worker,
 * so the DoFn reads them on the worker without a round trip ({@link WorkerStateInternals}).
 *
 * <h2>Why it is current</h2>
 *
 * A call is handed to a worker only when its key has nothing in flight, and until it completes
 * nothing else runs for that key: the key's later elements and timers wait behind it, so no one but
 * the call itself changes the key's state in between (eviction and write-back move a value, they
 * never change it). The call's own writes update its entry here as they are posted, so it reads
 * what it wrote.
 *
 * <h2>What is taken</h2>
 *
 * For each value state the DoFn declares and each window of the element: the cached value (a hit,
 * or "absent" where the filter of stored keys rules the cell out, or a read on the container
 * thread where the store cannot serve it elsewhere), or the miss itself
 * ({@link CachedStore.OffOwnerLoad}), which the worker loads from RocksDB at the first read and
 * posts back to be cached. A state the call never reads costs a cache lookup.
 *
 * <p>Threading: filled on the container thread before the hand-off (which publishes it); read and
 * updated by the one worker running the call; refilled at the next hand-off. One per DoFn instance.
 */
@Internal
public final class PrefetchedValues {
  /** One value state of the call: its namespace and id, and its value or miss. */
  static final class Entry {
    final StateNamespace namespace;
    final String id;
    /** The value (null: absent), or the {@link CachedStore.OffOwnerLoad} not yet loaded. */
    Object value;

    Entry(StateNamespace namespace, String id, Object value) {
      this.namespace = namespace;
      this.id = id;
      this.value = value;
    }
  }

  private final List<Entry> entries = new ArrayList<>(4);

  /** Forgets the previous call's values (container thread, before a hand-off). */
  public void clear() {
    entries.clear();
  }

  /**
   * Takes the value of {@code tag} in {@code namespace} from {@code state}, the call's key's state
   * on the container thread.
   */
  public void take(StateInternals state, StateNamespace namespace, StateTag<? extends ValueState<?>> tag) {
    ValueState<?> value = state.state(namespace, tag);
    entries.add(new Entry(namespace, tag.getId(),
        value instanceof LoadableValue<?> loadable ? loadable.readOrMiss() : value.read()));
  }

  /** The entry of {@code id} in {@code namespace}, or null if it was not taken (worker). */
  Entry find(StateNamespace namespace, String id) {
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      if (e.id.equals(id) && Objects.equals(e.namespace, namespace)) {
        return e;
      }
    }
    return null;
  }
}
