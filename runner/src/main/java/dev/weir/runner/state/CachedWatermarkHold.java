package dev.weir.runner.state;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.StateKey;
import org.apache.beam.sdk.coders.InstantCoder;
import org.apache.beam.sdk.state.ReadableState;
import org.apache.beam.sdk.state.WatermarkHoldState;
import org.apache.beam.sdk.transforms.windowing.TimestampCombiner;
import org.joda.time.Instant;

/**
 * Beam's {@link WatermarkHoldState}.
 *
 * <ul>
 *   <li><b>Stores</b> one hold: the timestamps added so far, combined with the state's
 *       {@link TimestampCombiner}.
 *   <li><b>Cells</b>: the state's single cell ({@link CellLayout#cell}), {@code InstantCoder}.
 *   <li><b>Writes</b> also report the change to the operator's {@link WatermarkHolds}, which keeps
 *       the minimum over all its keys' holds in memory: a write that leaves the hold as it was
 *       reports and writes nothing.
 *   <li><b>Reads</b>: one cache lookup.
 *   <li><b>Held reads</b>: none; a read is an {@link Instant}.
 * </ul>
 *
 * <p>Threading: confined to the owning task's container thread.
 */
final class CachedWatermarkHold extends Cells implements WatermarkHoldState {
  private final CachedStore store;
  private final StateKey cell;
  private final WatermarkHolds holds;
  private final TimestampCombiner combiner;

  CachedWatermarkHold(CachedStore store, StateKey cell, WatermarkHolds holds, TimestampCombiner combiner) {
    super(cell.bytes());
    this.store = store;
    this.cell = cell;
    this.holds = holds;
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
