package dev.weir.runner.timers;

import org.apache.beam.sdk.annotations.Internal;

import dev.weir.runner.state.CellLayout;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.state.NamespaceNames;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.StateKey;
import dev.weir.state.store.ByteKeys;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StoreIterator;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongConsumer;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.runners.core.TimerInternals.TimerData;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CustomCoder;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.samza.storage.kv.Entry;
import org.joda.time.Instant;

/**
 * The event-time timers of one keyed operator instance, kept in the container's storage rather
 * than on the heap, so that millions of pending timers cost store entries, not objects.
 *
 * <h2>Layout</h2>
 *
 * Two indexes, their bytes laid out by {@link CellLayout} (which documents every one):
 *
 * <ul>
 *   <li><b>Ordered index</b>, in the dedicated timer store ({@link ContainerState#timerStore()},
 *       raw bytes, staged until the container's commit): key {@link CellLayout#timerIndexKey}
 *       (operator id and task partition, firing timestamp as sortable ms, then the timer's key, namespace, id and
 *       family), value the output timestamp. A range scan yields timers by timestamp, then key,
 *       then namespace and id.
 *   <li><b>Slot index</b>, in the object-cached state store under its own operator id: key
 *       {@link CellLayout#timerSlotKey} (the same identity without the timestamp), value
 *       {@code (timestamp, outputTimestamp)}. It answers "is this timer set, and when" for replace
 *       and delete with a cache hit for hot keys, and lets setting the same timer again
 *       (runners-core re-sets a window's garbage-collection timer on every element) cost one
 *       lookup and no write.
 * </ul>
 *
 * <h2>Heap</h2>
 *
 * At most {@code heapCapacity} of the earliest timers are also held decoded in memory, in index
 * order. Invariant: the heap holds a prefix of the ordered index; if {@code complete}, all of it.
 * A timer earlier than the heap's last one goes into the heap (evicting its last entry when full,
 * which makes it incomplete); a later one only into the store. When an incomplete heap runs empty
 * it is refilled by one range scan. Polling the earliest timer is therefore O(log capacity) and
 * a store scan happens once per {@code heapCapacity} firings at most.
 *
 * <p>The refill scan starts at a <em>floor</em>, not at the index's first key: fired and deleted
 * timers leave tombstones at the front of the index (timers fire in key order), which RocksDB
 * must step over on every scan from the start until a compaction drops them; in a windowed job
 * with a few hundred thousand fired timers that made the refill scans 7% of CPU (Nexmark Q4
 * profile, runner/BENCHMARKS.md). Invariant: while the heap is empty, every timer in the store
 * sorts at or after the floor (while it is not, after the heap's last key). When the heap runs
 * empty by removing key K, K was its last key, so K becomes the floor; a timer set below the floor
 * while the heap is empty goes into the heap.
 *
 * <h2>Write-back of the ordered index</h2>
 *
 * Writes to the ordered index wait in {@link #pendingWrites} until the container commits
 * ({@link ContainerState#commit}, {@link ContainerState#checkpoint}), until a refill must scan the
 * store, or until {@value #MAX_PENDING_WRITES} are waiting. Most event-time timers live and die
 * between two commits: under merging windows runners-core deletes a window's end-of-window and
 * garbage-collection timers and sets them for the merged window on every element, and fires most
 * timers shortly after setting them. Written through, each of those cost a RocksDB insert or
 * tombstone (4.5% of CPU on Nexmark Q11, runner/BENCHMARKS.md), and the tombstones slowed every
 * later scan; waiting, a timer set and deleted (or fired) before the next commit costs two map
 * operations and never reaches the store. Which pending keys the store already holds follows from
 * the slot index: an ordered key written by {@link #set} is new (the slot named another timestamp,
 * or none), a key removed is one the slot named, so it is stored unless it is pending itself
 * ({@link #storedPending} keeps the rare key that was stored, deleted and set again).
 *
 * <p>Restart: everything is in the store, so a new instance over the same storage (reopened after
 * a commit) for the same PTransform and partition sees every committed timer; {@link #open} reports the output
 * timestamps of the pending timers so that the caller can rebuild its watermark holds.
 *
 * <p>Threading: confined to the task's container thread. Errors: store failures surface as
 * {@code StateStoreException}; undecodable entries as {@link IllegalStateException}.
 */
