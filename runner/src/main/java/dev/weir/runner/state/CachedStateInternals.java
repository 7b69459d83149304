package dev.weir.runner.state;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.StateKey;
import dev.weir.state.store.StoreIterator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.sdk.coders.BooleanCoder;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.InstantCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.CombiningState;
import org.apache.beam.sdk.state.MapState;
import org.apache.beam.sdk.state.MultimapState;
import org.apache.beam.sdk.state.OrderedListState;
import org.apache.beam.sdk.state.ReadableState;
import org.apache.beam.sdk.state.ReadableStates;
import org.apache.beam.sdk.state.SetState;
import org.apache.beam.sdk.state.State;
import org.apache.beam.sdk.state.StateContext;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.state.WatermarkHoldState;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.CombineWithContext.CombineFnWithContext;
import org.apache.beam.sdk.transforms.windowing.TimestampCombiner;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.util.CombineFnUtil;
import org.joda.time.Instant;

/**
 * Beam {@link StateInternals} of one key of one operator instance, over the container's
 * object-cached store ({@link ContainerState}).
 *
 * <h2>Cell layout</h2>
 *
 * A cell's store key is {@code operatorPrefix(4) | len(key) | keyBytes | len(ns) | ns | len(id) |
 * id | kind}, with {@code ns} the namespace's {@code stringKey()} and {@code id} the state id in
 * UTF-8, lengths as 4-byte ints (so no cell's base is a prefix of another's). {@code kind} is 0 for
 * the single cell of value, combining, watermark-hold and bag-length state, and 1 followed by a
 * suffix for the element cells of bags (an 8-byte sequence number), maps and sets (the encoded map
 * key / element).
 *
 * <p>The key part is built once per key (in the constructor, from the bytes the shuffle already
 * encoded); the namespace and cell parts, and the bound state object, once per (key, namespace,
 * state id) and then reused from a small per-key map, so a repeated state access on the hot path
 * allocates nothing.
 *
 * <h2>Bags: one cell per element</h2>
 *
 * {@code add} writes one new element cell and bumps the length cell: O(1), no rewrite of the bag.
 * {@code read} does point reads of the element cells (object-cache hits for recent elements, no
 * range scan, so no flush of dirty state) and returns a materialised list, because runners-core
 * clears a GroupByKey's bag right after handing its contents downstream. {@code clear} deletes
 * the cells point-wise (cached tombstones, written back with the next batch).
 *
 * <h2>Maps and sets</h2>
 *
 * Point operations are cell reads/writes; iteration is a prefix scan of the element cells, which
 * flushes the store's dirty entries first (see {@code ObjectCache}) and decodes keys with the
 * state's key coder. Iterables returned are materialised snapshots.
 *
 * <p>Values are cached by reference: state objects never mutate a value after putting it, except
 * combining accumulators, which are put again after every {@code addInput}.
 *
 * <p>Threading: confined to the owning task's container thread. Not supported yet:
 * {@link OrderedListState}, {@link MultimapState} (fail with {@link UnsupportedOperationException}).
 */
public final class CachedStateInternals implements StateInternals {
  private static final byte KIND_CELL = 0;
  private static final byte KIND_ELEMENT = 1;

  /** Stands in for a null bag element in the cache; written back as the element coder's null. */
  private static final Object NULL_ELEMENT = new Object();

  /** Encodes {@link #NULL_ELEMENT} as the element coder encodes null. */
  private static final class NullElementCoder<T> extends org.apache.beam.sdk.coders.CustomCoder<Object> {
    private final Coder<T> inner;

    NullElementCoder(Coder<T> inner) {
      this.inner = inner;
    }

    @Override
    public void encode(Object value, java.io.OutputStream out) throws java.io.IOException {
      inner.encode(null, out);
    }

    @Override
    public Object decode(java.io.InputStream in) throws java.io.IOException {
      inner.decode(in);
      return NULL_ELEMENT;
    }
  }

