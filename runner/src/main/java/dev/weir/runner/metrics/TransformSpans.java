package dev.weir.runner.metrics;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import one.profiler.Recording;
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
 * reports itself unavailable. While recording, a transition reads the thread's sample buffer (a
 * direct buffer whose first long is the JFR time of the thread's latest sample) and nothing else:
 * when that time changed since the previous transition, the segment now ending holds every sample
 * taken since the previous one, so it is written as a span from just after the previous sample (or
 * the end of the previous span, whichever is later) to now: one clock read per sample, not per
 * transition, and spans of one thread still never overlap. {@code Span.start} and
 * {@code Span.emitIfProfiled} cost a clock read, a {@code ThreadLocal} lookup and a virtual-thread
 * check each; with several fused transforms per element that was about 6% of the CPU samples of
 * Nexmark Q0 and Q3 under {@code --profile}. The buffer is {@code Span}'s own, found once per
 * thread by reflection; if that fails (another async-profiler version), transitions go through
 * {@code Span}'s calls as before.
 *
 * <p>The executor drives it through {@link StepScope}, whose one bracket also switches the Beam
 * metrics container; {@link #enter}/{@link #exit} remain for code that only tags spans.
 *
 * <p>Threading: one instance per container thread, used only by that thread; transitions nest
 * (enter/exit pairs, in try/finally) exactly like the fused calls they bracket.
 */
@Internal
public final class TransformSpans {
  /** async-profiler's per-thread sample buffers ({@code Span.LOCAL_BUF}), or null if not found. */
  private static final ThreadLocal<?> SPAN_BUFFERS = spanBuffers();
  /** Stands for "the sample buffer cannot be read": transitions go through {@code Span}'s calls. */
  private static final ByteBuffer FALLBACK = ByteBuffer.allocate(0);
  private static final long NO_MARK = Long.MIN_VALUE;
  /** This thread's sample buffer, found at the first transition while recording; null before. */
  private ByteBuffer samples;
  /** The buffer's value (time of the thread's latest sample) at the last transition; {@link #NO_MARK} if none. */
  private long mark = NO_MARK;
  /**
   * JFR time at which the last span written by the buffer path ended, or at which this thread's
   * first transition of the recording ran; 0 if neither.
   */
  private long lastSpanEnd;
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
    if (Recording.state() != Recording.RUNNING) { // the whole cost when not recording
      mark = NO_MARK;
      segmentStart = 0;
      current = tag;
      return;
    }
    if (samples == null) {
      samples = threadSampleBuffer();
    }
    if (samples != FALLBACK) {
      long latest = samples.getLong(0);
      if (mark == NO_MARK) {
        // the first transition of this recording on this thread: no span may start before it (the
        // buffer holds 0 until the thread's first sample, and an older recording's sample time
        // after that), so later spans start from here at the earliest; one clock read per thread
        lastSpanEnd = Math.max(lastSpanEnd, Recording.timestamp());
      }
      if (latest != mark && mark != NO_MARK && current != null) {
        // the thread was sampled in this segment, after the previous sample: a span from just
        // after that one (or from the end of the previous span, so that spans never overlap) to
        // now holds exactly the samples of this segment
        long now = Recording.timestamp();
        Span.emitIfProfiled(Math.max(mark + 1, lastSpanEnd), now, current);
        lastSpanEnd = now;
      }
      mark = latest;
      current = tag;
      return;
    }
    long now = Span.start(); // the buffer cannot be read: Span's own calls, a clock read each
    if (segmentStart != 0 && now != 0 && current != null) {
      Span.emitIfProfiled(segmentStart, now, current);
    }
    segmentStart = now;
    current = tag;
  }

  /**
   * This thread's sample buffer from {@code Span}'s thread-local, or {@link #FALLBACK} if it
   * cannot be read (or is {@code Span}'s stand-in, which never changes).
   */
  private static ByteBuffer threadSampleBuffer() {
    if (SPAN_BUFFERS == null) {
      return FALLBACK;
    }
    Object buffer = SPAN_BUFFERS.get(); // registers the thread with the profiler, as Span.start does
    return buffer instanceof ByteBuffer b && b.capacity() >= Long.BYTES && b.getLong(0) != Long.MAX_VALUE
        ? b : FALLBACK;
  }

  private static ThreadLocal<?> spanBuffers() {
    try {
      Field field = Span.class.getDeclaredField("LOCAL_BUF");
      field.setAccessible(true);
      return field.get(null) instanceof ThreadLocal<?> local ? local : null;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null; // another async-profiler version: transitions go through Span's own calls
    }
  }
}