@Internal
public final class TimerIndex {
  /** Decoded view of one pending timer: its encoded key and Beam's description. */
  record Pending(byte[] keyBytes, TimerData data) {}

  private final SortedByteStore ordered;
  private final CachedStore slots;
  /** {@link CellLayout#timerIndexPrefix}: the operator's index id and the task's partition. */
  private final byte[] indexPrefix;
  /** The operator's slot id ({@link ContainerState#operatorId}, space "timer-slot"). */
  private final byte[] slotOperatorId;
  private final Coder<? extends BoundedWindow> windowCoder;
  private final int heapCapacity;
  private final TreeMap<byte[], Pending> heap = new TreeMap<>(ByteKeys.ORDER);
  /**
   * Ordered-index writes not yet applied to the store: key to its value, or to {@link #DELETE} for
   * a key the store holds. A key set and removed before {@link #flushPendingWrites} is dropped
   * from the map: nothing to write.
   */
  private final TreeMap<byte[], byte[]> pendingWrites = new TreeMap<>(ByteKeys.ORDER);
  /** Keys in {@link #pendingWrites} with a value that the store also holds (deleted, then set again). */
  private final TreeSet<byte[]> storedPending = new TreeSet<>(ByteKeys.ORDER);
  /** The value of a pending delete (compared by identity). */
  private static final byte[] DELETE = new byte[0];
  /** Bound of {@link #pendingWrites}: about 150 bytes each, so at most ~5 MB per operator. */
  static final int MAX_PENDING_WRITES = 32_768;
  private boolean complete;
  /** Lower bound (inclusive) of the timers in the store but not in the heap; null: the index's start. */
  private byte[] floor;
  private final byte[] indexEnd;
  private long size;
  /**
   * Encoded names of recently used namespaces: runners-core sets a window's timers on every
   * element, and a window namespace's string key encodes the window on every call.
   */
  private final NamespaceNames namespaceNames;

  /**
   * @param state the container's state; the index takes its operator ids from it
   * @param stepName the operator's PTransform (unique full name): instances of the same PTransform
   *     and partition over the same storage find the same timers
   * @param partition the task's partition of its stage
   * @param windowCoder decodes window namespaces of loaded timers
   * @param heapCapacity how many of the earliest timers to keep decoded in memory (at least 1)
   */
  public TimerIndex(ContainerState state, String stepName, int partition, Coder<? extends BoundedWindow> windowCoder,
      int heapCapacity) {
    this.ordered = state.timerStore();
    this.slots = state.store();
    this.indexPrefix = CellLayout.timerIndexPrefix(state.operatorId(stepName, "timer-index"), partition);
    this.indexEnd = ByteKeys.prefixEnd(indexPrefix);
    this.slotOperatorId = state.operatorId(stepName, "timer-slot");
    this.windowCoder = windowCoder;
    this.namespaceNames = new NamespaceNames(windowCoder);
    this.heapCapacity = Math.max(1, heapCapacity);
    state.beforeCommit(this::flushPendingWrites);
  }

  /**
   * Loads what an earlier instance committed: counts the timers and reports each one's output
   * timestamp (epoch ms) to {@code outputHolds} (may be null), then fills the heap. One scan.
   */
  public void open(LongConsumer outputHolds) {
    flushPendingWrites();
    size = 0;
    try (StoreIterator<byte[], byte[]> it = ordered.prefix(indexPrefix)) {
      while (it.hasNext()) {
        Entry<byte[], byte[]> e = it.next();
        size++;
        if (outputHolds != null) {
          outputHolds.accept(CellLayout.timerIndexOutputMs(e.getValue()));
        }
      }
    }
    heap.clear();
    complete = false;
    floor = null;
    refill();
  }

  /** Number of pending timers. */
  long size() {
    return size;
  }

  /** Number of timers currently decoded in memory (at most the heap capacity). */
  int heapSize() {
    return heap.size();
  }