  private final Object key;
  private final CachedStore store;
  private final WatermarkHolds holds;
  private final byte[] keyPrefix;
  /** Per namespace, per state id: the cell base (everything before the kind byte). */
  private final Map<StateNamespace, Map<String, byte[]>> bases = new HashMap<>(4);
  /**
   * Per namespace, per state id: the state object last bound, reused so that repeated accesses
   * allocate nothing and runners-core's merging (which compares states with {@code equals}) sees
   * the same object. Cleared when it grows past {@value #MAX_CACHED_NAMESPACES} namespaces (state
   * objects are stateless views of cells, so re-binding is always safe; they also compare equal
   * by cell).
   */
  private final Map<StateNamespace, Map<String, State>> bound = new HashMap<>(4);
  private static final int MAX_CACHED_NAMESPACES = 64;

  /**
   * @param key the key object (returned by {@link #getKey()})
   * @param keyBytes the key encoded with the key coder; not modified
   * @param operatorPrefix the operator instance's prefix from {@link ContainerState#newOperatorPrefix()}
   * @param store the container's cached store
   * @param holds where watermark-hold changes are reported (the operator's)
   */
  public CachedStateInternals(Object key, byte[] keyBytes, byte[] operatorPrefix, CachedStore store,
      WatermarkHolds holds) {
    this.key = key;
    this.store = store;
    this.holds = holds;
    this.keyPrefix = new byte[operatorPrefix.length + 4 + keyBytes.length];
    System.arraycopy(operatorPrefix, 0, keyPrefix, 0, operatorPrefix.length);
    putInt(keyPrefix, operatorPrefix.length, keyBytes.length);
    System.arraycopy(keyBytes, 0, keyPrefix, operatorPrefix.length + 4, keyBytes.length);
  }

