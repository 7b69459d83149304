package dev.weir.runner.operators.keyed;

import dev.weir.runner.state.ByteKey;
import dev.weir.runner.state.KeyContext;
import dev.weir.runner.state.KeyContexts;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.beam.runners.core.KeyedWorkItem;
import org.apache.beam.runners.core.NullSideInputReader;
import org.apache.beam.runners.core.ReduceFnRunner;
import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.runners.core.StateTags;
import org.apache.beam.runners.core.SystemReduceFn;
import org.apache.beam.runners.core.TimerInternals;
import org.apache.beam.runners.core.triggers.ExecutableTriggerStateMachine;
import org.apache.beam.runners.core.triggers.TriggerStateMachines;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.MapCoder;
import org.apache.beam.sdk.coders.SetCoder;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.state.State;
import org.apache.beam.sdk.state.StateContext;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.util.WindowedValueReceiver;
import org.apache.beam.sdk.util.construction.TriggerTranslation;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.WindowingStrategy;

/**
 * A GroupByKey's runners-core {@link ReduceFnRunner}s, one per recently used key, kept across work
 * items instead of built for each (as runners-core's {@code GroupAlsoByWindowViaWindowSetNewDoFn}
 * does).
 *
 * <h2>Why</h2>
 *
 * Building a {@code ReduceFnRunner} is not free: its trigger state machine is translated from the
 * trigger's proto, and with merging windows its {@code MergingActiveWindowSet} reads the key's
 * whole window map (active window to state-address windows) and takes a deep copy of it, so that
 * at the end it writes the map only if it changed; at the end it also checks the map's invariants.
 * Weir hands runners-core one work item per key and bundle, and one per key and timer firing, but
 * with merging windows a key can hold many windows (Nexmark Q4's hot auctions: tens to hundreds of
 * bid windows), and the copy was 31% of the bytes Q4 allocated at 1,000,000 events. Apart from that
 * window set a {@code ReduceFnRunner} holds no per-call state (its trigger runner, watermark hold,
 * pane tracker and context factory are views over the key's state and the operator's timers), so
 * one built for a key can run all of its later work items, as long as its window set stays the
 * truth about the stored one.
 *
 * <h2>The window set stays the truth</h2>
 *
 * {@code MergingActiveWindowSet} changes the map it read in place and, at {@code persist}, skips
 * the write when the map equals the copy it took when it was built. Over many work items that copy
 * is stale: a map that changed and then changed back is not written, while the object cache may
 * have written back (and dropped) the changed version in between; a later read would see it. So
 * the runner sees the key's state through a {@link Capture} view that remembers the map object the
 * window set reads or writes, and after every work item {@link #run} writes that object itself (or
 * clears the cell when the map is empty). The object cache holds values by reference, so the write
 * costs marking the entry dirty; it is encoded at the next commit or eviction, as any write. That
 * write also makes the runner's own {@code persist} redundant once the map object is known, and
 * {@code persist} walks the whole map to check its invariants (16% of the bytes Q4 allocated once
 * the copy was gone): it runs only until the map is captured (a window set that started empty
 * writes its new map there) and then on every {@value #CHECK_INVARIANTS_EVERY}th work item, so a
 * broken invariant still fails the job, a little later. There
 * is one runner per key (keyed by the encoded key, not by the {@link KeyContext}, of which an
 * evicted and a fresh one can coexist), so no second window set of the key can write an older map.
 * If a runners-core version stopped reading its window set through the tag this class expects,
 * nothing would be captured: then no runner is kept (each work item builds its own, as before).
 *
 * <p>At most {@code capacity} runners are kept, least recently used dropped first; dropping one
 * loses nothing (its state is written after every work item).
 *
 * <p>Threading: confined to the task's container thread.
 *
 * @param <K> the key type
 * @param <V> the input value type
 * @param <OutT> the output value type
 */
final class ReduceFnRunners<K, V, OutT> {
  /**
   * Runners kept per operator instance: as many as the key contexts it keeps, since a runner holds
   * its key's state view. Fewer kept objects live long enough to be copied by young collections
   * and die in the old generation: at 1,024 (and 4,096 key contexts) Nexmark Q11 and Q14 at
   * 1,000,000 events peaked at 2.2 and 1.9-2.0 GB RSS, at 256 (and 256) at 1.4 and 1.4-1.7 GB,
   * with 14% and 8% more events/s (two runs each; runner/BENCHMARKS.md, issue 14, session 12).
   */
  static final int DEFAULT_CAPACITY = KeyContexts.DEFAULT_CAPACITY;

  private final WindowingStrategy<?, BoundedWindow> windowingStrategy;
  private final ExecutableTriggerStateMachine trigger;
  private final TimerInternals timers;
  private final WindowedValueReceiver<KV<K, OutT>> output;
  private final SystemReduceFn<K, V, ?, OutT, BoundedWindow> reduceFn;
  private final PipelineOptions options;
  /** The id of the window-set tag of {@code MergingActiveWindowSet}; null for non-merging windows. */
  private final String windowSetId;
  private final LinkedHashMap<ByteKey, Kept<K, V, OutT>> kept;
  /** Whether runners may be kept (false once a window set was not captured). */
  private boolean keeping = true;
  /** Work items run with a captured window set: every {@value #CHECK_INVARIANTS_EVERY}th persists in full. */
  private long workItems;
  static final int CHECK_INVARIANTS_EVERY = 256;

  /** A kept runner and, with merging windows, the view that captures its window set. */
  private record Kept<K, V, OutT>(ReduceFnRunner<K, V, OutT, BoundedWindow> runner, Capture capture) {}

