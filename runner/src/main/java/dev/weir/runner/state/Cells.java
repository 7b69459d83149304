package dev.weir.runner.state;

import dev.weir.state.cache.CachedStore;
import dev.weir.state.cache.StateKey;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.function.Supplier;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.CustomCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.state.ReadableState;
import org.apache.beam.sdk.util.CoderUtils;

/**
 * Base of the state kinds {@link CachedStateInternals} binds ({@code CachedValue},
 * {@code CachedBag}, ...), and what they share: identity by cell, lazy reads, key encoding, the
 * null-element marker and sequence counters.
 *
 * <p>A state object is a stateless view of its cells in the container's cached store (see
 * {@link CellLayout} for their keys): it holds nothing but the cell keys and coders, so binding
 * it again is always safe, and two state objects are equal when they are of the same kind and
 * address the same cells (runners-core's merging compares states with {@code equals}).
 *
 * <p>Values are cached by reference: state objects never mutate a value after putting it,
 * except combining accumulators, which are put again after every {@code addInput} and copied
 * first if a read handed them out ({@link CachedCombining}), and a bag's last chunk, appended to
 * and put again in the same call and never handed out ({@link CachedBag}).
 *
 * <p>Threading: confined to the owning task's container thread.
 */
abstract class Cells {
  /** Stands in for a null element in the cache (which holds no nulls); written back as the coder's null. */
  static final Object NULL_ELEMENT = new Object();

  /** The bytes that tell this state's cells apart from every other state's: a cell or prefix key. */
  private final byte[] identity;

  Cells(byte[] identity) {
    this.identity = identity;
  }

  @Override
  public final boolean equals(Object o) {
    return o != null && o.getClass() == getClass() && Arrays.equals(((Cells) o).identity, identity);
  }

  @Override
  public final int hashCode() {
    return Arrays.hashCode(identity);
  }

  /**
   * A readable state evaluated when read, not when created: Beam lets a DoFn take
   * {@code isEmpty()}/{@code get()} first and read it after further writes.
   */
  static <T> ReadableState<T> lazy(Supplier<T> read) {
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

  /**
   * Encodes a map key, set element or multimap key for a cell key.
   *
   * @throws IllegalStateException if the coder fails
   */
  static <T> byte[] encodeKey(Coder<T> coder, T value) {
    try {
      return CoderUtils.encodeToByteArray(coder, value);
    } catch (CoderException e) {
      throw new IllegalStateException("cannot encode a state key with " + coder, e);
    }
  }

  /**
   * Decodes what {@link #encodeKey} wrote.
   *
   * @throws IllegalStateException if the coder fails
   */
  static <T> T decodeKey(Coder<T> coder, byte[] encoded) {
    try {
      return CoderUtils.decodeFromByteArray(coder, encoded);
    } catch (CoderException e) {
      throw new IllegalStateException("cannot decode a state key with " + coder, e);
    }
  }

  /**
   * Puts a possibly-null element value ({@link #NULL_ELEMENT} stands in for null, written with
   * {@code nullCoder}, the operator's {@link StateCoders#nullElement} of {@code coder}).
   */
  static <T> void putNullable(CachedStore store, StateKey cell, T value, Coder<T> coder, NullElementCoder<T> nullCoder) {
    if (value == null) {
      store.put(cell, NULL_ELEMENT, nullCoder);
    } else {
      store.put(cell, value, coder);
    }
  }

  /** The element a cached value stands for: null for {@link #NULL_ELEMENT}. */
  @SuppressWarnings("unchecked")
  static <T> T unmask(Object value) {
    return value == NULL_ELEMENT ? null : (T) value;
  }

  /** Next tie-break sequence number of a list or multimap, from its counter cell (a read and a put). */
  static long nextSequence(CachedStore store, StateKey counter) {
    Long n = store.get(counter, VarLongCoder.of());
    long next = n == null ? 0 : n;
    store.put(counter, next + 1, VarLongCoder.of());
    return next;
  }

  /** Encodes {@link #NULL_ELEMENT} as the element coder encodes null. */
  static final class NullElementCoder<T> extends CustomCoder<Object> {
    private final Coder<T> inner;

    NullElementCoder(Coder<T> inner) {
      this.inner = inner;
    }

    @Override
    public void encode(Object value, OutputStream out) throws IOException {
      inner.encode(null, out);
    }

    @Override
    public Object decode(InputStream in) throws IOException {
      inner.decode(in);
      return NULL_ELEMENT;
    }
  }
}
