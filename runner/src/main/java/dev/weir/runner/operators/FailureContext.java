package dev.weir.runner.operators;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.util.UserCodeException;

/**
 * Where in a Weir job a user's exception was thrown (transform, stage, task/partition), attached
 * to that exception as a <em>suppressed</em> exception instead of wrapping it, so that the job's
 * {@code PipelineExecutionException} has the user's own exception (a DoFn's, a source reader's, a
 * coder's, a {@code CombineFn}'s) as its cause, with its cause chain intact, and Weir's context
 * still prints with its stack trace. The idea of context as suppressed exceptions is Java's own
 * (try-with-resources); Beam's Direct runner surfaces the user's exception the same way.
 *
 * <p>Threading: {@link #attach} is called on the failing task's container thread, once per layer
 * that adds context (operator edge, task); each layer adds one suppressed exception.
 */
@Internal
public final class FailureContext extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private FailureContext(String message) {
    super(message, null, false, false); // the user's exception carries the stack trace
  }

  /**
   * Adds {@code context} (e.g. "in transform 'Parse' (task stage-1-p0)") to the user's exception
   * inside {@code failure} (Beam's {@link UserCodeException} layers are looked through) and returns
   * what the caller should throw: {@code failure} itself if unchecked, else {@code failure} wrapped
   * in a {@link UserCodeException} (which {@code WeirPipelineResult} unwraps).
   */
  public static RuntimeException attach(Throwable failure, String context) {
    return attach(failure, context, false);
  }

  /**
   * As {@link #attach(Throwable, String)}; with {@code innermostOnly}, adds nothing if the user's
   * exception already has a context (the edges of a fused chain: only the failing transform is
   * named, not every transform the element passed on its way).
   */
  public static RuntimeException attach(Throwable failure, String context, boolean innermostOnly) {
    Throwable user = userCause(failure);
    for (Throwable s : user.getSuppressed()) {
      if (s instanceof FailureContext c && (innermostOnly || c.getMessage().equals(context))) {
        return rethrowable(failure);
      }
    }
    user.addSuppressed(new FailureContext(context));
    return rethrowable(failure);
  }

  /** The innermost exception below {@link UserCodeException} layers (the user's own). */
  public static Throwable userCause(Throwable t) {
    Throwable cause = t;
    while (cause instanceof UserCodeException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  private static RuntimeException rethrowable(Throwable failure) {
    if (failure instanceof RuntimeException r) {
      return r;
    }
    if (failure instanceof Error e) {
      throw e;
    }
    return UserCodeException.wrap(failure);
  }
}
