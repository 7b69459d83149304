package dev.weir.runner.state;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.StateKey;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.StructuredCoder;
import org.apache.beam.sdk.state.CombiningState;
import org.apache.beam.sdk.state.ReadableState;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.util.CoderUtils;

/**
 * Beam's {@link CombiningState} (with or without context: a {@code CombineFnWithContext} comes
 * bound to its context).
 *
 * <ul>
 *   <li><b>Stores</b> one accumulator; none means the combine fn's empty accumulator.
 *   <li><b>Cells</b>: the state's single cell ({@link CellLayout#cell}), the accumulator in the
 *       accumulator coder (cached as a {@link Held} accumulator, written back as the accumulator's
 *       bytes alone).
 *   <li><b>Writes</b>: {@code add} applies {@code addInput} to the cached accumulator in place and
 *       puts the result again (accumulators are the one value the fn may mutate in place, so it is
 *       always put back), allocating nothing; {@code addAccum} merges.
 *   <li><b>Reads</b>: {@code extractOutput} of the cached accumulator.
 *   <li><b>Held reads</b>: what a read hands out may be the accumulator itself or share parts of it
 *       (a {@code CombineFn} may return its accumulator from {@code extractOutput}, as a list
 *       accumulator does; {@code getAccum} returns it by definition), and the reader may hold it
 *       after the next write: a GroupByKey in accumulating mode emits each pane's
 *       {@code extractOutput} downstream by reference and keeps adding to the same accumulator.
 *       So a read marks the accumulator shared (unless its output is of an immutable class, as a
 *       count's or a sum's is: {@link #isImmutable}), and the next write first copies it through the
 *       accumulator coder (copy on write): an emitted pane never changes afterwards (issue 17: a
 *       list-accumulating pane of [1, 2] became [1, 2, 3, 4] in PAssert's buffer). In discarding
 *       mode a fired accumulator is cleared, not written, so nothing is copied; in accumulating
 *       mode one copy per pane. Beam's Direct runner gets the same effect by copying every state
 *       per bundle (copy on access); an accumulator handed to {@code addAccum} stays the caller's,
 *       so it is shared from the start.
 * </ul>
 *
 * <p>Threading: confined to the owning task's container thread.
 */
final class CachedCombining<InputT, AccumT, OutputT> extends Cells
    implements CombiningState<InputT, AccumT, OutputT> {
  private final CachedStore store;
  private final StateKey cell;
  private final Coder<AccumT> coder;
  private final HeldCoder<AccumT> heldCoder;
  private final CombineFn<InputT, AccumT, OutputT> fn;

  /** @param heldCoder the operator's {@link StateCoders#held} of {@code coder} */
  CachedCombining(CachedStore store, StateKey cell, Coder<AccumT> coder, HeldCoder<AccumT> heldCoder,
      CombineFn<InputT, AccumT, OutputT> fn) {
    super(cell.bytes());
    this.store = store;
    this.cell = cell;
    this.coder = coder;
    this.heldCoder = heldCoder;
    this.fn = fn;
  }

  /** The cached accumulator, or null if the state is empty. */
  private Held<AccumT> held() {
    return store.get(cell, heldCoder);
  }

  /** The accumulator to mutate: the cached one, or a copy of it if a read may still hold it. */
  private AccumT writable(Held<AccumT> held) {
    if (!held.shared) {
      return held.accum;
    }
    try {
      return CoderUtils.clone(coder, held.accum);
    } catch (CoderException e) {
      throw new IllegalStateException("cannot copy a combining state's accumulator with " + coder, e);
    }
  }

  @Override
  public AccumT getAccum() {
    Held<AccumT> held = held();
    if (held == null) {
      return fn.createAccumulator();
    }
    held.shared = true;
    return held.accum;
  }

  @Override
  public void add(InputT value) {
    Held<AccumT> held = held();
    if (held == null) {
      store.put(cell, new Held<>(fn.addInput(fn.createAccumulator(), value), false), heldCoder);
      return;
    }
    held.accum = fn.addInput(writable(held), value);
    held.shared = false;
    store.put(cell, held, heldCoder);
  }

  @Override
  public void addAccum(AccumT accum) {
    Held<AccumT> held = held();
    if (held == null) {
      store.put(cell, new Held<>(accum, true), heldCoder);
      return;
    }
    AccumT merged = fn.mergeAccumulators(List.of(writable(held), accum));
    held.accum = merged;
    held.shared = merged == accum;
    store.put(cell, held, heldCoder);
  }

  @Override
  public AccumT mergeAccumulators(Iterable<AccumT> accumulators) {
    return fn.mergeAccumulators(accumulators);
  }

  @Override
  public OutputT read() {
    Held<AccumT> held = held();
    if (held == null) {
      return fn.extractOutput(fn.createAccumulator());
    }
    OutputT out = fn.extractOutput(held.accum);
    if (!isImmutable(out)) {
      held.shared = true;
    }
    return out;
  }

  /**
   * Whether {@code value} is of a class whose instances never change (boxed primitives, strings,
   * Joda instants), so that a reader holding it cannot see a later write to the accumulator it came
   * from. A count or sum trigger reads such an output per element ({@code AfterPane}'s
   * element count, a {@code Sum} of longs), which then needs no copy on the next write. Exact
   * classes only: a subclass may add mutable state.
   */
  static boolean isImmutable(Object value) {
    if (value == null) {
      return true;
    }
    Class<?> c = value.getClass();
    return c == Long.class || c == Integer.class || c == Boolean.class || c == Double.class
        || c == String.class || c == Float.class || c == Short.class || c == Byte.class
        || c == Character.class || c == org.joda.time.Instant.class;
  }

  @Override
  public ReadableState<Boolean> isEmpty() {
    return lazy(() -> held() == null);
  }

  @Override
  public CombiningState<InputT, AccumT, OutputT> readLater() {
    return this;
  }

  @Override
  public void clear() {
    store.delete(cell);
  }

  /**
   * A cached accumulator and whether something outside the cell may hold it (or parts of it).
   * Mutated in place by the owning thread; never leaves {@link CachedCombining}.
   */
  static final class Held<A> {
    A accum;
    boolean shared;

    Held(A accum, boolean shared) {
      this.accum = accum;
      this.shared = shared;
    }
  }

  /**
   * Encodes a {@link Held} accumulator as the accumulator alone (the cell's bytes are exactly the
   * accumulator coder's, nested or outer as the caller asks); decodes to an unshared one.
   */
  static final class HeldCoder<A> extends StructuredCoder<Held<A>> {
    private final Coder<A> accumCoder;

    HeldCoder(Coder<A> accumCoder) {
      this.accumCoder = accumCoder;
    }

    @Override
    public void encode(Held<A> value, OutputStream out) throws IOException {
      accumCoder.encode(value.accum, out);
    }

    @Override
    @SuppressWarnings("deprecation")
    public void encode(Held<A> value, OutputStream out, Context context) throws IOException {
      accumCoder.encode(value.accum, out, context);
    }

    @Override
    public Held<A> decode(InputStream in) throws IOException {
      return new Held<>(accumCoder.decode(in), false);
    }

    @Override
    @SuppressWarnings("deprecation")
    public Held<A> decode(InputStream in, Context context) throws IOException {
      return new Held<>(accumCoder.decode(in, context), false);
    }

    @Override
    public List<? extends Coder<?>> getCoderArguments() {
      return List.of(accumCoder);
    }

    @Override
    public void verifyDeterministic() throws NonDeterministicException {
      accumCoder.verifyDeterministic();
    }
  }
}
