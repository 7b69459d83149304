package dev.weir.runner.task;

import dev.weir.runner.metrics.ElementCounter;
import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.operators.FailureContext;

import dev.weir.runner.operators.Receiver;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * An edge of a fused stage that enters the consuming transform's {@link StepScope.Step}: every
 * element passed along the edge runs with the consumer's metrics container current and inside
 * its span segment, and the caller's step resumes when it returns. One extra call per element and
 * edge, a few field writes, no allocation. A failure is rethrown as is, with the consuming
 * transform's name attached to the user's exception ({@link FailureContext}). Each element counts
 * in for the consumer and, on the producer's first edge of an output, out for the producer
 * ({@link ElementCounter}: an opaque write each, owned by this task's thread).
 *
 * <p>Threading: the owning task's container thread only.
 */
final class SpannedReceiver implements Receiver {
  private final Receiver target;
  private final StepScope.Step step;
  private final StepScope scope;
  private final ElementCounter in;
  /** The producer's counter; a private, never read one where this edge does not count its output. */
  private final ElementCounter out;

  /**
   * @param producerOut the producing step's counter, if this edge counts its output (the first
   *     consumer of an output); null for an edge that does not (further consumers, a task's input)
   */
  SpannedReceiver(Receiver target, StepScope.Step step, StepScope scope, ElementCounter producerOut) {
    this.target = target;
    this.step = step;
    this.scope = scope;
    this.in = step.elements();
    this.out = producerOut != null ? producerOut : new ElementCounter();
  }

  @Override
  public void accept(WindowedValue<?> element) {
    out.countOut();
    in.countIn();
    StepScope.Step previous = scope.enter(step);
    try {
      target.accept(element);
    } catch (RuntimeException e) {
      throw FailureContext.attach(e, "in transform '" + step.name() + "'", true);
    } finally {
      scope.exit(previous);
    }
  }

  @Override
  public void acceptKeyed(byte[] keyBytes, WindowedValue<?> element) {
    out.countOut();
    in.countIn();
    StepScope.Step previous = scope.enter(step);
    try {
      target.acceptKeyed(keyBytes, element);
    } catch (RuntimeException e) {
      throw FailureContext.attach(e, "in transform '" + step.name() + "'", true);
    } finally {
      scope.exit(previous);
    }
  }
}
