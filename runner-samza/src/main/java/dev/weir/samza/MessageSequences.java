package dev.weir.samza;

import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StoreIterator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.samza.storage.kv.Entry;

/**
 * A hosted task's element sequence numbers on Weir's intermediate topics, the deduplication of
 * what a restarted producer sends again (issue 15). Both halves are kept in the task's Samza store
 * (a reserved logical store of {@link SamzaKvStorage}) and written at the task's commit point,
 * right before samza-core's commit, so samza-core checkpoints them together with the task's input
 * offsets and restores them together with its state (local store or changelog):
 *
 * <ul>
 *   <li>producer half ({@link #nextSequence}): per output (stream, partition) the number of the
 *       last element sent. After a restart the task resumes its inputs at the checkpointed offsets
 *       and its numbering at the checkpointed count, so an element it sends again gets the number
 *       it had the first time, provided the task's output is a deterministic function of its input
 *       (see {@link SamzaStageTaskFactory} for which tasks number their elements);
 *   <li>consumer half ({@link #accept}): per input (stream, producer) the highest number taken.
 *       An element numbered at or below it was taken before (its effects are in the state, or,
 *       after this task's own restart, in the restored state whose checkpoint also restored this
 *       number) and is dropped. Elements without a number (sequence 0) are always taken.
 * </ul>
 *
 * <p>Peers: Kafka's idempotent producer (per producer id and partition, the broker keeps the last
 * sequence number and rejects duplicates; KIP-98), here kept by the consumer in its checkpointed
 * state instead of by the broker, which also covers a producer that restarts from an older
 * checkpoint. Kafka Streams' and Flink's exactly-once instead make a task's outputs and its input
 * offsets one atomic unit (Kafka transactions; aligned checkpoints with two-phase-commit sinks).
 *
 * <p>Keys in the store: kind byte ({@code 'o'} output, {@code 'i'} input), the stream's name in
 * UTF-8, a 0 byte, then the partition (output) or producer index (input) as a big-endian int;
 * values: the number as a big-endian long.
 *
 * <p>Threading: the owning task's thread.
 */
final class MessageSequences {
  private static final byte OUTPUT = 'o';
  private static final byte INPUT = 'i';

  /** The numbers of one stream on one side, indexed by partition (output) or producer (input). */
  private static final class Counters {
    final byte kind;
    final String stream;
    long[] values = new long[0];
    boolean[] dirty = new boolean[0];

    Counters(byte kind, String stream) {
      this.kind = kind;
      this.stream = stream;
    }

    void ensure(int index) {
      if (index >= values.length) {
        int size = Math.max(index + 1, values.length * 2);
        values = java.util.Arrays.copyOf(values, size);
        dirty = java.util.Arrays.copyOf(dirty, size);
      }
    }
  }

  private final SortedByteStore store;
  private final Map<String, Counters> outputs = new HashMap<>();
  private final Map<String, Counters> inputs = new HashMap<>();
  private boolean anyDirty;
  private long dropped;

  /**
   * Reads the numbers the store holds (after samza-core restored it).
   *
   * @throws IllegalStateException naming the key if an entry is not in this class's format
   */
  MessageSequences(SortedByteStore store) {
    this.store = store;
    try (StoreIterator<byte[], byte[]> it = store.all()) {
      while (it.hasNext()) {
        Entry<byte[], byte[]> e = it.next();
        byte[] key = e.getKey();
        int zero = indexOfZero(key);
        if (key.length < 6 || (key[0] != OUTPUT && key[0] != INPUT) || zero != key.length - 5
            || e.getValue().length != 8) {
          throw new IllegalStateException("the sequence store " + store.name() + " holds an entry not written by "
              + "Weir's MessageSequences: key of " + key.length + " bytes, value of " + e.getValue().length + " bytes");
        }
        String stream = new String(key, 1, zero - 1, StandardCharsets.UTF_8);
        int index = ByteBuffer.wrap(key, zero + 1, 4).getInt();
        Counters counters = counters(key[0] == OUTPUT ? outputs : inputs, key[0], stream);
        counters.ensure(index);
        counters.values[index] = ByteBuffer.wrap(e.getValue()).getLong();
      }
    }
  }

  /** The number of the next element sent to {@code partition} of {@code stream} (from 1). */
  long nextSequence(String stream, int partition) {
    Counters counters = counters(outputs, OUTPUT, stream);
    counters.ensure(partition);
    long next = ++counters.values[partition];
    counters.dirty[partition] = true;
    anyDirty = true;
    return next;
  }

  /**
   * Whether to take an element numbered {@code sequence} from producer {@code producer} of input
   * {@code stream}: true (and it becomes the highest taken) if it is above the highest taken so far
   * or 0 (not numbered); false for a replay, which the caller drops.
   */
  boolean accept(String stream, int producer, long sequence) {
    if (sequence <= 0) {
      return true;
    }
    Counters counters = counters(inputs, INPUT, stream);
    counters.ensure(producer);
    if (sequence <= counters.values[producer]) {
      dropped++;
      return false;
    }
    counters.values[producer] = sequence;
    counters.dirty[producer] = true;
    anyDirty = true;
    return true;
  }

  /** The highest number taken from {@code producer} of {@code stream}, 0 if none. */
  long highestTaken(String stream, int producer) {
    Counters counters = inputs.get(stream);
    return counters == null || producer >= counters.values.length ? 0 : counters.values[producer];
  }

  /** Replayed elements dropped since this object was created. */
  long dropped() {
    return dropped;
  }

  /** Writes the numbers changed since the last call into the store (the task's commit point). */
  void persist() {
    if (!anyDirty) {
      return;
    }
    persist(outputs);
    persist(inputs);
    anyDirty = false;
  }

  private void persist(Map<String, Counters> side) {
    for (Counters counters : side.values()) {
      for (int i = 0; i < counters.values.length; i++) {
        if (counters.dirty[i]) {
          store.put(key(counters.kind, counters.stream, i), ByteBuffer.allocate(8).putLong(counters.values[i]).array());
          counters.dirty[i] = false;
        }
      }
    }
  }

  private static Counters counters(Map<String, Counters> side, byte kind, String stream) {
    Counters counters = side.get(stream);
    if (counters == null) {
      counters = new Counters(kind, stream);
      side.put(stream, counters);
    }
    return counters;
  }

  private static byte[] key(byte kind, String stream, int index) {
    byte[] name = stream.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(1 + name.length + 1 + 4).put(kind).put(name).put((byte) 0).putInt(index).array();
  }

  private static int indexOfZero(byte[] key) {
    for (int i = 1; i < key.length; i++) {
      if (key[i] == 0) {
        return i;
      }
    }
    return -1;
  }
}
