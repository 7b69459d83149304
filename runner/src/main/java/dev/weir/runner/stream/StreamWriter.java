package dev.weir.runner.stream;

import org.apache.beam.sdk.annotations.Internal;

import dev.weir.runner.operators.Operator;
import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.state.CachedStateInternals;
import dev.weir.runner.state.KeyGroups;
import dev.weir.runner.translation.StreamPlan;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * The tail of a stage that feeds another stage: writes elements into an {@link InProcessStream}
 * through the task's {@link TaskOutbox}, and broadcasts the task's watermarks and end-of-stream to
 * every partition of the stream.
 *
 * <p>SHUFFLE streams encode the element's key once with the key coder, pick the partition that owns
 * the key's {@linkplain KeyGroups key group} and pass the bytes along with the element ({@link KeyedElement}), so
 * the consuming GroupByKey does not encode the key again. FORWARD streams send producer partition p to consumer
 * partition p mod n. BROADCAST streams (side inputs) send every element to every partition.
 *
 * <p>Elements go by reference; a streamed state read in an element (a large map, set, ordered
 * list or multimap read a DoFn outputs) is copied first, since it reads from this container's
 * store ({@link CachedStateInternals#detachReads}).
 *
 * <p>Threading: confined to the producing task's container thread, except {@link #elementsSent()}
 * (any thread: monitoring reads the count the writer publishes with an opaque write per element).
 */
@Internal
public final class StreamWriter implements Operator {
  private static final VarHandle SENT;

  static {
    try {
      SENT = MethodHandles.lookup().findVarHandle(StreamWriter.class, "sent", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final InProcessStream stream;
  private final TaskOutbox outbox;
  private final int producer;
  private final String taskName;
  private final boolean shuffle;
  private final boolean broadcast;
  private final int forwardPartition;
  @SuppressWarnings("rawtypes")
  private final Coder keyCoder;
  /** The job's key groups ({@link #open}): a shuffled key goes to the partition owning its key group. */
  private KeyGroups keyGroups = KeyGroups.DEFAULT;
  /** Elements accepted; written by the owning thread only (opaque), read by {@link #elementsSent()}. */
  private long sent;

  public StreamWriter(InProcessStream stream, TaskOutbox outbox, int producer, String taskName) {
    this.stream = stream;
    this.outbox = outbox;
    this.producer = producer;
    this.taskName = taskName;
    this.shuffle = stream.plan().kind() == StreamPlan.Kind.SHUFFLE;
    this.broadcast = stream.plan().kind() == StreamPlan.Kind.BROADCAST;
    this.forwardPartition = producer % stream.partitionCount();
    this.keyCoder = stream.plan().keyCoder();
  }

  /** Takes the job's key groups, by which a shuffle picks partitions, from the task's state. */
  @Override
  public void open(OperatorContext context) {
    if (context.state() != null) {
      keyGroups = context.state().keyGroups();
    }
  }

  @Override
  public void accept(WindowedValue<?> element) {
    SENT.setOpaque(this, sent + 1);
    // The element leaves this thread by reference: streamed state reads in it are copied first.
    CachedStateInternals.detachReads(element.getValue());
    if (broadcast) {
      for (int p = 0; p < stream.partitionCount(); p++) {
        send(p, null, element); // by reference: every consumer task shares the element object
      }
      return;
    }
    if (!shuffle) {
      send(forwardPartition, null, element);
      return;
    }
    byte[] keyBytes = encodeKey(((KV<?, ?>) element.getValue()).getKey());
    send(keyGroups.partitionOfKey(keyBytes, stream.partitionCount()), keyBytes, element);
  }

  @Override
  public void acceptKeyed(byte[] keyBytes, WindowedValue<?> element) {
    accept(element); // keys are re-encoded: a keyed input may feed a differently keyed shuffle
  }

  /** Elements this writer sent downstream so far (a broadcast element counts once). Any thread. */
  public long elementsSent() {
    return (long) SENT.getOpaque(this);
  }

  /** Sends a watermark (epoch ms) from this producer to every partition. */
  public void sendWatermark(long watermarkMs) {
    sendWatermark(watermarkMs, false);
  }

  /**
   * Sends a watermark (epoch ms) from this producer to every partition, marked as moved by the
   * job's drain if {@code drained} ({@link ProducerWatermark#drained()}).
   */
  public void sendWatermark(long watermarkMs, boolean drained) {
    for (int p = 0; p < stream.partitionCount(); p++) {
      send(p, null, new ProducerWatermark(watermarkMs, producer, taskName, drained));
    }
  }

  /** Sends this producer's end-of-stream to every partition. */
  public void sendEndOfStream() {
    for (int p = 0; p < stream.partitionCount(); p++) {
      send(p, null, new ProducerEndOfStream(producer, taskName));
    }
  }

  private void send(int partition, byte[] key, Object message) {
    outbox.send(stream, partition, KeyedElement.of(key, message));
  }

  @SuppressWarnings("unchecked")
  private byte[] encodeKey(Object key) {
    try {
      return CoderUtils.encodeToByteArray(keyCoder, key);
    } catch (CoderException e) {
      throw new IllegalStateException("cannot encode a key for " + stream.plan().name(), e);
    }
  }

}
