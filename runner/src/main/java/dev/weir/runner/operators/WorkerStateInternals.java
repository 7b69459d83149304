package dev.weir.runner.operators;

import dev.weir.runner.state.CachedStateInternals.LoadableValue;
import dev.weir.state.cache.CachedStore;
import java.util.function.Supplier;
import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.CombiningState;
import org.apache.beam.sdk.state.MapState;
import org.apache.beam.sdk.state.MultimapState;
import org.apache.beam.sdk.state.OrderedListState;
import org.apache.beam.sdk.state.SetState;
import org.apache.beam.sdk.state.State;
import org.apache.beam.sdk.state.StateBinder;
import org.apache.beam.sdk.state.StateContext;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.state.WatermarkHoldState;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.CombineWithContext.CombineFnWithContext;
import org.apache.beam.sdk.transforms.windowing.TimestampCombiner;

/**
 * The {@link StateInternals} a DoFn instance running on a worker thread sees: state objects whose
 * calls run on the container thread against the state of the key the instance's call is for
 * ({@link OwnerCalls}), at as few mailbox round trips as Beam's semantics allow.
 *
 * <h2>Round trips</h2>
 *
 * <ul>
 *   <li><b>Binding</b> ({@code state(namespace, tag)}, once per state parameter per call): none.
 *       The state object is made here, of the interface the tag's spec binds to (a value, bag,
 *       set, map, multimap, ordered list, combining or watermark-hold state), and finds the
 *       owner's state object on the container thread at its first call there.
 *   <li><b>Writes</b> (every method returning nothing: {@code write}, {@code add}, {@code clear},
 *       {@code put}, {@code remove}, ...): none; posted, and run in order before anything the
 *       worker asks later ({@link OwnerCalls#post}).
 *   <li><b>Value state reads</b>: none for the value states the DoFn declares, in the element's
 *       windows: taken on the container thread as the element is handed to the worker
 *       ({@link PrefetchedValues}). A value that missed the object cache, where the store can serve
 *       it off the container thread (RocksDB, the key's value not staged since the last commit),
 *       is taken as the miss; the worker reads RocksDB and decodes the value itself at the first
 *       read, and posts it to be cached. So RocksDB reads of different keys run on the workers in
 *       parallel (the gain Samza's asynchronous-processing study measured on a store where every
 *       read missed), while the object cache keeps its single owner. Other value states (a timer
 *       callback's, another namespace's) cost one round trip per read, with the same miss
 *       hand-back.
 *   <li><b>Other reads</b> (bags, maps, sets, combining states, holds): one round trip each.
 * </ul>
 *
 * On the container thread itself (a timer fired inline) every call goes straight to the owner's
 * state.
 *
 * <p>Threading: one worker at a time per instance (the one running its call), or the container
 * thread.
 */
@Internal
public final class WorkerStateInternals implements StateInternals {
  private final OwnerCalls owner;
  private final Supplier<StateInternals> target;
  private final Supplier<PrefetchedValues> prefetched;

  /**
   * @param owner the container thread's calls
   * @param target evaluated on the container thread: the state of the key of the call running now
   * @param prefetched evaluated on the worker: the value states taken for the call running now, or
   *     null if none were
   */
  public WorkerStateInternals(OwnerCalls owner, Supplier<StateInternals> target,
      Supplier<PrefetchedValues> prefetched) {
    this.owner = owner;
    this.target = target;
    this.prefetched = prefetched;
  }

  @Override
  public Object getKey() {
    return owner.ask(() -> target.get().getKey());
  }

  @Override
  public <T extends State> T state(StateNamespace namespace, StateTag<T> address, StateContext<?> c) {
    if (owner.onContainerThread()) {
      return target.get().state(namespace, address, c);
    }
    OwnerState<T> onOwner = new OwnerState<>(() -> target.get().state(namespace, address, c));
    PrefetchedValues taken = prefetched.get();
    return address.getSpec().bind(address.getId(),
        new ProxyBinder(onOwner, taken == null ? null : taken.find(namespace, address.getId())));
  }

  /**
   * The owner's state object behind one bound state, found at its first use on the container
   * thread and kept (it is the same object for the rest of the call). Container thread only.
   */
  private static final class OwnerState<T> implements Supplier<T> {
    private final Supplier<T> find;
    private T found;

    OwnerState(Supplier<T> find) {
      this.find = find;
    }

    @Override
    public T get() {
      if (found == null) {
        found = find.get();
      }
      return found;
    }
  }

  /** Binds each state kind to a worker-side state object of its interface over {@link #onOwner}. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private final class ProxyBinder implements StateBinder {
    private final OwnerState<?> onOwner;
    /** The value taken for this state at the hand-off, if it is a value state that was. */
    private final PrefetchedValues.Entry taken;

    ProxyBinder(OwnerState<?> onOwner, PrefetchedValues.Entry taken) {
      this.onOwner = onOwner;
      this.taken = taken;
    }

