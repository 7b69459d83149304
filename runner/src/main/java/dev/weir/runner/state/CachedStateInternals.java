package dev.weir.runner.state;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.StateKey;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.function.Consumer;
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
import org.apache.beam.sdk.state.StateContext;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.state.WatermarkHoldState;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.CombineWithContext.CombineFnWithContext;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.TimestampCombiner;
import org.apache.beam.sdk.util.CombineFnUtil;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Instant;

/**
 * Beam {@link StateInternals} of one key of one operator instance, over the container's
 * object-cached store ({@link ContainerState}): binds each state tag to a state object over the
 * tag's cells.
 *
 * <h2>Cells</h2>
 *
 * Each (key, namespace, state id) owns a single cell and a range of element cells, laid out by
 * {@link CellLayout} (which documents every byte). The key prefix is built once per key (in the
 * constructor, from the bytes the shuffle already encoded); a namespace's encoded name once per
 * namespace for all keys of the operator ({@link NamespaceNames}); the base and the bound state
 * object once per (key, namespace, state id), then reused from
 * a small per-key map found by window ({@link NamespaceMap}), so a repeated state access on the hot
 * path allocates nothing.
 *
 * <h2>State kinds</h2>
 *
 * One file each, every one documenting what it stores, its cells, how it reads and what happens
 * to reads it handed out when it is written: {@link CachedValue}, {@link CachedCombining},
 * {@link CachedWatermarkHold} (single cell); {@link CachedBag} (point-read chunks of elements,
 * materialised reads); {@link CachedMap}, {@link CachedSet}, {@link CachedOrderedList},
 * {@link CachedMultimap} (element cells read by streamed range scans, {@link StreamedRead}).
 *
 * <p>Threading: confined to the owning task's container thread, and so are the streamed
 * iterables its states return: they are copied when the DoFn outputs them or they leave the
 * thread ({@link #detachReads}), and iterating one elsewhere fails with an
 * {@link IllegalStateException} rather than reading another thread's store.
 */
@Internal
public final class CachedStateInternals implements StateInternals {
  /** Cells read per page of a streamed read ({@link StreamedRead#PAGE_CELLS}). */
  static final int PAGE_CELLS = StreamedRead.PAGE_CELLS;

  /**
   * The {@link OrderedListState} this class binds, with a streamed take-out of its earliest
   * elements for runner-internal buffers (e.g. {@code @RequiresTimeSortedInput}): unlike
   * {@code readRange} followed by {@code clearRange}, nothing is ever copied.
   *
   * @param <T> the element type
   */
  public interface DrainableOrderedList<T> extends OrderedListState<T> {
    /**
     * Hands every element with a timestamp before {@code limit} to {@code consumer}, in timestamp
     * order (ties in insertion order), a page of at most 256 cells at a time, and removes them.
     * The consumer may write other state but must not write to this list.
     *
     * @param limit exclusive upper bound of the timestamps taken out
     * @return the timestamp of the earliest element left, or null if the list is now empty
     */
    Instant drainBefore(Instant limit, Consumer<TimestampedValue<T>> consumer);
  }

  /**
   * The {@link ValueState} this class binds, whose read a worker thread may load itself when it
   * misses the object cache (Weir's concurrent {@code @ProcessElement}).
   *
   * @param <T> the value's type
   */
  public interface LoadableValue<T> extends ValueState<T> {
    /**
     * On the container thread: the value, as {@link #read()} gives it, or, for a miss a worker may
     * load from RocksDB, that miss ({@link CachedStore#getOrOffOwnerLoad}).
     *
     * @return the value (null: none) or a {@link CachedStore.OffOwnerLoad}
     */
    Object readOrMiss();
  }

  private final Object key;
  private final CachedStore store;
  private final WatermarkHolds holds;
  private final StreamedRead reads;
  /** {@link CellLayout#keyPrefix}: the start of every cell key of this key. */
  private final byte[] keyPrefix;
  /**
   * Per namespace: its encoded name, and per state id the state object last bound (over its cell
   * base, {@link CellLayout#base}), reused so that repeated accesses allocate nothing and
   * runners-core's merging (which compares states with {@code equals}) sees the same object.
   * Window namespaces are found by their window ({@link NamespaceMap}). Cleared when it grows past
   * {@value #MAX_CACHED_NAMESPACES} namespaces (state objects are stateless views of cells, so
   * re-binding is always safe; they also compare equal by cell).
   */
  private final NamespaceMap<Slot> slots;
  private static final int MAX_CACHED_NAMESPACES = 64;
  /** The operator's encoded namespace names, shared by its keys. */
  private final NamespaceNames names;
  /** The operator's wrappers of its state coders, shared by its keys. */
  private final StateCoders coders;

  /** One namespace's encoded name and bound states by state id. */
  private static final class Slot {
    final byte[] namespace;
    final HashMap<String, State> bound = new HashMap<>(4);

    Slot(byte[] namespace) {
      this.namespace = namespace;
    }
  }

  /**
   * @param key the key object (returned by {@link #getKey()})
   * @param keyBytes the key encoded with the key coder; not modified
   * @param operatorId the operator's 4-byte state id ({@link ContainerState#operatorId}, space
   *     {@code "state"})
   * @param store the container's cached store
   * @param holds where watermark-hold changes are reported (the operator's)
   * @param windowCoder the coder of the operator's windows, by which window namespaces are found
   *     ({@link NamespaceMap}); null to find every namespace by itself
   */
  public CachedStateInternals(Object key, byte[] keyBytes, byte[] operatorId, CachedStore store,
      WatermarkHolds holds, Coder<? extends BoundedWindow> windowCoder) {
    this(key, keyBytes, operatorId, store, holds, windowCoder, new NamespaceNames(windowCoder), new StateCoders());
  }

