package dev.weir.runner.task;

import dev.weir.runner.operators.FailureContext;
import dev.weir.runner.metrics.StepScope;

import dev.weir.runner.operators.Receiver;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * An edge of a fused stage that enters the consuming transform's {@link StepScope.Step}: every
 * element passed along the edge runs with the consumer's metrics container current and inside
 * its span segment, and the caller's step resumes when it returns. One extra call per element and
 * edge, a few field writes, no allocation. A failure is rethrown as is, with the consuming
 * transform's name attached to the user's exception ({@link FailureContext}).
 *
 * <p>Threading: the owning task's container thread only.
 */
final class SpannedReceiver implements Receiver {
  private final Receiver target;
  private final StepScope.Step step;
  private final StepScope scope;

  SpannedReceiver(Receiver target, StepScope.Step step, StepScope scope) {
    this.target = target;
    this.step = step;
    this.scope = scope;
  }

  @Override
  public void accept(WindowedValue<?> element) {
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