    @Override
    public <T> ValueState<T> bindValue(String id, StateSpec<ValueState<T>> spec, Coder<T> coder) {
      return new WorkerValue<>(owner, (OwnerState<ValueState<T>>) onOwner, taken);
    }

    @Override
    public <T> BagState<T> bindBag(String id, StateSpec<BagState<T>> spec, Coder<T> elemCoder) {
      return owner.onOwner(BagState.class, onOwner);
    }

    @Override
    public <T> SetState<T> bindSet(String id, StateSpec<SetState<T>> spec, Coder<T> elemCoder) {
      return owner.onOwner(SetState.class, onOwner);
    }

    @Override
    public <K, V> MapState<K, V> bindMap(String id, StateSpec<MapState<K, V>> spec, Coder<K> keyCoder,
        Coder<V> valueCoder) {
      return owner.onOwner(MapState.class, onOwner);
    }

    @Override
    public <T> OrderedListState<T> bindOrderedList(String id, StateSpec<OrderedListState<T>> spec,
        Coder<T> elemCoder) {
      return owner.onOwner(OrderedListState.class, onOwner);
    }

    @Override
    public <K, V> MultimapState<K, V> bindMultimap(String id, StateSpec<MultimapState<K, V>> spec,
        Coder<K> keyCoder, Coder<V> valueCoder) {
      return owner.onOwner(MultimapState.class, onOwner);
    }

    @Override
    public <InputT, AccumT, OutputT> CombiningState<InputT, AccumT, OutputT> bindCombining(String id,
        StateSpec<CombiningState<InputT, AccumT, OutputT>> spec, Coder<AccumT> accumCoder,
        CombineFn<InputT, AccumT, OutputT> combineFn) {
      return owner.onOwner(CombiningState.class, onOwner);
    }

    @Override
    public <InputT, AccumT, OutputT> CombiningState<InputT, AccumT, OutputT> bindCombiningWithContext(String id,
        StateSpec<CombiningState<InputT, AccumT, OutputT>> spec, Coder<AccumT> accumCoder,
        CombineFnWithContext<InputT, AccumT, OutputT> combineFn) {
      return owner.onOwner(CombiningState.class, onOwner);
    }

    @Override
    public WatermarkHoldState bindWatermark(String id, StateSpec<WatermarkHoldState> spec,
        TimestampCombiner timestampCombiner) {
      return owner.onOwner(WatermarkHoldState.class, onOwner);
    }
  }

  /**
   * A {@link ValueState} on a worker: reads answer from the value taken at the hand-off
   * ({@link PrefetchedValues}) where there is one, else ask the container thread, which answers
   * with the value or, on a miss a worker may load, with the miss
   * ({@link LoadableValue#readOrMiss}); a miss is loaded here and posted back to be cached.
   * Writes and clears are posted (and kept in the taken entry, so a later read sees them).
   */
  private static final class WorkerValue<T> implements ValueState<T> {
    private final OwnerCalls owner;
    private final OwnerState<ValueState<T>> onOwner;
    private final PrefetchedValues.Entry taken;

    WorkerValue(OwnerCalls owner, OwnerState<ValueState<T>> onOwner, PrefetchedValues.Entry taken) {
      this.owner = owner;
      this.onOwner = onOwner;
      this.taken = taken;
    }

    @Override
    @SuppressWarnings("unchecked")
    public T read() {
      if (owner.onContainerThread()) {
        return onOwner.get().read();
      }
      if (taken != null) {
        if (taken.value instanceof CachedStore.OffOwnerLoad<?> miss) {
          taken.value = loadAndInstall((CachedStore.OffOwnerLoad<T>) miss);
        }
        return (T) taken.value;
      }
      Object answer = owner.ask(() -> {
        ValueState<T> state = onOwner.get();
        return state instanceof LoadableValue<T> loadable ? loadable.readOrMiss() : state.read();
      });
      if (answer instanceof CachedStore.OffOwnerLoad<?> miss) {
        return loadAndInstall((CachedStore.OffOwnerLoad<T>) miss);
      }
      return (T) answer;
    }

    /** RocksDB's get and the decode, here on the worker; the install is posted before any write this call makes. */
    private T loadAndInstall(CachedStore.OffOwnerLoad<T> miss) {
      T value = miss.load();
      owner.post(() -> miss.install(value));
      return value;
    }

    @Override
    public void write(T input) {
      if (taken != null && !owner.onContainerThread()) {
        taken.value = input;
      }
      owner.post(() -> onOwner.get().write(input));
    }

    @Override
    public void clear() {
      if (taken != null && !owner.onContainerThread()) {
        taken.value = null;
      }
      owner.post(() -> onOwner.get().clear());
    }

    @Override
    public ValueState<T> readLater() {
      return this;
    }

    @Override
    public String toString() {
      return "ValueState of the container thread";
    }
  }
}
