package dev.weir.runner.state;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.StateKey;
import java.util.List;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.state.CombiningState;
import org.apache.beam.sdk.state.ReadableState;
import org.apache.beam.sdk.transforms.Combine.CombineFn;

/**
 * Beam's {@link CombiningState} (with or without context: a {@code CombineFnWithContext} comes
 * bound to its context).
 *
 * <ul>
 *   <li><b>Stores</b> one accumulator; none means the combine fn's empty accumulator.
 *   <li><b>Cells</b>: the state's single cell ({@link CellLayout#cell}), the accumulator in the
 *       accumulator coder.
 *   <li><b>Writes</b>: {@code add} reads the cached accumulator, applies {@code addInput} and puts
 *       the result again (accumulators are the one value the fn may mutate in place, so it is
 *       always put back); {@code addAccum} merges.
 *   <li><b>Reads</b>: {@code extractOutput} of the cached accumulator.
 *   <li><b>Held reads</b>: none; a read is the fn's output.
 * </ul>
 *
 * <p>Threading: confined to the owning task's container thread.
 */
final class CachedCombining<InputT, AccumT, OutputT> extends Cells
    implements CombiningState<InputT, AccumT, OutputT> {
  private final CachedStore store;
  private final StateKey cell;
  private final Coder<AccumT> coder;
  private final CombineFn<InputT, AccumT, OutputT> fn;

  CachedCombining(CachedStore store, StateKey cell, Coder<AccumT> coder, CombineFn<InputT, AccumT, OutputT> fn) {
    super(cell.bytes());
    this.store = store;
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
