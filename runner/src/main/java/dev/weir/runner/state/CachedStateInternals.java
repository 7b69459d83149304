package dev.weir.runner.state;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.StateKey;
import dev.weir.state.store.StoreIterator;
import java.lang.ref.WeakReference;
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
import org.apache.beam.sdk.values.TimestampedValue;
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
 * state's key coder, streamed a page at a time like ordered lists and multimaps (below).
 *
 * <h2>Ordered lists and multimaps: streamed snapshot reads</h2>
 *
 * An {@link OrderedListState} keeps one cell per element under {@code ts | seq} (timestamp
 * encoded order-preserving, then a per-list sequence number for ties), a {@link MultimapState} one
 * cell per pair under {@code len(k) | k | seq}; each has a counter cell for its sequence. Their
 * reads ({@code read}, {@code readRange}, {@code get}, {@code keys}, {@code entries}) are range
 * scans read a page of {@value #PAGE_CELLS} cells at a time: a result that fits in one page is
 * returned as a list; a larger one is a view that streams the remaining pages from the store
 * whenever it is iterated, so a list or multimap far larger than memory is never copied to be
 * read. Beam requires a result not to change with later writes: before any write to a list or
 * multimap, outstanding views over the written range are copied in full. Views are held weakly,
 * so a dropped one is skipped once the garbage collector has cleared it; until then it is copied
 * too. Reading more than a page of a range and then writing into it (e.g. read, then clear) can
 * therefore cost one copy of the range.
 *
 * <p>Values are cached by reference: state objects never mutate a value after putting it, except
 * combining accumulators, which are put again after every {@code addInput}.
 *
 * <p>Threading: confined to the owning task's container thread, and so are the streamed
 * iterables its states return: they are copied when the DoFn outputs them or they leave the
 * thread ({@link #detachReads}), and iterating one elsewhere fails with an
 * {@link IllegalStateException} rather than reading another thread's store.
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
     * order (ties in insertion order), a page of at most {@link #PAGE_CELLS} at a time, and removes
     * them. The consumer may write other state but must not write to this list.
     *
     * @param limit exclusive upper bound of the timestamps taken out
     * @return the timestamp of the earliest element left, or null if the list is now empty
     */
    Instant drainBefore(Instant limit, java.util.function.Consumer<TimestampedValue<T>> consumer);
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
      return new CachedMultimap<>(cell(base), elementPrefix(base), keyCoder, valueCoder);
    }

    @Override
    public <T> OrderedListState<T> bindOrderedList(StateTag<OrderedListState<T>> spec, Coder<T> elemCoder) {
      return new OrderedList<>(cell(base), elementPrefix(base), elemCoder);
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
    private final byte[] elementsEnd;

    @Override
    byte[] identity() {
      return elements;
    }
    private final Coder<K> keyCoder;
    private final Coder<V> valueCoder;

    CachedMap(byte[] elements, Coder<K> keyCoder, Coder<V> valueCoder) {
      this.elements = elements;
      this.elementsEnd = dev.weir.state.store.ByteKeys.prefixEnd(elements);
      this.keyCoder = keyCoder;
      this.valueCoder = valueCoder;
    }

    private StateKey entry(K k) {
      return element(elements, encode(keyCoder, k));
    }

    @Override
    public void put(K k, V v) {
      StateKey e = entry(k);
      beforeWrite(e.bytes());
      store.put(e, v, valueCoder);
    }

    @Override
    public ReadableState<V> putIfAbsent(K k, V v) {
      StateKey e = entry(k);
      V old = store.get(e, valueCoder);
      if (old == null) {
        beforeWrite(e.bytes());
        store.put(e, v, valueCoder);
      }
      return ReadableStates.immediate(old);
    }

    @Override
    public ReadableState<V> computeIfAbsent(K k, Function<? super K, ? extends V> f) {
      StateKey e = entry(k);
      V old = store.get(e, valueCoder);
      if (old == null) {
        beforeWrite(e.bytes());
        store.put(e, f.apply(k), valueCoder);
      }
      return ReadableStates.immediate(old);
    }

    @Override
    public void remove(K k) {
      StateKey e = entry(k);
      beforeWrite(e.bytes());
      store.delete(e);
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

    /** A streamed read of the entries, each turned into an element by {@code element}. */
    private <V2, E> Scan<V2, E> scan(Coder<V2> coder, java.util.function.BiFunction<byte[], V2, E> element) {
      return new Scan<V2, E>(elements, elementsEnd, coder) {
        @Override
        void decode(List<org.apache.samza.storage.kv.Entry<byte[], V2>> cells, List<E> out) {
          for (org.apache.samza.storage.kv.Entry<byte[], V2> cell : cells) {
            out.add(element.apply(cell.getKey(), cell.getValue()));
          }
        }
      };
    }

    @Override
    public ReadableState<Iterable<K>> keys() {
      return lazy(() -> snapshot(scan(SkipCoder.INSTANCE, (k, v) -> decodeSuffix(keyCoder, k, elements.length))));
    }

    @Override
    public ReadableState<Iterable<V>> values() {
      return lazy(() -> snapshot(scan(valueCoder, (k, v) -> v)));
    }

    @Override
    public ReadableState<Iterable<Map.Entry<K, V>>> entries() {
      return lazy(() -> snapshot(scan(valueCoder,
          (k, v) -> new java.util.AbstractMap.SimpleImmutableEntry<>(decodeSuffix(keyCoder, k, elements.length), v))));
    }

    @Override
    public ReadableState<Boolean> isEmpty() {
      return lazy(() -> noCells(elements, elementsEnd));
    }

    @Override
    public void clear() {
      beforeWrite(elements, elementsEnd);
      store.deletePrefix(elements);
    }
  }

  private final class CachedSet<T> extends Cells implements SetState<T> {
    private final byte[] elements;
    private final byte[] elementsEnd;

    @Override
    byte[] identity() {
      return elements;
    }
    private final Coder<T> coder;

    CachedSet(byte[] elements, Coder<T> coder) {
      this.elements = elements;
      this.elementsEnd = dev.weir.state.store.ByteKeys.prefixEnd(elements);
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
        beforeWrite(e.bytes());
        store.put(e, Boolean.TRUE, BooleanCoder.of());
      }
      return ReadableStates.immediate(absent);
    }

    @Override
    public void remove(T t) {
      StateKey e = entry(t);
      beforeWrite(e.bytes());
      store.delete(e);
    }

    @Override
    public void add(T t) {
      StateKey e = entry(t);
      beforeWrite(e.bytes());
      store.put(e, Boolean.TRUE, BooleanCoder.of());
    }

    @Override
    public ReadableState<Boolean> isEmpty() {
      return lazy(() -> noCells(elements, elementsEnd));
    }

    @Override
    public Iterable<T> read() {
      return snapshot(new Scan<Object, T>(elements, elementsEnd, SkipCoder.INSTANCE) {
        @Override
        void decode(List<org.apache.samza.storage.kv.Entry<byte[], Object>> cells, List<T> out) {
          for (org.apache.samza.storage.kv.Entry<byte[], Object> cell : cells) {
            out.add(decodeSuffix(CachedSet.this.coder, cell.getKey(), elements.length));
          }
        }
      });
    }

    @Override
    public SetState<T> readLater() {
      return this;
    }

    @Override
    public void clear() {
      beforeWrite(elements, elementsEnd);
      store.deletePrefix(elements);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Streamed snapshot reads: maps, sets, ordered lists and multimaps.

  /** Cells read from the store per page of a streamed read: bounds the memory one read holds. */
  static final int PAGE_CELLS = 256;

  /**
   * Streamed reads of this key handed out and not yet copied (see {@link View}), weakly held so
   * that an abandoned read is not copied. Empty in the common case, so writes check it for free.
   * Only from the owning thread.
   */
  private final ArrayList<WeakReference<View<?>>> views = new ArrayList<>(0);
  /** Size of {@link #views} after its last pruning; the next pruning waits until it doubles. */
  private int viewsAfterPrune;

  /** The value a {@link SkipCoder} reads in place of a cell's value. */
  private static final Object UNREAD = new Object();

  /** Reads past a value without decoding it, for scans that only need cell keys. Never writes. */
  private static final class SkipCoder extends org.apache.beam.sdk.coders.CustomCoder<Object> {
    static final SkipCoder INSTANCE = new SkipCoder();

    @Override
    public void encode(Object value, java.io.OutputStream out) {
      throw new UnsupportedOperationException("SkipCoder only reads");
    }

    @Override
    public Object decode(java.io.InputStream in) throws java.io.IOException {
      while (in.skip(Long.MAX_VALUE) > 0 || in.read() >= 0) {
        // consume everything: CoderUtils rejects unread bytes
      }
      return UNREAD;
    }
  }

  /** The smallest key after {@code key} in unsigned lexicographic order. */
  private static byte[] successor(byte[] key) {
    return java.util.Arrays.copyOf(key, key.length + 1);
  }

  private static void putLong(byte[] target, int at, long value) {
    for (int i = 0; i < 8; i++) {
      target[at + i] = (byte) (value >>> (56 - 8 * i));
    }
  }

  private static long getLong(byte[] source, int at) {
    long value = 0;
    for (int i = 0; i < 8; i++) {
      value = (value << 8) | (source[at + i] & 0xFF);
    }
    return value;
  }

  private static int getInt(byte[] source, int at) {
    return ((source[at] & 0xFF) << 24) | ((source[at + 1] & 0xFF) << 16) | ((source[at + 2] & 0xFF) << 8)
        | (source[at + 3] & 0xFF);
  }

  /** Whether {@code [aFrom, aTo)} and {@code [bFrom, bTo)} intersect; a null end is unbounded. */
  private static boolean overlaps(byte[] aFrom, byte[] aTo, byte[] bFrom, byte[] bTo) {
    return (aTo == null || java.util.Arrays.compareUnsigned(bFrom, aTo) < 0)
        && (bTo == null || java.util.Arrays.compareUnsigned(aFrom, bTo) < 0);
  }

  /** Puts a possibly-null element value (the cache holds no nulls, so a marker stands in). */
  private <T> void putNullable(StateKey cell, T value, Coder<T> coder) {
    if (value == null) {
      store.put(cell, NULL_ELEMENT, new NullElementCoder<>(coder));
    } else {
      store.put(cell, value, coder);
    }
  }

  @SuppressWarnings("unchecked")
  private static <T> T unmask(Object value) {
    return value == NULL_ELEMENT ? null : (T) value;
  }

  /** Whether {@code [from, to)} holds no cell (one seek; flushes the store's dirty entries). */
  private boolean noCells(byte[] from, byte[] to) {
    try (StoreIterator<byte[], Object> it = store.range(from, to, SkipCoder.INSTANCE)) {
      return !it.hasNext();
    }
  }

  /** Next tie-break sequence number of a list or multimap, from its counter cell. */
  private long nextSequence(StateKey counter) {
    Long n = store.get(counter, VarLongCoder.of());
    long next = n == null ? 0 : n;
    store.put(counter, next + 1, VarLongCoder.of());
    return next;
  }

  /**
   * Deletes the cells of {@code [from, to)} a page at a time (cached tombstones, written back with
   * the next batch), so a large range is never held in memory.
   */
  private void deleteRange(byte[] from, byte[] to) {
    List<byte[]> page = new ArrayList<>();
    byte[] cursor = from;
    while (true) {
      page.clear();
      try (StoreIterator<byte[], Object> it = store.range(cursor, to, SkipCoder.INSTANCE)) {
        while (page.size() < PAGE_CELLS && it.hasNext()) {
          page.add(it.next().getKey());
        }
      }
      for (byte[] k : page) {
        store.delete(store.key(k));
      }
      if (page.size() < PAGE_CELLS) {
        return;
      }
      cursor = successor(page.get(page.size() - 1));
    }
  }

  /**
   * Called before every write to the cells of {@code [from, to)} by a list or multimap: copies the
   * outstanding streamed reads over that range, so that they keep showing the state as of their
   * {@code read()} (Beam: changes are not reflected in results of earlier reads).
   */
  private void beforeWrite(byte[] from, byte[] to) {
    for (int i = views.size() - 1; i >= 0; i--) {
      View<?> view = views.get(i).get();
      if (view == null || view.copy != null) {
        dropView(i);
      } else if (overlaps(view.scan.from, view.scan.to, from, to)) {
        view.copyAll();
        dropView(i);
      }
    }
  }

  /** {@link #beforeWrite} of one cell; allocates only when a streamed read is outstanding. */
  private void beforeWrite(byte[] cell) {
    if (!views.isEmpty()) {
      beforeWrite(cell, successor(cell));
    }
  }

  private void dropView(int i) {
    int last = views.size() - 1;
    views.set(i, views.get(last));
    views.remove(last);
  }

  /**
   * Makes the streamed state reads in an element's value safe to hand on: a read larger than one
   * page (see {@link View}) found as the value itself or as a {@code KV}'s key or value is copied
   * in full now. The stateful ParDo calls this on every output of its DoFn (downstream operators
   * may keep the value in their own state, whose write-back would otherwise read the store while
   * flushing it) and the executor again before an element leaves its container thread (in-process
   * streams pass elements by reference); other values cost two type checks. Only from the thread
   * that made the read. Reads nested deeper are caught by the view's own thread check instead.
   */
  public static void detachReads(Object value) {
    if (value instanceof View<?> view) {
      view.copyAll();
    } else if (value instanceof org.apache.beam.sdk.values.KV<?, ?> kv) {
      if (kv.getKey() instanceof View<?> key) {
        key.copyAll();
      }
      if (kv.getValue() instanceof View<?> v) {
        v.copyAll();
      }
    }
  }

  /**
   * Reads {@code scan}: its first page now; if that is all of it, the page is the result, else a
   * {@link View} that streams the rest from the store and is copied if a write touches its range.
   */
  private <E> Iterable<E> snapshot(Scan<?, E> scan) {
    List<E> first = new ArrayList<>();
    byte[] next = scan.read(scan.from, first);
    if (next == null) {
      return java.util.Collections.unmodifiableList(first);
    }
    View<E> view = new View<>(scan, first, next);
    if (views.size() > 2 * viewsAfterPrune + 16) {
      views.removeIf(r -> r.get() == null || r.get().copy != null);
      viewsAfterPrune = views.size();
    }
    views.add(new WeakReference<>(view));
    return view;
  }

  /**
   * One streamed read: the cells of {@code [from, to)} in key order, a page of at most
   * {@link #PAGE_CELLS} at a time, turned into elements by {@link #decode}. Each page opens and
   * closes its own store iterator (no iterator outlives a call), after the store's dirty entries
   * are flushed, so a page sees every write made before it.
   */
  private abstract class Scan<V, E> {
    final byte[] from;
    final byte[] to;
    final Coder<V> coder;

    /** @param to exclusive end; null means unbounded */
    Scan(byte[] from, byte[] to, Coder<V> coder) {
      this.from = from;
      this.to = to;
      this.coder = coder;
    }

    /** Appends the elements of one page of cells (in key order) to {@code out}. */
    abstract void decode(List<org.apache.samza.storage.kv.Entry<byte[], V>> cells, List<E> out);

    /** Where the page after one whose last cell is {@code last} starts. */
    byte[] after(byte[] last) {
      return successor(last);
    }

    /**
     * Reads the page starting at {@code cursor} into {@code out}.
     *
     * @return where the next page starts, or null if the range is exhausted
     */
    final byte[] read(byte[] cursor, List<E> out) {
      if (to != null && java.util.Arrays.compareUnsigned(cursor, to) >= 0) {
        return null;
      }
      List<org.apache.samza.storage.kv.Entry<byte[], V>> cells = new ArrayList<>();
      try (StoreIterator<byte[], V> it = store.range(cursor, to, coder)) {
        while (cells.size() < PAGE_CELLS && it.hasNext()) {
          cells.add(it.next());
        }
      }
      decode(cells, out);
      return cells.size() < PAGE_CELLS ? null : after(cells.get(cells.size() - 1).getKey());
    }
  }

  /**
   * The result of a read larger than one page: holds the first page and streams the rest from the
   * store on each iteration, until a write to its range makes the state copy it in full first
   * ({@link #copyAll}); iterators then continue in the copy at the position they reached.
   * Single-threaded, like the state.
   */
  private static final class View<E> implements Iterable<E> {
    final Scan<?, E> scan;
    private final List<E> first;
    private final byte[] afterFirst;
    /** All elements, once a write touched the range; null while streaming. */
    List<E> copy;

    /** The container thread whose store the remaining pages are read from. */
    private final Thread owner = Thread.currentThread();

    View(Scan<?, E> scan, List<E> first, byte[] afterFirst) {
      this.scan = scan;
      this.first = first;
      this.afterFirst = afterFirst;
    }

    void copyAll() {
      if (copy == null) {
        List<E> all = new ArrayList<>(first);
        byte[] cursor = afterFirst;
        while (cursor != null) {
          cursor = scan.read(cursor, all);
        }
        copy = all;
      }
    }

    /**
     * @throws IllegalStateException if iterated on another thread than the one that read it while
     *     it still streams from the store (the store is confined to its container's thread)
     */
    @Override
    public java.util.Iterator<E> iterator() {
      if (copy == null && Thread.currentThread() != owner) {
        throw new IllegalStateException("a state read of more than " + PAGE_CELLS + " cells streams from its "
            + "container's store and cannot be iterated on another thread (" + Thread.currentThread().getName()
            + "); copy it (e.g. into a List) before putting it into an output that is nested deeper than a KV");
      }
      return new java.util.Iterator<E>() {
        private List<E> page = first;
        private int at;
        private byte[] next = afterFirst;
        private long emitted;

        @Override
        public boolean hasNext() {
          if (copy != null) {
            return emitted < copy.size();
          }
          while (at == page.size()) {
            if (next == null) {
              return false;
            }
            page = new ArrayList<>();
            at = 0;
            next = scan.read(next, page);
          }
          return true;
        }

        @Override
        public E next() {
          if (!hasNext()) {
            throw new java.util.NoSuchElementException();
          }
          if (copy != null) {
            return copy.get((int) emitted++);
          }
          emitted++;
          return page.get(at++);
        }
      };
    }

    @Override
    public String toString() {
      StringBuilder b = new StringBuilder("[");
      for (E e : this) {
        b.append(b.length() == 1 ? "" : ", ").append(e);
      }
      return b.append(']').toString();
    }
  }

  /**
   * Beam's {@link OrderedListState}: one cell per element under {@code elements | ts(8) | seq(8)},
   * the timestamp's millis with the sign bit flipped (so unsigned byte order is timestamp order)
   * and a per-list sequence number from the counter cell breaking ties in insertion order. So
   * {@code readRange} and {@code clearRange} are range scans of the store, streamed (see
   * {@link View}); {@code add} is two cell writes.
   */
  private final class OrderedList<T> extends Cells implements DrainableOrderedList<T> {
    private final StateKey sequenceCell;
    private final byte[] elements;
    private final byte[] elementsEnd;
    private final Coder<T> coder;

    OrderedList(StateKey sequenceCell, byte[] elements, Coder<T> coder) {
      this.sequenceCell = sequenceCell;
      this.elements = elements;
      this.elementsEnd = dev.weir.state.store.ByteKeys.prefixEnd(elements);
      this.coder = coder;
    }

    @Override
    byte[] identity() {
      return elements;
    }

    /** The first cell key at or after {@code ts}. */
    private byte[] at(Instant ts) {
      byte[] k = java.util.Arrays.copyOf(elements, elements.length + 8);
      putLong(k, elements.length, ts.getMillis() ^ Long.MIN_VALUE);
      return k;
    }

    @Override
    public void add(TimestampedValue<T> value) {
      byte[] k = java.util.Arrays.copyOf(elements, elements.length + 16);
      putLong(k, elements.length, value.getTimestamp().getMillis() ^ Long.MIN_VALUE);
      putLong(k, elements.length + 8, nextSequence(sequenceCell));
      beforeWrite(k);
      putNullable(store.key(k), value.getValue(), coder);
    }

    @Override
    public ReadableState<Boolean> isEmpty() {
      return lazy(() -> noCells(elements, elementsEnd));
    }

    @Override
    public Iterable<TimestampedValue<T>> read() {
      return snapshot(new Elements(elements, elementsEnd));
    }

    @Override
    public Iterable<TimestampedValue<T>> readRange(Instant minTimestamp, Instant limitTimestamp) {
      if (!minTimestamp.isBefore(limitTimestamp)) {
        return List.of();
      }
      return snapshot(new Elements(at(minTimestamp), at(limitTimestamp)));
    }

    @Override
    public void clearRange(Instant minTimestamp, Instant limitTimestamp) {
      if (!minTimestamp.isBefore(limitTimestamp)) {
        return;
      }
      byte[] from = at(minTimestamp);
      byte[] to = at(limitTimestamp);
      beforeWrite(from, to);
      deleteRange(from, to);
    }

    @Override
    public Instant drainBefore(Instant limit, java.util.function.Consumer<TimestampedValue<T>> consumer) {
      byte[] to = at(limit);
      beforeWrite(elements, to);
      List<org.apache.samza.storage.kv.Entry<byte[], T>> page = new ArrayList<>();
      byte[] cursor = elements;
      while (true) {
        page.clear();
        try (StoreIterator<byte[], T> it = store.range(cursor, to, coder)) {
          while (page.size() < PAGE_CELLS && it.hasNext()) {
            page.add(it.next());
          }
        }
        for (org.apache.samza.storage.kv.Entry<byte[], T> cell : page) {
          long millis = getLong(cell.getKey(), elements.length) ^ Long.MIN_VALUE;
          consumer.accept(TimestampedValue.of(unmask(cell.getValue()), new Instant(millis)));
          store.delete(store.key(cell.getKey()));
        }
        if (page.size() < PAGE_CELLS) {
          break;
        }
        cursor = successor(page.get(page.size() - 1).getKey());
      }
      try (StoreIterator<byte[], Object> it = store.range(to, elementsEnd, SkipCoder.INSTANCE)) {
        if (it.hasNext()) {
          return new Instant(getLong(it.next().getKey(), elements.length) ^ Long.MIN_VALUE);
        }
      }
      store.delete(sequenceCell); // empty: restart the tie-break sequence (one cell less per idle key)
      return null;
    }

    @Override
    public OrderedListState<T> readRangeLater(Instant minTimestamp, Instant limitTimestamp) {
      return this;
    }

    @Override
    public OrderedListState<T> readLater() {
      return this;
    }

    @Override
    public void clear() {
      beforeWrite(elements, elementsEnd);
      store.deletePrefix(elements);
      store.delete(sequenceCell);
    }

    /** Decodes cells into timestamped values: the timestamp from the cell key, the value as stored. */
    private final class Elements extends Scan<T, TimestampedValue<T>> {
      Elements(byte[] from, byte[] to) {
        super(from, to, OrderedList.this.coder);
      }

      @Override
      void decode(List<org.apache.samza.storage.kv.Entry<byte[], T>> cells, List<TimestampedValue<T>> out) {
        for (org.apache.samza.storage.kv.Entry<byte[], T> cell : cells) {
          long millis = getLong(cell.getKey(), elements.length) ^ Long.MIN_VALUE;
          out.add(TimestampedValue.of(unmask(cell.getValue()), new Instant(millis)));
        }
      }
    }
  }

  /**
   * Beam's {@link MultimapState}: one cell per (key, value) pair under
   * {@code elements | len(k) | k | seq(8)}, {@code k} the key encoded with the key coder (so keys
   * are equal by structural value), {@code seq} from the counter cell (so a key's values come back
   * in insertion order). {@code put} is two cell writes, {@code remove} a prefix delete, and
   * {@code get}, {@code keys} and {@code entries} are streamed range scans (see {@link View});
   * {@code keys} skips values without decoding them and returns each key once.
   */
  private final class CachedMultimap<K, V> extends Cells implements MultimapState<K, V> {
    private final StateKey sequenceCell;
    private final byte[] elements;
    private final byte[] elementsEnd;
    private final Coder<K> keyCoder;
    private final Coder<V> valueCoder;

    CachedMultimap(StateKey sequenceCell, byte[] elements, Coder<K> keyCoder, Coder<V> valueCoder) {
      this.sequenceCell = sequenceCell;
      this.elements = elements;
      this.elementsEnd = dev.weir.state.store.ByteKeys.prefixEnd(elements);
      this.keyCoder = keyCoder;
      this.valueCoder = valueCoder;
    }

    @Override
    byte[] identity() {
      return elements;
    }

    /** {@code elements | len(k) | k}: the prefix of the cells of map key {@code k}. */
    private byte[] keyPrefix(K k) {
      byte[] kb = encode(keyCoder, k);
      byte[] p = java.util.Arrays.copyOf(elements, elements.length + 4 + kb.length);
      putInt(p, elements.length, kb.length);
      System.arraycopy(kb, 0, p, elements.length + 4, kb.length);
      return p;
    }

    /** End (exclusive) of the key prefix within {@code cell}. */
    private int keyEnd(byte[] cell) {
      return elements.length + 4 + getInt(cell, elements.length);
    }

    private K decodeKey(byte[] cell, int keyEnd) {
      try {
        byte[] kb = java.util.Arrays.copyOfRange(cell, elements.length + 4, keyEnd);
        return CoderUtils.decodeFromByteArray(keyCoder, kb);
      } catch (CoderException e) {
        throw new IllegalStateException("cannot decode a multimap key with " + keyCoder, e);
      }
    }

    @Override
    public void put(K key, V value) {
      byte[] prefix = keyPrefix(key);
      byte[] cell = java.util.Arrays.copyOf(prefix, prefix.length + 8);
      putLong(cell, prefix.length, nextSequence(sequenceCell));
      beforeWrite(cell);
      putNullable(store.key(cell), value, valueCoder);
    }

    @Override
    public ReadableState<Iterable<V>> get(K key) {
      byte[] prefix = keyPrefix(key);
      byte[] end = dev.weir.state.store.ByteKeys.prefixEnd(prefix);
      return lazy(() -> snapshot(new Scan<V, V>(prefix, end, valueCoder) {
        @Override
        void decode(List<org.apache.samza.storage.kv.Entry<byte[], V>> cells, List<V> out) {
          for (org.apache.samza.storage.kv.Entry<byte[], V> cell : cells) {
            out.add(unmask(cell.getValue()));
          }
        }
      }));
    }

    @Override
    public void remove(K key) {
      byte[] prefix = keyPrefix(key);
      byte[] end = dev.weir.state.store.ByteKeys.prefixEnd(prefix);
      if (!views.isEmpty()) {
        beforeWrite(prefix, end);
      }
      store.deletePrefix(prefix);
    }

    @Override
    public ReadableState<Iterable<K>> keys() {
      return lazy(() -> snapshot(new Scan<Object, K>(elements, elementsEnd, SkipCoder.INSTANCE) {
        @Override
        void decode(List<org.apache.samza.storage.kv.Entry<byte[], Object>> cells, List<K> out) {
          byte[] previous = null;
          int previousEnd = 0;
          for (org.apache.samza.storage.kv.Entry<byte[], Object> cell : cells) {
            byte[] k = cell.getKey();
            int end = keyEnd(k);
            if (previous == null || !java.util.Arrays.equals(previous, 0, previousEnd, k, 0, end)) {
              out.add(decodeKey(k, end));
              previous = k;
              previousEnd = end;
            }
          }
        }

        @Override
        byte[] after(byte[] last) {
          // Skip the rest of the last key's values: its key was emitted on this page.
          byte[] next = dev.weir.state.store.ByteKeys.prefixEnd(java.util.Arrays.copyOf(last, keyEnd(last)));
          return next == null ? elementsEnd : next;
        }
      }));
    }

    @Override
    public ReadableState<Iterable<Map.Entry<K, V>>> entries() {
      return lazy(() -> snapshot(new Scan<V, Map.Entry<K, V>>(elements, elementsEnd, valueCoder) {
        @Override
        void decode(List<org.apache.samza.storage.kv.Entry<byte[], V>> cells, List<Map.Entry<K, V>> out) {
          byte[] previous = null;
          int previousEnd = 0;
          K key = null;
          for (org.apache.samza.storage.kv.Entry<byte[], V> cell : cells) {
            byte[] k = cell.getKey();
            int end = keyEnd(k);
            if (previous == null || !java.util.Arrays.equals(previous, 0, previousEnd, k, 0, end)) {
              key = decodeKey(k, end); // once per run of cells of the same key
              previous = k;
              previousEnd = end;
            }
            out.add(new java.util.AbstractMap.SimpleImmutableEntry<>(key, unmask(cell.getValue())));
          }
        }
      }));
    }

    @Override
    public ReadableState<Boolean> containsKey(K key) {
      byte[] prefix = keyPrefix(key);
      byte[] end = dev.weir.state.store.ByteKeys.prefixEnd(prefix);
      return lazy(() -> !noCells(prefix, end));
    }

    @Override
    public ReadableState<Boolean> isEmpty() {
      return lazy(() -> noCells(elements, elementsEnd));
    }

    @Override
    public void clear() {
      beforeWrite(elements, elementsEnd);
      store.deletePrefix(elements);
      store.delete(sequenceCell);
    }
  }
}
