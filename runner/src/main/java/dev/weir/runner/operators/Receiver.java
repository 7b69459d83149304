package dev.weir.runner.operators;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * Accepts the elements of one PCollection inside a task: the next operator of a fused chain, a
 * fan-out to several, or a stream writer.
 *
 * <p>Threading: called only on the task's container thread. Errors in user code propagate as
 * unchecked exceptions (Beam's {@code UserCodeException}) and fail the job.
 */
@FunctionalInterface
@Internal
public interface Receiver {
  /** Processes one element (one or more windows, a timestamp and a pane). */
  void accept(WindowedValue<?> element);

  /**
   * Processes one element whose key was already encoded upstream (by a shuffle writer), so that
   * a keyed operator need not encode it again. Default: ignores the key bytes.
   *
   * @param keyBytes the key encoded with the key coder; never modified by the callee
   */
  default void acceptKeyed(byte[] keyBytes, WindowedValue<?> element) {
    accept(element);
  }

  /** A receiver that drops everything (an output nobody consumes). */
  Receiver DISCARD = element -> {};

  /** Returns a receiver that passes each element to every one of {@code targets}, in order. */
  static Receiver fanOut(Receiver... targets) {
    if (targets.length == 0) {
      return DISCARD;
    }
    if (targets.length == 1) {
      return targets[0];
    }
    return new Receiver() {
      @Override
      public void accept(WindowedValue<?> element) {
        for (Receiver target : targets) { // array loop: no iterator allocation per element
          target.accept(element);
        }
      }

      @Override
      public void acceptKeyed(byte[] keyBytes, WindowedValue<?> element) {
        for (Receiver target : targets) {
          target.acceptKeyed(keyBytes, element);
        }
      }
    };
  }
}
