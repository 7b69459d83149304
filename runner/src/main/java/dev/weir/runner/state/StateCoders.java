package dev.weir.runner.state;

import java.util.IdentityHashMap;
import java.util.List;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.ListCoder;

/**
 * The coders an operator's state cells are written with that wrap one of its states' own coders:
 * a combining state's held accumulator ({@link CachedCombining.HeldCoder}), a bag's chunk (a
 * {@link ListCoder} of the element coder) and an ordered list's or multimap's null element
 * ({@link Cells.NullElementCoder}). One instance per wrapped coder, shared by every key of the
 * operator.
 *
 * <p>Why: the object cache decodes back the first value it writes of each coder instance
 * ({@code ObjectCache#checkReadable}) and remembers the instances it checked. A wrapper built per
 * key and window made that one decode, and one remembered instance, per key and window: on Nexmark
 * Q5 (a count per auction and sliding window) the combining state's coders grew the cache's map of
 * checked coders by every window of every auction, and the commit that added the check was the
 * largest step of Q5's slowdown during issue 44 ({@code runner/benchmarks/runs/issue44/README.md}).
 *
 * <p>Bound: one entry per distinct state coder of the operator's state specs (a handful; a DoFn's
 * specs are fixed).
 *
 * <p>Threading: not thread-safe; confined to the task thread of the operator that owns it, like
 * {@link NamespaceNames}.
 */
@Internal
public final class StateCoders {
  private final IdentityHashMap<Coder<?>, CachedCombining.HeldCoder<?>> held = new IdentityHashMap<>();
  private final IdentityHashMap<Coder<?>, Coder<?>> chunks = new IdentityHashMap<>();
  private final IdentityHashMap<Coder<?>, Cells.NullElementCoder<?>> nullElements = new IdentityHashMap<>();

  /** The coder of a combining state's cached accumulator over {@code accumCoder}. */
  @SuppressWarnings("unchecked")
  <A> CachedCombining.HeldCoder<A> held(Coder<A> accumCoder) {
    return (CachedCombining.HeldCoder<A>) held.computeIfAbsent(accumCoder, CachedCombining.HeldCoder::new);
  }

  /** The coder of a bag's chunks of elements coded by {@code elementCoder}. */
  @SuppressWarnings("unchecked")
  <T> Coder<List<T>> chunk(Coder<T> elementCoder) {
    return (Coder<List<T>>) chunks.computeIfAbsent(elementCoder, c -> ListCoder.of(c));
  }

  /** The coder of the null-element marker of elements coded by {@code elementCoder}. */
  @SuppressWarnings("unchecked")
  <T> Cells.NullElementCoder<T> nullElement(Coder<T> elementCoder) {
    return (Cells.NullElementCoder<T>) nullElements.computeIfAbsent(elementCoder, Cells.NullElementCoder::new);
  }
}