  /**
   * Sets (or moves) the event-time timer ({@code keyBytes}, namespace, id, family). Setting a timer
   * exactly as it is (same time and output time) writes nothing.
   *
   * @return the previous {@code {timestamp, outputTimestamp}} (epoch ms) if the timer was set,
   *     else null; do not modify
   */
  public long[] set(byte[] keyBytes, TimerData timer) {
    byte[] slot = slotKey(keyBytes, timer.getNamespace(), timer.getTimerId(), timer.getTimerFamilyId());
    StateKey slotKey = slots.key(slot);
    long[] old = slots.get(slotKey, SlotCoder.INSTANCE);
    long ts = timer.getTimestamp().getMillis();
    long out = outputMillis(timer);
    if (old != null) {
      if (old[0] == ts && old[1] == out) {
        return old; // the same timer again: nothing to write
      }
      removeOrdered(orderedKey(keyBytes, old[0], timer.getNamespace(), timer.getTimerId(), timer.getTimerFamilyId()));
    } else {
      size++;
    }
    slots.put(slotKey, new long[] {ts, out}, SlotCoder.INSTANCE);
    byte[] key = orderedKey(keyBytes, ts, timer.getNamespace(), timer.getTimerId(), timer.getTimerFamilyId());
    putOrdered(key, CellLayout.timerIndexValue(out));
    offerToHeap(key, new Pending(keyBytes, timer));
    return old;
  }

  /**
   * Deletes the timer if it is set.
   *
   * @return its output timestamp (epoch ms), or {@link Long#MIN_VALUE} if it was not set
   */
  long delete(byte[] keyBytes, StateNamespace namespace, String timerId, String familyId) {
    StateKey slotKey = slots.key(slotKey(keyBytes, namespace, timerId, familyId));
    long[] old = slots.get(slotKey, SlotCoder.INSTANCE);
    if (old == null) {
      return Long.MIN_VALUE;
    }
    slots.delete(slotKey);
    removeOrdered(orderedKey(keyBytes, old[0], namespace, timerId, familyId));
    size--;
    return old[1];
  }

  /** The earliest pending timer without removing it, or null if there is none. */
  Pending peek() {
    if (heap.isEmpty() && !complete) {
      refill();
    }
    Map.Entry<byte[], Pending> first = heap.firstEntry();
    return first == null ? null : first.getValue();
  }

  /** Removes and returns the earliest timer if its timestamp is before {@code watermarkMs}, else null. */
  Pending pollBefore(long watermarkMs) {
    Pending first = peek();
    if (first == null || first.data().getTimestamp().getMillis() >= watermarkMs) {
      return null;
    }
    byte[] key = heap.firstKey();
    removeFromHeap(key);
    deleteOrdered(key);
    TimerData t = first.data();
    slots.delete(slotKey(first.keyBytes(), t.getNamespace(), t.getTimerId(), t.getTimerFamilyId()));
    size--;
    return first;
  }

  private void removeOrdered(byte[] key) {
    deleteOrdered(key);
    removeFromHeap(key);
  }

  /** Sets {@code key} in the ordered index; {@link #set} writes only keys the slot did not name. */
  private void putOrdered(byte[] key, byte[] value) {
    byte[] before = pendingWrites.put(key, value);
    if (before == DELETE) {
      storedPending.add(key); // stored, deleted, set again: a later delete must reach the store
    }
    if (pendingWrites.size() > MAX_PENDING_WRITES) {
      flushPendingWrites();
    }
  }

  /** Deletes {@code key}, which the slot index named, from the ordered index. */
  private void deleteOrdered(byte[] key) {
    byte[] before = pendingWrites.get(key);
    if (before == null) {
      pendingWrites.put(key, DELETE); // not pending, named by its slot: the store holds it
    } else if (before != DELETE) {
      if (storedPending.remove(key)) {
        pendingWrites.put(key, DELETE);
      } else {
        pendingWrites.remove(key); // set since the last flush and never stored: nothing to write
      }
    }
    if (pendingWrites.size() > MAX_PENDING_WRITES) {
      flushPendingWrites();
    }
  }

  /**
   * Applies the pending ordered-index writes to the store (one batch of puts, one of deletes).
   * Called before every commit of the container's state, before scanning the store, and when
   * {@value #MAX_PENDING_WRITES} are waiting.
   */
  void flushPendingWrites() {
    if (pendingWrites.isEmpty()) {
      return;
    }
    List<Entry<byte[], byte[]>> puts = new ArrayList<>(pendingWrites.size());
    List<byte[]> deletes = new ArrayList<>();
    for (Map.Entry<byte[], byte[]> w : pendingWrites.entrySet()) {
      if (w.getValue() == DELETE) {
        deletes.add(w.getKey());
      } else {
        puts.add(new Entry<>(w.getKey(), w.getValue()));
      }
    }
    pendingWrites.clear();
    storedPending.clear();
    ordered.putAll(puts);
    ordered.deleteAll(deletes);
  }

