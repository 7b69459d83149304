package dev.weir.runner.task;

import dev.weir.runner.operators.FailureContext;
import dev.weir.runner.operators.Receiver;
import java.io.IOException;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.util.UserCodeException;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * An edge of a fused stage whose elements go through their PCollection's coder: each element's
 * value is encoded and decoded, and the consumers get the decoded copy (timestamp, windows and
 * pane unchanged). Which PCollections get one is decided once at translation
 * ({@code translation.EncodingRule}, see DESIGN.md's "Elements and their coders"); every other
 * edge passes elements on by reference.
 *
 * <p>Errors: a coder that fails to encode or decode fails the job with the coder's exception as
 * the cause ({@link UserCodeException}, unwrapped by {@code WeirPipelineResult}), and the
 * PCollection's coder named as {@link FailureContext}.
 *
 * <p>Cost per element: one encode into a fresh byte array and one decode (Beam's
 * {@link CoderUtils}); the same as a serializing runner's exchange. Threading: the owning task's
 * container thread only.
 */
final class CoderRoundTrip implements Receiver {
  private final Coder<Object> coder;
  private final Receiver target;

  @SuppressWarnings("unchecked")
  private CoderRoundTrip(Coder<?> coder, Receiver target) {
    this.coder = (Coder<Object>) coder;
    this.target = target;
  }

  /** {@code target} behind a round trip through {@code coder}; {@code target} itself if null. */
  static Receiver wrap(Coder<?> coder, Receiver target) {
    return coder == null ? target : new CoderRoundTrip(coder, target);
  }

  @Override
  public void accept(WindowedValue<?> element) {
    target.accept(roundTrip(element));
  }

  @Override
  public void acceptKeyed(byte[] keyBytes, WindowedValue<?> element) {
    target.acceptKeyed(keyBytes, roundTrip(element));
  }

  private WindowedValue<?> roundTrip(WindowedValue<?> element) {
    Object copy;
    try {
      copy = CoderUtils.decodeFromByteArray(coder, CoderUtils.encodeToByteArray(coder, element.getValue()));
    } catch (IOException | RuntimeException e) {
      throw FailureContext.attach(UserCodeException.wrap(e), "round-tripping an element through " + coder);
    }
    return element.withValue(copy);
  }
}
