package dev.weir.runner.operators;

import java.io.Serializable;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.util.SerializableUtils;

/**
 * A user function (a DoFn, as the pipeline holds it) serialized once per transform, from which
 * every task deserializes its own instance.
 *
 * <p>Why: each task of a stage gets its own DoFn instance, so that no instance is ever used by two
 * threads or by two bundles at once. Beam's {@code SerializableUtils.clone} makes one by
 * serializing the pipeline's instance and deserializing the bytes: with a task per source split
 * (Nexmark's sources have 100) and a dozen fused ParDos, every job start serialized the same DoFns
 * 1,100 times (48 samples in a 1-ms CPU profile of one five-pass Q2 run; see runner/BENCHMARKS.md,
 * issue 14, session 17). Here the bytes are written at the first copy and later copies only read
 * them.
 *
 * <p>Copies are equal to those of {@code SerializableUtils.clone} as long as the pipeline's instance
 * is not changed after the first copy, which Beam's model assumes anyway (a DoFn is serialized to
 * be shipped when the pipeline runs).
 *
 * <p>Threading: safe for concurrent use by the container threads opening their tasks; the bytes are
 * written once, under this object's lock.
 *
 * @param <T> the function's type
 */
@Internal
public final class SerializedCopies<T extends Serializable> {
  private final T prototype;
  /** Written once, under the lock; read without it once set. */
  private volatile byte[] bytes;

  /** Copies of {@code prototype}; nothing is serialized until the first {@link #newCopy()}. */
  public SerializedCopies(T prototype) {
    this.prototype = prototype;
  }

  /** The pipeline's own instance: for reading its class and signature, never to run. */
  public T prototype() {
    return prototype;
  }

  /**
   * A new instance, deserialized from the prototype's bytes (serialized at the first call).
   *
   * @throws IllegalArgumentException (Beam's) naming the function if it cannot be serialized or
   *     deserialized
   */
  @SuppressWarnings("unchecked")
  public T newCopy() {
    byte[] serialized = bytes;
    if (serialized == null) {
      synchronized (this) {
        serialized = bytes;
        if (serialized == null) {
          serialized = SerializableUtils.serializeToByteArray(prototype);
          bytes = serialized;
        }
      }
    }
    return (T) SerializableUtils.deserializeFromByteArray(serialized, prototype.getClass().getName());
  }
}
