package dev.weir.state.benchmarks;

import java.util.concurrent.ArrayBlockingQueue;

/**
 * The message source of the Samza scenarios: a bounded in-process queue between a producer and a
 * consumer that run on the same thread, one hand-off per call of {@link #next()}.
 *
 * <p>{@link #next()} is one step of a single-threaded run loop: the producer offers the next
 * message (a uniform random pick among the pre-generated messages, so every key is equally
 * likely), and the consumer polls the oldest one. The queue is kept half full from the start, so
 * each message waits {@code capacity / 2} steps between producer and consumer, as in a stream
 * whose buffer is neither empty nor at its bound. There is no cross-thread hand-off, no
 * serialization and no network: this is the floor under the other scenarios, not a stand-in for
 * Kafka.
 *
 * <p>Threading: one thread.
 */
public final class InProcessStream {

  /** Queue implementations the stream can run on. */
  public enum Kind {
    /** {@link ArrayBlockingQueue}: a lock per offer and per poll (uncontended here). */
    ARRAY_BLOCKING_QUEUE,
    /** A plain power-of-two array ring with two counters, no locks: the cheapest bounded queue. */
    ARRAY_RING
  }

  /** Capacity of the queue, in messages. */
  static final int CAPACITY = 1024;

  private final MessageQueue queue;
  private final byte[][] messages;
  private final int[] indices;
  private final int indexMask;
  private int cursor;

  InProcessStream(Kind kind, byte[][] messages, int[] indices) {
    if (Integer.bitCount(indices.length) != 1) {
      throw new IllegalArgumentException("index stream length must be a power of two");
    }
    this.queue = kind == Kind.ARRAY_RING ? new ArrayRing(CAPACITY) : new BlockingQueueAdapter(CAPACITY);
    this.messages = messages;
    this.indices = indices;
    this.indexMask = indices.length - 1;
    for (int i = 0; i < CAPACITY / 2; i++) {
      produce();
    }
  }

  /** Produces one message and consumes the oldest: one run-loop step. */
  byte[] next() {
    produce();
    return queue.poll();
  }

  private void produce() {
    if (!queue.offer(messages[indices[cursor++ & indexMask]])) {
      throw new IllegalStateException("stream full: the producer ran ahead of the consumer");
    }
  }

  /** The two operations the stream needs from a bounded queue. */
  private interface MessageQueue {
    /** Appends {@code message}, or returns false if the queue is at its bound. */
    boolean offer(byte[] message);

    /** Removes the oldest message, or returns null if the queue is empty. */
    byte[] poll();
  }

  private static final class BlockingQueueAdapter implements MessageQueue {
    private final ArrayBlockingQueue<byte[]> queue;

    BlockingQueueAdapter(int capacity) {
      this.queue = new ArrayBlockingQueue<>(capacity);
    }

    @Override
    public boolean offer(byte[] message) {
      return queue.offer(message);
    }

    @Override
    public byte[] poll() {
      return queue.poll();
    }
  }

  /** A single-threaded bounded FIFO on a power-of-two array. */
  private static final class ArrayRing implements MessageQueue {
    private final byte[][] slots;
    private final int mask;
    private long head; // next slot to poll
    private long tail; // next slot to offer into

    ArrayRing(int capacity) {
      if (Integer.bitCount(capacity) != 1) {
        throw new IllegalArgumentException("capacity must be a power of two, was " + capacity);
      }
      this.slots = new byte[capacity][];
      this.mask = capacity - 1;
    }

    @Override
    public boolean offer(byte[] message) {
      if (tail - head == slots.length) {
        return false;
      }
      slots[(int) (tail++ & mask)] = message;
      return true;
    }

    @Override
    public byte[] poll() {
      if (head == tail) {
        return null;
      }
      int slot = (int) (head++ & mask);
      byte[] message = slots[slot];
      slots[slot] = null; // let the consumer own it
      return message;
    }
  }
}