  ReduceFnRunners(WindowingStrategy<?, BoundedWindow> windowingStrategy, TimerInternals timers,
      WindowedValueReceiver<KV<K, OutT>> output, SystemReduceFn<K, V, ?, OutT, BoundedWindow> reduceFn,
      PipelineOptions options, int capacity) {
    this.windowingStrategy = windowingStrategy;
    // Immutable (a tree of trigger state machines with their indices): shared by every runner.
    this.trigger = ExecutableTriggerStateMachine.create(
        TriggerStateMachines.stateMachineForTrigger(TriggerTranslation.toProto(windowingStrategy.getTrigger())));
    this.timers = timers;
    this.output = output;
    this.reduceFn = reduceFn;
    this.options = options;
    this.windowSetId = windowingStrategy.getWindowFn().isNonMerging() ? null : windowSetTag(
        windowingStrategy.getWindowFn().windowCoder()).getId();
    int bound = Math.max(1, capacity);
    this.kept = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<ByteKey, Kept<K, V, OutT>> eldest) {
        return size() > bound;
      }
    };
  }

  /** The tag {@code MergingActiveWindowSet} keeps its window map under (in the global namespace). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static StateTag<ValueState<Map<BoundedWindow, java.util.Set<BoundedWindow>>>> windowSetTag(
      Coder<? extends BoundedWindow> windowCoder) {
    Coder<BoundedWindow> coder = (Coder) windowCoder;
    return StateTags.makeSystemTagInternal(StateTags.value("tree", MapCoder.of(coder, SetCoder.of(coder))));
  }

  /**
   * Runs {@code item} (whose elements are already filtered for lateness) through the key's runner:
   * elements, then timers, then {@code persist}, then the window set's write.
   *
   * @throws Exception what runners-core or the user's code (a CombineFn) throws
   */
  void run(KeyContext<K> key, KeyedWorkItem<K, V> item) throws Exception {
    Kept<K, V, OutT> k = keeping ? kept.get(key.id()) : null;
    if (k == null) {
      k = build(key);
    }
    k.runner.processElements(item.elementsIterable());
    k.runner.onTimers(item.timersIterable());
    if (k.capture == null) {
      k.runner.persist(); // non-merging windows: nothing to persist, nothing checked
    } else {
      // persist() only checks the window set's invariants and writes it if it differs from the
      // copy taken at the build; the write below makes it redundant once the map is captured
      if (!k.capture.hasWindowSet() || ++workItems % CHECK_INVARIANTS_EVERY == 0) {
        k.runner.persist(); // a window set that started empty is captured at its first write
      }
      k.capture.writeWindowSet();
    }
  }

  private Kept<K, V, OutT> build(KeyContext<K> key) {
    Capture capture = windowSetId == null ? null : new Capture(key.state(), windowSetId);
    StateInternals state = capture == null ? key.state() : capture;
    ReduceFnRunner<K, V, OutT, BoundedWindow> runner = new ReduceFnRunner<>(key.key(), windowingStrategy, trigger,
        state, timers, output, NullSideInputReader.empty(), reduceFn, options);
    Kept<K, V, OutT> k = new Kept<>(runner, capture);
    if (capture != null && !capture.bound) {
      keeping = false; // runners-core did not read its window set through the expected tag
      kept.clear();
    }
    if (keeping) {
      kept.put(key.id(), k);
    }
    return k;
  }

  /** Drops every kept runner (e.g. at the end of input, when the operator forgets its keys). */
  void clear() {
    kept.clear();
  }

  /** Number of runners kept. */
  int size() {
    return kept.size();
  }

  /** Whether runners are kept across work items (see the class comment). */
  boolean keeping() {
    return keeping;
  }

  /**
   * A key's state as its runner sees it: every state passes through unchanged except the window
   * set's cell, whose reads and writes remember the map object (see the class comment).
   */
  static final class Capture implements StateInternals {
    private final StateInternals state;
    private final String windowSetId;
    /** The window set's cell, once runners-core bound it. */
    private ValueState<Object> cell;
    /** The map object the window set works on, once read (non-null) or written. */
    private Object windowSet;
    boolean bound;

    Capture(StateInternals state, String windowSetId) {
      this.state = state;
      this.windowSetId = windowSetId;
    }

    @Override
    public Object getKey() {
      return state.getKey();
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T extends State> T state(StateNamespace namespace, StateTag<T> address, StateContext<?> c) {
      T bound = state.state(namespace, address, c);
      if (namespace instanceof StateNamespaces.GlobalNamespace && windowSetId.equals(address.getId())) {
        this.cell = (ValueState<Object>) bound;
        this.bound = true;
        return (T) new CapturingValue();
      }
      return bound;
    }

    /** Whether the window set's map object is known (it was read non-empty or written). */
    boolean hasWindowSet() {
      return windowSet != null;
    }

    /** Writes the captured map (or clears the cell if it is empty); nothing if none was seen. */
    void writeWindowSet() {
      if (windowSet == null) {
        return; // the window set started empty and never wrote: its cell is empty too
      }
      if (((Map<?, ?>) windowSet).isEmpty()) {
        cell.clear();
      } else {
        cell.write(windowSet);
      }
    }

    /** The window set's cell as the window set sees it. */
    private final class CapturingValue implements ValueState<Object> {
      @Override
      public Object read() {
        Object value = cell.read();
        if (value != null) {
          windowSet = value;
        }
        return value;
      }

      @Override
      public void write(Object value) {
        windowSet = value;
        cell.write(value);
      }

      @Override
      public void clear() {
        cell.clear();
      }

      @Override
      public ValueState<Object> readLater() {
        cell.readLater();
        return this;
      }
    }
  }
}