  /**
   * As {@link #CachedStateInternals(Object, byte[], byte[], CachedStore, WatermarkHolds, Coder)},
   * with the encoded namespace names and the state coders' wrappers shared by all keys of the operator.
   *
   * @param names the operator's namespace names, built with the same {@code windowCoder}; confined
   *     to the same thread
   * @param coders the operator's wrappers of its state coders; confined to the same thread
   */
  public CachedStateInternals(Object key, byte[] keyBytes, byte[] operatorId, CachedStore store,
      WatermarkHolds holds, Coder<? extends BoundedWindow> windowCoder, NamespaceNames names, StateCoders coders) {
    this.names = names;
    this.coders = coders;
    this.slots = new NamespaceMap<>(windowCoder);
    this.key = key;
    this.store = store;
    this.holds = holds;
    this.reads = new StreamedRead(store);
    this.keyPrefix = CellLayout.keyPrefix(operatorId, keyBytes);
  }

  @Override
  public Object getKey() {
    return key;
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T extends State> T state(StateNamespace namespace, StateTag<T> address, StateContext<?> c) {
    Slot slot = slots.get(namespace);
    if (slot != null) {
      State cached = slot.bound.get(address.getId());
      if (cached != null) {
        return (T) cached;
      }
    } else {
      if (slots.size() >= MAX_CACHED_NAMESPACES) {
        slots.clear();
      }
      slot = new Slot(names.utf8(namespace));
      slots.put(namespace, slot);
    }
    String id = address.getId();
    byte[] base = CellLayout.base(keyPrefix, slot.namespace, id.getBytes(StandardCharsets.UTF_8));
    T state = address.bind(new Binder(base, c));
    slot.bound.put(id, state);
    return state;
  }

  /** Forgets the cached cell names of {@code namespace} (e.g. after its window was garbage-collected). */
  void forgetNamespace(StateNamespace namespace) {
    slots.remove(namespace);
  }

  /**
   * Makes the streamed state reads in an element's value safe to hand on: a read larger than one
   * page found as the value itself or as a {@code KV}'s key or value is copied in full now. The
   * stateful ParDo calls this on every output of its DoFn (downstream operators may keep the value
   * in their own state, whose write-back would otherwise read the store while flushing it) and the
   * executor again before an element leaves its container thread (in-process streams pass
   * elements by reference); other values cost two type checks. Only from the thread that made the
   * read. Reads nested deeper are caught by the read's own thread check instead.
   *
   * @param value an element's value, any type, may be null
   */
  public static void detachReads(Object value) {
    StreamedRead.detachReads(value);
  }

  /** Binds state tags to the cells under one base. Allocated per first {@code state()} call of a tag. */
  private final class Binder implements StateTag.StateBinder {
    private final byte[] base;
    private final StateContext<?> context;

    Binder(byte[] base, StateContext<?> context) {
      this.base = base;
      this.context = context;
    }

    private StateKey cell() {
      return store.key(CellLayout.cell(base));
    }

    private byte[] elements() {
      return CellLayout.elements(base);
    }

    @Override
    public <T> ValueState<T> bindValue(StateTag<ValueState<T>> spec, Coder<T> coder) {
      return new CachedValue<>(store, cell(), coder);
    }

    @Override
    public <T> BagState<T> bindBag(StateTag<BagState<T>> spec, Coder<T> elemCoder) {
      return new CachedBag<>(store, cell(), elements(), elemCoder, coders.chunk(elemCoder));
    }

    @Override
    public <T> SetState<T> bindSet(StateTag<SetState<T>> spec, Coder<T> elemCoder) {
      return new CachedSet<>(reads, elements(), elemCoder);
    }

    @Override
    public <K, V> MapState<K, V> bindMap(StateTag<MapState<K, V>> spec, Coder<K> mapKeyCoder,
        Coder<V> mapValueCoder) {
      return new CachedMap<>(reads, elements(), mapKeyCoder, mapValueCoder);
    }

    @Override
    public <K, V> MultimapState<K, V> bindMultimap(StateTag<MultimapState<K, V>> spec, Coder<K> keyCoder,
        Coder<V> valueCoder) {
      return new CachedMultimap<>(reads, cell(), elements(), keyCoder, valueCoder, coders.nullElement(valueCoder));
    }

    @Override
    public <T> OrderedListState<T> bindOrderedList(StateTag<OrderedListState<T>> spec, Coder<T> elemCoder) {
      return new CachedOrderedList<>(reads, cell(), elements(), elemCoder, coders.nullElement(elemCoder));
    }

    @Override
    public <InputT, AccumT, OutputT> CombiningState<InputT, AccumT, OutputT> bindCombiningValue(
        StateTag<CombiningState<InputT, AccumT, OutputT>> spec, Coder<AccumT> accumCoder,
        CombineFn<InputT, AccumT, OutputT> combineFn) {
      return new CachedCombining<>(store, cell(), accumCoder, coders.held(accumCoder), combineFn);
    }

    @Override
    public <InputT, AccumT, OutputT> CombiningState<InputT, AccumT, OutputT> bindCombiningValueWithContext(
        StateTag<CombiningState<InputT, AccumT, OutputT>> spec, Coder<AccumT> accumCoder,
        CombineFnWithContext<InputT, AccumT, OutputT> combineFn) {
      return new CachedCombining<>(store, cell(), accumCoder, coders.held(accumCoder),
          CombineFnUtil.bindContext(combineFn, context));
    }

    @Override
    public WatermarkHoldState bindWatermark(StateTag<WatermarkHoldState> spec, TimestampCombiner combiner) {
      return new CachedWatermarkHold(store, store.key(CellLayout.holdCell(base)), holds, combiner);
    }
  }
}
