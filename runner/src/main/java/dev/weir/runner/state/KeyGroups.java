package dev.weir.runner.state;

import java.util.Arrays;
import org.apache.beam.sdk.annotations.Internal;

/**
 * Key groups: the unit in which a job's keyed state and timers are placed on tasks, and moved
 * between them when a job is restored at another parallelism.
 *
 * <p>Every encoded key belongs to one of {@link #maxParallelism()} key groups, by a mixed hash of
 * its bytes ({@link #keyGroupOf}); a keyed stage of {@code p} partitions gives partition {@code i}
 * the contiguous range of key groups {@code [ceil(i·m/p), ceil((i+1)·m/p))}, so the shuffle sends a
 * key to partition {@code keyGroup·p/m} ({@link #partitionOf}). The number of key groups is fixed
 * for a job's life ({@code --maxParallelism}, recorded in its checkpoints); the number of
 * partitions may change from one run to the next, up to it. Stored keys do not carry their key
 * group: a restore at another parallelism hashes the key bytes every state cell and timer key holds
 * ({@link CellLayout}, "Why no key group in the keys").
 *
 * <p>Source: Flink's key groups ({@code KeyGroupRangeAssignment}: a murmur hash of the key modulo
 * {@code maxParallelism}, contiguous ranges per operator index), written here in Weir's own terms.
 * Unlike Flink, Weir keeps no structure per key group (timers are ordered per task, state is one
 * store per container), so many key groups cost nothing; the default is therefore the maximum,
 * {@value #MAX}.
 *
 * <p>Threading: immutable; any thread. Cost: {@link #keyGroupOf} hashes the key's bytes once
 * (no allocation).
 *
 * @param maxParallelism the number of key groups, 1 to {@value #MAX}
 */
@Internal
public record KeyGroups(int maxParallelism) {
  /** The largest number of key groups (Flink's largest maxParallelism, 2^15). */
  public static final int MAX = 32_768;
  /** The default number of key groups ({@code --maxParallelism}). */
  public static final KeyGroups DEFAULT = new KeyGroups(MAX);

  /** @throws IllegalArgumentException if {@code maxParallelism} is not in 1 to {@value #MAX} */
  public KeyGroups {
    if (maxParallelism < 1 || maxParallelism > MAX) {
      throw new IllegalArgumentException("--maxParallelism=" + maxParallelism + " is out of range; allowed: 1 to "
          + MAX + " (key groups)");
    }
  }

  /** The key group of a key encoded with its key coder, from 0 to {@code maxParallelism - 1}. */
  public int keyGroupOf(byte[] keyBytes) {
    return Math.floorMod(mix(Arrays.hashCode(keyBytes)), maxParallelism);
  }

  /** The partition, of {@code partitions}, that owns {@code keyGroup}. */
  public int partitionOf(int keyGroup, int partitions) {
    return (int) ((long) keyGroup * partitions / maxParallelism);
  }

  /** The partition, of {@code partitions}, that owns the key encoded as {@code keyBytes}. */
  public int partitionOfKey(byte[] keyBytes, int partitions) {
    return partitionOf(keyGroupOf(keyBytes), partitions);
  }

  /** The first key group partition {@code partition} of {@code partitions} owns. */
  public int firstKeyGroup(int partition, int partitions) {
    return (int) (((long) partition * maxParallelism + partitions - 1) / partitions);
  }

  /** murmur3's 32-bit finalizer: spreads the array hash's low-entropy bits over all 32. */
  private static int mix(int h) {
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    h ^= h >>> 16;
    return h;
  }
}