  @Override
  public Object getKey() {
    return key;
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T extends State> T state(StateNamespace namespace, StateTag<T> address, StateContext<?> c) {
    Map<String, State> byId = bound.get(namespace);
    if (byId != null) {
      State cached = byId.get(address.getId());
      if (cached != null) {
        return (T) cached;
      }
    }
    if (bound.size() >= MAX_CACHED_NAMESPACES) {
      bound.clear();
      bases.clear();
    }
    byte[] base = base(namespace, address.getId());
    T state = address.bind(new Binder(base, c));
    bound.computeIfAbsent(namespace, n -> new HashMap<>(4)).put(address.getId(), state);
    return state;
  }

  private byte[] base(StateNamespace namespace, String id) {
    Map<String, byte[]> byId = bases.get(namespace);
    if (byId == null) {
      byId = new HashMap<>(4);
      bases.put(namespace, byId);
    }
    byte[] base = byId.get(id);
    if (base == null) {
      byte[] ns = namespace.stringKey().getBytes(StandardCharsets.UTF_8);
      byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
      base = new byte[keyPrefix.length + 4 + ns.length + 4 + idBytes.length];
      int at = keyPrefix.length;
      System.arraycopy(keyPrefix, 0, base, 0, at);
      putInt(base, at, ns.length);
      System.arraycopy(ns, 0, base, at + 4, ns.length);
      at += 4 + ns.length;
      putInt(base, at, idBytes.length);
      System.arraycopy(idBytes, 0, base, at + 4, idBytes.length);
      byId.put(id, base);
    }
    return base;
  }

  /** Forgets the cached cell names of {@code namespace} (e.g. after its window was garbage-collected). */
  public void forgetNamespace(StateNamespace namespace) {
    bases.remove(namespace);
    bound.remove(namespace);
  }

  /** Base of the state classes: equal when they address the same cells of the same store. */
  private abstract static class Cells {
    abstract byte[] identity();

    @Override
    public final boolean equals(Object o) {
      return o != null && o.getClass() == getClass() && java.util.Arrays.equals(((Cells) o).identity(), identity());
    }

    @Override
    public final int hashCode() {
      return java.util.Arrays.hashCode(identity());
    }
  }

  /**
   * A readable state evaluated when read, not when created: Beam lets a DoFn take
   * {@code isEmpty()}/{@code get()} first and read it after further writes.
   */
  private static <T> ReadableState<T> lazy(java.util.function.Supplier<T> read) {
    return new ReadableState<T>() {
      @Override
      public T read() {
        return read.get();
      }

      @Override
      public ReadableState<T> readLater() {
        return this;
      }
    };
  }

  private static void putInt(byte[] target, int at, int value) {
    target[at] = (byte) (value >>> 24);
    target[at + 1] = (byte) (value >>> 16);
    target[at + 2] = (byte) (value >>> 8);
    target[at + 3] = (byte) value;
  }

  private StateKey cell(byte[] base) {
    byte[] k = new byte[base.length + 1];
    System.arraycopy(base, 0, k, 0, base.length);
    k[base.length] = KIND_CELL;
    return store.key(k);
  }

  private static byte[] elementPrefix(byte[] base) {
    byte[] k = new byte[base.length + 1];
    System.arraycopy(base, 0, k, 0, base.length);
    k[base.length] = KIND_ELEMENT;
    return k;
  }

  private StateKey element(byte[] elementPrefix, byte[] suffix) {
    byte[] k = new byte[elementPrefix.length + suffix.length];
    System.arraycopy(elementPrefix, 0, k, 0, elementPrefix.length);
    System.arraycopy(suffix, 0, k, elementPrefix.length, suffix.length);
    return store.key(k);
  }

  private StateKey sequenced(byte[] elementPrefix, long seq) {
    byte[] k = new byte[elementPrefix.length + 8];
    System.arraycopy(elementPrefix, 0, k, 0, elementPrefix.length);
    for (int i = 0; i < 8; i++) {
      k[elementPrefix.length + i] = (byte) (seq >>> (56 - 8 * i));
    }
    return store.key(k);
  }

  private static <T> byte[] encode(Coder<T> coder, T value) {
    try {
      return CoderUtils.encodeToByteArray(coder, value);
    } catch (CoderException e) {
      throw new IllegalStateException("cannot encode a state key with " + coder, e);
    }
  }

  private static <T> T decodeSuffix(Coder<T> coder, byte[] storeKey, int from) {
    try {
      byte[] suffix = java.util.Arrays.copyOfRange(storeKey, from, storeKey.length);
      return CoderUtils.decodeFromByteArray(coder, suffix);
    } catch (CoderException e) {
      throw new IllegalStateException("cannot decode a state key with " + coder, e);
    }
  }

  /** Binds state tags to cells under one base. Allocated per {@code state()} call (tiny). */
  private final class Binder implements StateTag.StateBinder {
    private final byte[] base;
    private final StateContext<?> context;

    Binder(byte[] base, StateContext<?> context) {
      this.base = base;
      this.context = context;
    }

    @Override
    public <T> ValueState<T> bindValue(StateTag<ValueState<T>> spec, Coder<T> coder) {
      return new Value<>(cell(base), coder);
    }

    @Override
    public <T> BagState<T> bindBag(StateTag<BagState<T>> spec, Coder<T> elemCoder) {
      return new Bag<>(cell(base), elementPrefix(base), elemCoder);
    }

    @Override
    public <T> SetState<T> bindSet(StateTag<SetState<T>> spec, Coder<T> elemCoder) {
      return new CachedSet<>(elementPrefix(base), elemCoder);
    }

    @Override
    public <K, V> MapState<K, V> bindMap(StateTag<MapState<K, V>> spec, Coder<K> mapKeyCoder,
        Coder<V> mapValueCoder) {
      return new CachedMap<>(elementPrefix(base), mapKeyCoder, mapValueCoder);
    }

    @Override
    public <K, V> MultimapState<K, V> bindMultimap(StateTag<MultimapState<K, V>> spec, Coder<K> keyCoder,
        Coder<V> valueCoder) {
      throw new UnsupportedOperationException("MultimapState is not supported by WeirRunner yet");
    }

    @Override
    public <T> OrderedListState<T> bindOrderedList(StateTag<OrderedListState<T>> spec, Coder<T> elemCoder) {
      throw new UnsupportedOperationException("OrderedListState is not supported by WeirRunner yet");
    }

    @Override
    public <InputT, AccumT, OutputT> CombiningState<InputT, AccumT, OutputT> bindCombiningValue(
        StateTag<CombiningState<InputT, AccumT, OutputT>> spec, Coder<AccumT> accumCoder,
        CombineFn<InputT, AccumT, OutputT> combineFn) {
      return new Combining<>(cell(base), accumCoder, combineFn);
    }

    @Override
    public <InputT, AccumT, OutputT> CombiningState<InputT, AccumT, OutputT> bindCombiningValueWithContext(
        StateTag<CombiningState<InputT, AccumT, OutputT>> spec, Coder<AccumT> accumCoder,
        CombineFnWithContext<InputT, AccumT, OutputT> combineFn) {
      return new Combining<>(cell(base), accumCoder, CombineFnUtil.bindContext(combineFn, context));
    }

    @Override
    public WatermarkHoldState bindWatermark(StateTag<WatermarkHoldState> spec, TimestampCombiner combiner) {
      return new Hold(cell(base), combiner);
    }
  }

  private final class Value<T> extends Cells implements ValueState<T> {
    private final StateKey cell;

    @Override
    byte[] identity() {
      return cell.bytes();
    }
    private final Coder<T> coder;

    Value(StateKey cell, Coder<T> coder) {
      this.cell = cell;
      this.coder = coder;
    }

    @Override
    public void write(T input) {
      if (input == null) {
        store.delete(cell); // Beam allows null for nullable coders; absent reads back as null too
      } else {
        store.put(cell, input, coder);
      }
    }

    @Override
    public T read() {
      return store.get(cell, coder);
    }

    @Override
    public ValueState<T> readLater() {
      return this;
    }

    @Override
    public void clear() {
      store.delete(cell);
    }
  }

  private final class Bag<T> extends Cells implements BagState<T> {
    private final StateKey lengthCell;

    @Override
    byte[] identity() {
      return lengthCell.bytes();
    }
    private final byte[] elements;
    private final Coder<T> coder;

    Bag(StateKey lengthCell, byte[] elements, Coder<T> coder) {
      this.lengthCell = lengthCell;
      this.elements = elements;
      this.coder = coder;
    }

    private long length() {
      Long n = store.get(lengthCell, VarLongCoder.of());
      return n == null ? 0 : n;
    }

    @Override
    public void add(T value) {
      long n = length();
      if (value == null) { // e.g. VoidCoder values: the cache holds no nulls, so a marker stands in
        store.put(sequenced(elements, n), NULL_ELEMENT, new NullElementCoder<>(coder));
      } else {
        store.put(sequenced(elements, n), value, coder);
      }
      store.put(lengthCell, n + 1, VarLongCoder.of());
    }

    @Override
    public ReadableState<Boolean> isEmpty() {
      return lazy(() -> length() == 0);
    }

    @Override
    @SuppressWarnings("unchecked")
    public Iterable<T> read() {
      long n = length();
      if (n == 0) {
        return List.of();
      }
      List<T> result = new ArrayList<>((int) Math.min(n, Integer.MAX_VALUE));
      for (long i = 0; i < n; i++) {
        Object value = store.get(sequenced(elements, i), coder);
        result.add(value == NULL_ELEMENT ? null : (T) value);
      }
      return result;
    }

    @Override
    public BagState<T> readLater() {
      return this;
    }

    @Override
    public void clear() {
      long n = length();
      for (long i = 0; i < n; i++) {
        store.delete(sequenced(elements, i));
      }
      if (n > 0) {
        store.delete(lengthCell);
      }
    }
  }

  private final class Combining<InputT, AccumT, OutputT> extends Cells
      implements CombiningState<InputT, AccumT, OutputT> {
    private final StateKey cell;

    @Override
    byte[] identity() {
      return cell.bytes();
    }
    private final Coder<AccumT> coder;
    private final CombineFn<InputT, AccumT, OutputT> fn;

    Combining(StateKey cell, Coder<AccumT> coder, CombineFn<InputT, AccumT, OutputT> fn) {
      this.cell = cell;
      this.coder = coder;
      this.fn = fn;
    }

    @Override
    public AccumT getAccum() {
      AccumT accum = store.get(cell, coder);
      return accum == null ? fn.createAccumulator() : accum;
    }

    @Override
    public void add(InputT value) {
      store.put(cell, fn.addInput(getAccum(), value), coder);
    }

    @Override
    public void addAccum(AccumT accum) {
      AccumT current = store.get(cell, coder);
      store.put(cell, current == null ? accum : fn.mergeAccumulators(List.of(current, accum)), coder);
    }

    @Override
    public AccumT mergeAccumulators(Iterable<AccumT> accumulators) {
      return fn.mergeAccumulators(accumulators);
    }

    @Override
    public OutputT read() {
      return fn.extractOutput(getAccum());
    }

    @Override
    public ReadableState<Boolean> isEmpty() {
      return lazy(() -> store.get(cell, coder) == null);
    }

    @Override
    public CombiningState<InputT, AccumT, OutputT> readLater() {
      return this;
    }

    @Override
    public void clear() {
      store.delete(cell);
    }
  }

  private final class Hold extends Cells implements WatermarkHoldState {
    private final StateKey cell;

    @Override
    byte[] identity() {
      return cell.bytes();
    }
    private final TimestampCombiner combiner;

    Hold(StateKey cell, TimestampCombiner combiner) {
      this.cell = cell;
      this.combiner = combiner;
    }

    @Override
    public TimestampCombiner getTimestampCombiner() {
      return combiner;
    }

    @Override
    public void add(Instant value) {
      Instant old = store.get(cell, InstantCoder.of());
      Instant next = old == null ? value : combiner.combine(old, value);
      if (!next.equals(old)) {
        holds.replace(old, next);
        store.put(cell, next, InstantCoder.of());
      }
    }

    @Override
    public ReadableState<Boolean> isEmpty() {
      return lazy(() -> store.get(cell, InstantCoder.of()) == null);
    }

    @Override
    public Instant read() {
      return store.get(cell, InstantCoder.of());
    }

    @Override
    public WatermarkHoldState readLater() {
      return this;
    }

    @Override
    public void clear() {
      Instant old = store.get(cell, InstantCoder.of());
      if (old != null) {
        holds.replace(old, null);
        store.delete(cell);
      }
    }
  }

  private final class CachedMap<K, V> extends Cells implements MapState<K, V> {
    private final byte[] elements;

    @Override
    byte[] identity() {
      return elements;
    }
    private final Coder<K> keyCoder;
    private final Coder<V> valueCoder;

    CachedMap(byte[] elements, Coder<K> keyCoder, Coder<V> valueCoder) {
      this.elements = elements;
      this.keyCoder = keyCoder;
      this.valueCoder = valueCoder;
    }

    private StateKey entry(K k) {
      return element(elements, encode(keyCoder, k));
    }

    @Override
    public void put(K k, V v) {
      store.put(entry(k), v, valueCoder);
    }

    @Override
    public ReadableState<V> putIfAbsent(K k, V v) {
      StateKey e = entry(k);
      V old = store.get(e, valueCoder);
      if (old == null) {
        store.put(e, v, valueCoder);
      }
      return ReadableStates.immediate(old);
    }

    @Override
    public ReadableState<V> computeIfAbsent(K k, Function<? super K, ? extends V> f) {
      StateKey e = entry(k);
      V old = store.get(e, valueCoder);
      if (old == null) {
        store.put(e, f.apply(k), valueCoder);
      }
      return ReadableStates.immediate(old);
    }

    @Override
    public void remove(K k) {
      store.delete(entry(k));
    }

    @Override
    public ReadableState<V> get(K k) {
      StateKey e = entry(k);
      return lazy(() -> store.get(e, valueCoder));
    }

    @Override
    public ReadableState<V> getOrDefault(K k, V defaultValue) {
      StateKey e = entry(k);
      return lazy(() -> {
        V v = store.get(e, valueCoder);
        return v == null ? defaultValue : v;
      });
    }

    private List<Map.Entry<K, V>> scan() {
      List<Map.Entry<K, V>> result = new ArrayList<>();
      try (StoreIterator<byte[], V> it = store.prefix(elements, valueCoder)) {
        while (it.hasNext()) {
          org.apache.samza.storage.kv.Entry<byte[], V> e = it.next();
          result.add(Map.entry(decodeSuffix(keyCoder, e.getKey(), elements.length), e.getValue()));
        }
      }
      return result;
    }

    @Override
    public ReadableState<Iterable<K>> keys() {
      return lazy(() -> scan().stream().map(Map.Entry::getKey).toList());
    }

    @Override
    public ReadableState<Iterable<V>> values() {
      return lazy(() -> scan().stream().map(Map.Entry::getValue).toList());
    }

    @Override
    public ReadableState<Iterable<Map.Entry<K, V>>> entries() {
      return lazy(this::scan);
    }

    @Override
    public ReadableState<Boolean> isEmpty() {
      return lazy(() -> {
        try (StoreIterator<byte[], V> it = store.prefix(elements, valueCoder)) {
          return !it.hasNext();
        }
      });
    }

    @Override
    public void clear() {
      store.deletePrefix(elements);
    }
  }

  private final class CachedSet<T> extends Cells implements SetState<T> {
    private final byte[] elements;

    @Override
    byte[] identity() {
      return elements;
    }
    private final Coder<T> coder;

    CachedSet(byte[] elements, Coder<T> coder) {
      this.elements = elements;
      this.coder = coder;
    }

    private StateKey entry(T t) {
      return element(elements, encode(coder, t));
    }

    @Override
    public ReadableState<Boolean> contains(T t) {
      StateKey e = entry(t);
      return lazy(() -> store.get(e, BooleanCoder.of()) != null);
    }

    @Override
    public ReadableState<Boolean> addIfAbsent(T t) {
      StateKey e = entry(t);
      boolean absent = store.get(e, BooleanCoder.of()) == null;
      if (absent) {
        store.put(e, Boolean.TRUE, BooleanCoder.of());
      }
      return ReadableStates.immediate(absent);
    }

    @Override
    public void remove(T t) {
      store.delete(entry(t));
    }

    @Override
    public void add(T t) {
      store.put(entry(t), Boolean.TRUE, BooleanCoder.of());
    }

    @Override
    public ReadableState<Boolean> isEmpty() {
      return lazy(() -> {
        try (StoreIterator<byte[], Boolean> it = store.prefix(elements, BooleanCoder.of())) {
          return !it.hasNext();
        }
      });
    }

    @Override
    public Iterable<T> read() {
      List<T> result = new ArrayList<>();
      try (StoreIterator<byte[], Boolean> it = store.prefix(elements, BooleanCoder.of())) {
        while (it.hasNext()) {
          result.add(decodeSuffix(coder, it.next().getKey(), elements.length));
        }
      }
      return result;
    }

    @Override
    public SetState<T> readLater() {
      return this;
    }

    @Override
    public void clear() {
      store.deletePrefix(elements);
    }
  }
}
