package dev.weir.runner.executor;

import one.profiler.Span;
import org.apache.beam.sdk.annotations.Internal;

/**
 * Tags the work of each PTransform on a container thread with async-profiler spans
 * ({@code profiler.Span} JFR events, tag = the transform's full name), so that a profile splits
 * by PTransform even when several transforms are fused on one thread.
 *
 * <h2>Exclusive segments, emitted only when sampled</h2>
 *
 * Fused operators call each other per element (a ParDo's output is the next ParDo's input), so a
 * span per (transform, bundle) from its first to its last call would overlap the spans of every
 * transform downstream of it, and jfrconv's {@code --tag} filter (samples of the span's thread
 * inside the span's interval) would count a sample once per enclosing transform. Instead the
 * thread always has at most one current tag: {@link #enter} closes the current segment and opens
 * one for the callee, {@link #exit} closes the callee's segment and resumes the caller's. A
 * segment is written with {@link Span#emitIfProfiled}, which emits it only if the profiler took
 * a sample of this thread inside it: the number of spans per bundle is bounded by the samples
 * taken during the bundle (about one per sampling interval), not by its elements, and each sample
 * falls into exactly one segment, that of the transform actually running.
 *
 * <h2>Cost</h2>
 *
 * Without a running recording ({@code Span.start()} returns 0: the native library is not loaded,
 * or loaded but not recording) each transition is one volatile read of async-profiler's
 * recording state and a branch; nothing is allocated. The class is safe to use in a JVM without
 * the agent: async-profiler's {@code Recording} catches the failed native registration and
 * reports itself unavailable. While recording, a transition costs a JFR clock read and a
 * thread-local read; a span is written only for the few segments that contain a sample.
 *
 * <p>The executor drives it through {@link StepScope}, whose one bracket also switches the Beam
 * metrics container; {@link #enter}/{@link #exit} remain for code that only tags spans.
 *
 * <p>Threading: one instance per container thread, used only by that thread; transitions nest
 * (enter/exit pairs, in try/finally) exactly like the fused calls they bracket.
 */
@Internal
public final class TransformSpans {
  /** Tag of the running segment, or null when executor code (no transform) runs. */
  private String current;
  /** {@link Span#start()} value when the running segment began; 0 when not recording. */
  private long segmentStart;

  /**
   * Makes {@code tag} the running transform and returns the previous tag, which the caller passes
   * to {@link #exit} when the transform's call returns.
   */
  public String enter(String tag) {
    String previous = current;
    switchTo(tag);
    return previous;
  }

  /** Ends the running transform's segment and resumes {@code previous} (from {@link #enter}). */
  public void exit(String previous) {
    switchTo(previous);
  }

  /** The running transform's tag, or null (for tests). */
  public String current() {
    return current;
  }

  /**
   * Makes {@code tag} the running transform without remembering the previous one: for
   * {@link StepScope}, which keeps the running step itself.
   */
  void switchTo(String tag) {
    long now = Span.start(); // 0 unless a recording is running: the whole cost when off
    if (segmentStart != 0 && now != 0 && current != null) {
      Span.emitIfProfiled(segmentStart, now, current);
    }
    segmentStart = now;
    current = tag;
  }
}
