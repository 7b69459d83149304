package dev.weir.runner.metrics;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.apache.beam.sdk.annotations.Internal;

/**
 * Elements into and out of one PTransform in one task: the "records in / records out" Flink's web
 * UI shows per operator, for every fused transform, whether or not its DoFns report Beam metrics.
 *
 * <p>Who counts: each edge of a fused stage ({@code task.SpannedReceiver}) counts an element in for
 * the consuming transform and out for the producing one (an output read by several consumers
 * counts out once); a task's input edge counts in only. So "out" is what a transform emitted to
 * consumers in its stage, including the stream writer that sends it to the next stage. Timers and
 * watermarks are not elements.
 *
 * <p>Cost: one plain read and one opaque write of a field of this object per element and edge end,
 * on the container thread that owns the task; no allocation, no locked instruction. The object
 * belongs to one task's step, so no two threads ever write one counter (a shared counter would
 * bounce its cache line between container threads).
 *
 * <p>Threading: written by the owning task's container thread only; read from any thread (JMX,
 * the Prometheus endpoint, the job page), which sees some recent value (opaque reads never tear).
 */
@Internal
public final class ElementCounter {
  private static final VarHandle IN;
  private static final VarHandle OUT;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      IN = lookup.findVarHandle(ElementCounter.class, "in", long.class);
      OUT = lookup.findVarHandle(ElementCounter.class, "out", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // through IN
  private long in;
  @SuppressWarnings("unused") // through OUT
  private long out;

  /** One element went into the transform. Owning thread only. */
  public void countIn() {
    IN.setOpaque(this, (long) IN.get(this) + 1);
  }

  /** The transform emitted one element. Owning thread only. */
  public void countOut() {
    OUT.setOpaque(this, (long) OUT.get(this) + 1);
  }

  /** Elements into the transform so far. Any thread. */
  public long elementsIn() {
    return (long) IN.getOpaque(this);
  }

  /** Elements the transform emitted so far. Any thread. */
  public long elementsOut() {
    return (long) OUT.getOpaque(this);
  }
}
