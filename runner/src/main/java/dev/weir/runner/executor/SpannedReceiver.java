package dev.weir.runner.executor;

import dev.weir.runner.operators.Receiver;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * An edge of a fused stage that marks the transition into the consuming transform for
 * {@link TransformSpans}: every element passed along the edge runs inside the consumer's span
 * segment, and the caller's segment resumes when it returns. One extra call per element and
 * edge, no allocation.
 *
 * <p>Threading: the owning task's container thread only.
 */
final class SpannedReceiver implements Receiver {
  private final Receiver target;
  private final String tag;
  private final TransformSpans spans;

  SpannedReceiver(Receiver target, String tag, TransformSpans spans) {
    this.target = target;
    this.tag = tag;
    this.spans = spans;
  }

  @Override
  public void accept(WindowedValue<?> element) {
    String previous = spans.enter(tag);
    try {
      target.accept(element);
    } finally {
      spans.exit(previous);
    }
  }

  @Override
  public void acceptKeyed(byte[] keyBytes, WindowedValue<?> element) {
    String previous = spans.enter(tag);
    try {
      target.acceptKeyed(keyBytes, element);
    } finally {
      spans.exit(previous);
    }
  }
}