  /** Number of ordered-index writes waiting for {@link #flushPendingWrites} (for tests). */
  int pendingWrites() {
    return pendingWrites.size();
  }

  /** Removes {@code key} from the heap; if that empties it, {@code key} was its last and becomes the floor. */
  private void removeFromHeap(byte[] key) {
    if (heap.remove(key) != null && heap.isEmpty()) {
      floor = key;
    }
  }

  private void offerToHeap(byte[] key, Pending pending) {
    boolean belowHeap = heap.isEmpty()
        ? floor != null && ByteKeys.ORDER.compare(key, floor) < 0
        : ByteKeys.ORDER.compare(key, heap.lastKey()) < 0;
    if (complete || belowHeap) {
      heap.put(key, pending);
      if (heap.size() > heapCapacity) {
        heap.pollLastEntry();
        complete = false;
      }
    }
    // else: later than everything in an incomplete heap; a refill will find it in the store
  }

  /** Loads the earliest {@code heapCapacity} timers from the store, scanning from the floor. */
  private void refill() {
    flushPendingWrites(); // the scan reads the store
    int loaded = 0;
    try (StoreIterator<byte[], byte[]> it = floor == null ? ordered.prefix(indexPrefix) : ordered.range(floor, indexEnd)) {
      while (loaded < heapCapacity && it.hasNext()) {
        Entry<byte[], byte[]> e = it.next();
        heap.put(e.getKey(), decode(e.getKey(), e.getValue()));
        loaded++;
      }
      complete = !it.hasNext();
    }
  }

  // ---- encoding --------------------------------------------------------------------------------

  /** The output timestamp a timer holds, epoch ms: its own, or its firing time if it has none. */
  static long outputMillis(TimerData timer) {
    Instant out = timer.getOutputTimestamp();
    return out == null ? timer.getTimestamp().getMillis() : out.getMillis();
  }

  private byte[] orderedKey(byte[] keyBytes, long ts, StateNamespace ns, String id, String family) {
    return CellLayout.timerIndexKey(indexPrefix, ts, keyBytes, namespaceNames.utf8(ns),
        id.getBytes(StandardCharsets.UTF_8), family.getBytes(StandardCharsets.UTF_8));
  }

  private byte[] slotKey(byte[] keyBytes, StateNamespace ns, String id, String family) {
    return CellLayout.timerSlotKey(slotOperatorId, keyBytes, namespaceNames.utf8(ns),
        id.getBytes(StandardCharsets.UTF_8), family.getBytes(StandardCharsets.UTF_8));
  }

  private Pending decode(byte[] key, byte[] value) {
    CellLayout.TimerKey k = CellLayout.decodeTimerIndexKey(key, indexPrefix.length);
    long out = CellLayout.timerIndexOutputMs(value);
    StateNamespace namespace = StateNamespaces.fromString(k.namespace(), windowCoder);
    return new Pending(k.keyBytes(), TimerData.of(k.timerId(), k.familyId(), namespace, new Instant(k.timestampMs()),
        new Instant(out), TimeDomain.EVENT_TIME));
  }

  /** A timer slot value, {@code {timestampMs, outputTimestampMs}}, in {@link CellLayout#timerSlotValue}'s bytes. */
  static final class SlotCoder extends CustomCoder<long[]> {
    static final SlotCoder INSTANCE = new SlotCoder();

    @Override
    public void encode(long[] value, OutputStream out) throws IOException {
      out.write(CellLayout.timerSlotValue(value[0], value[1]));
    }

    @Override
    public long[] decode(InputStream in) throws IOException {
      byte[] b = in.readNBytes(CellLayout.TIMER_SLOT_BYTES);
      if (b.length != CellLayout.TIMER_SLOT_BYTES) {
        throw new IOException("truncated timer slot");
      }
      return CellLayout.decodeTimerSlot(b);
    }
  }
}
