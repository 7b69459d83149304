package dev.weir.state.benchmarks;

import static java.nio.charset.StandardCharsets.US_ASCII;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Data shapes shared by the benchmarks: pre-generated messages, a pre-generated uniform stream of
 * key indices, 8-byte counts, and scratch directories for RocksDB. Everything is generated in
 * {@code @Setup} with fixed seeds, so the measured loop does no random-number generation and two
 * runs see the same key sequence.
 */
final class Workload {

  /** Size of one message, as in Samza's 2015 benchmark (messages "around 100 bytes"), in bytes. */
  static final int MESSAGE_BYTES = 100;

  /** Size of the key at the start of each message, in bytes: {@code key-} and 12 digits. */
  static final int KEY_BYTES = 16;

  /**
   * Length of the pre-generated index stream: 4 Mi ints (16 MiB). Longer than one measurement
   * iteration at the rates seen here, so a single iteration does not replay a short cycle.
   */
  static final int INDEX_STREAM_LENGTH = 1 << 22;

  /**
   * Whether teardowns check the final state (counts add up to the operations made). Off by
   * default: the check reads every key, and JMH's {@code -prof gc} would count its allocations in
   * the last measured iteration. Turn it on with
   * {@code -jvmArgsAppend "-Xms2g -Xmx2g -Dweir.bench.check=true"} (a {@code -jvmArgsAppend} on the
   * command line replaces the benchmarks' {@code @Fork(jvmArgsAppend = ...)}, hence the heap flags).
   */
  static final boolean CHECK_STATE = Boolean.getBoolean("weir.bench.check");

  /** Seed of every generator here; fixed so that runs are comparable. */
  static final long SEED = 0x5EED_2015L;

  private Workload() {}

  /**
   * {@code keys} messages; message {@code i} carries key {@code i} in its first {@link #KEY_BYTES}
   * bytes ({@code key-000000000042}) and random payload bytes after it.
   */
  static byte[][] messages(int keys) {
    SplittableRandom random = new SplittableRandom(SEED);
    byte[][] messages = new byte[keys][];
    for (int i = 0; i < keys; i++) {
      byte[] message = new byte[MESSAGE_BYTES];
      random.nextBytes(message);
      System.arraycopy(messageKey(i), 0, message, 0, KEY_BYTES);
      messages[i] = message;
    }
    return messages;
  }

  /** The key bytes of key {@code i}, as they appear at the start of its messages. */
  static byte[] messageKey(int i) {
    byte[] key = String.format("key-%012d", i).getBytes(US_ASCII);
    if (key.length != KEY_BYTES) {
      throw new IllegalArgumentException("key index out of range: " + i);
    }
    return key;
  }

  /**
   * A uniform random choice among {@code keys} indices, {@link #INDEX_STREAM_LENGTH} long (a power
   * of two, so callers walk it with {@code cursor++ & (length - 1)}).
   */
  static int[] uniformIndices(int keys) {
    if (keys < 1) {
      throw new IllegalArgumentException("keys must be >= 1, was " + keys);
    }
    SplittableRandom random = new SplittableRandom(SEED + 1);
    int[] indices = new int[INDEX_STREAM_LENGTH];
    for (int i = 0; i < indices.length; i++) {
      indices[i] = random.nextInt(keys);
    }
    return indices;
  }

  /** A count as 8 big-endian bytes. */
  static byte[] encodeCount(long count) {
    byte[] bytes = new byte[8];
    for (int i = 7; i >= 0; i--) {
      bytes[i] = (byte) count;
      count >>>= 8;
    }
    return bytes;
  }

  /** Reads what {@link #encodeCount} wrote. */
  static long decodeCount(byte[] bytes) {
    if (bytes.length != 8) {
      throw new IllegalArgumentException("a count is 8 bytes, got " + bytes.length);
    }
    long count = 0;
    for (byte b : bytes) {
      count = (count << 8) | (b & 0xFF);
    }
    return count;
  }

  /** A fresh scratch directory under {@code java.io.tmpdir}. */
  static Path scratchDirectory(String prefix) {
    try {
      return Files.createTempDirectory(prefix);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Deletes {@code dir} and everything under it; quietly does nothing for null. */
  static void deleteRecursively(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.delete(p);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The key bytes of a message: what a key deserializer does first (a copy of the key field). */
  static byte[] keyOf(byte[] message) {
    return Arrays.copyOf(message, KEY_BYTES);
  }
}
