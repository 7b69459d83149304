package dev.weir.state.store;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Helpers for byte keys in the stores' order (unsigned lexicographic, RocksDB's bytewise order)
 * and for the commit record both backends write. Stateless; safe from any thread.
 */
public final class ByteKeys {

  /** Unsigned lexicographic order, the order of RocksDB's default comparator. */
  public static final Comparator<byte[]> ORDER = Arrays::compareUnsigned;

  private static final int COMMIT_RECORD_VERSION = 1;

  private ByteKeys() {}

  /** Reads eight bytes of a {@code byte[]} at any offset as one little-endian long (one unaligned load). */
  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  /** 2^64 divided by the golden ratio: an odd multiplier whose products spread the bits (Fibonacci hashing). */
  private static final long GOLDEN = 0x9E3779B97F4A7C15L;

  /**
   * A hash of {@code key}'s bytes for in-memory hash tables (the object cache's and the keyed
   * operators' maps of encoded keys): eight bytes per step, each word multiplied into a running
   * value, then mixed by MurmurHash3's 64-bit finalizer so that every input bit reaches the low
   * bits a table indexes by. {@link Arrays#hashCode(byte[])} takes a multiply-add per byte in one
   * dependency chain (on Java 17, which does not vectorize it): 6.4% of Nexmark Q10's CPU samples
   * went to it, hashing state keys of some 40-90 bytes on every state access.
   *
   * <p>Not stable across versions: nothing may persist it or partition by it (a record's partition
   * is {@code StreamWriter.partitionOf}'s, which checkpoints depend on).
   *
   * @return the hash; equal arrays hash equally
   */
  public static int hash(byte[] key) {
    int n = key.length;
    long h = n * GOLDEN;
    int i = 0;
    for (; i + Long.BYTES <= n; i += Long.BYTES) {
      h = Long.rotateLeft(h ^ ((long) LONGS.get(key, i) * GOLDEN), 31) * GOLDEN;
    }
    long tail = 0;
    for (int shift = 0; i < n; i++, shift += 8) {
      tail |= (key[i] & 0xFFL) << shift;
    }
    h ^= tail * GOLDEN;
    h ^= h >>> 33; // MurmurHash3's fmix64 (Austin Appleby, public domain)
    h *= 0xFF51AFD7ED558CCDL;
    h ^= h >>> 33;
    h *= 0xC4CEB9FE1A85EC53L;
    h ^= h >>> 33;
    return (int) h;
  }

  /**
   * The smallest key greater than every key that starts with {@code prefix}, or {@code null} if
   * there is none (empty prefix, or a prefix of only {@code 0xFF} bytes): the exclusive upper
   * bound of a prefix scan.
   */
  public static byte[] prefixEnd(byte[] prefix) {
    for (int i = prefix.length - 1; i >= 0; i--) {
      if (prefix[i] != (byte) 0xFF) {
        byte[] end = Arrays.copyOf(prefix, i + 1);
        end[i]++;
        return end;
      }
    }
    return null;
  }

  /**
   * The smallest key strictly greater than {@code key}: {@code key} followed by one {@code 0x00}
   * byte. Unlike {@link #prefixEnd}, it does not skip the keys that extend {@code key}, so it is
   * where a paged scan resumes after the last key of a page. Allocates one array.
   */
  public static byte[] successor(byte[] key) {
    return Arrays.copyOf(key, key.length + 1);
  }

  /** Whether {@code key} lies in {@code [from, to)}; a null {@code to} is unbounded. */
  public static boolean inRange(byte[] key, byte[] from, byte[] to) {
    return Arrays.compareUnsigned(key, from) >= 0
        && (to == null || Arrays.compareUnsigned(key, to) < 0);
  }

  /**
   * Encodes a commit record: format version, commit sequence number, then the metadata entries.
   *
   * @param sequence the commit's sequence number, from 1
   * @param metadata caller metadata; keys and values must be non-null
   */
  public static byte[] encodeCommitRecord(long sequence, Map<String, byte[]> metadata) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(COMMIT_RECORD_VERSION);
      out.writeLong(sequence);
      out.writeInt(metadata.size());
      for (Map.Entry<String, byte[]> e : metadata.entrySet()) {
        out.writeUTF(e.getKey());
        out.writeInt(e.getValue().length);
        out.write(e.getValue());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  /** A decoded commit record. */
  public record CommitRecord(long sequence, Map<String, byte[]> metadata) {
    /** The record of a storage that was never committed. */
    public static final CommitRecord NONE = new CommitRecord(0, Map.of());
  }

  /**
   * Decodes what {@link #encodeCommitRecord} wrote.
   *
   * @throws IllegalArgumentException if the bytes are not a commit record of a known version
   */
  public static CommitRecord decodeCommitRecord(byte[] record) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(record))) {
      int version = in.readInt();
      if (version != COMMIT_RECORD_VERSION) {
        throw new IllegalArgumentException("unknown commit record version " + version);
      }
      long sequence = in.readLong();
      int n = in.readInt();
      Map<String, byte[]> metadata = new LinkedHashMap<>();
      for (int i = 0; i < n; i++) {
        String key = in.readUTF();
        byte[] value = new byte[in.readInt()];
        in.readFully(value);
        metadata.put(key, value);
      }
      return new CommitRecord(sequence, Collections.unmodifiableMap(metadata));
    } catch (IOException e) {
      throw new IllegalArgumentException("truncated commit record", e);
    }
  }

  /** Deep-copies metadata so that later changes by the caller do not leak into a commit. */
  public static Map<String, byte[]> copyMetadata(Map<String, byte[]> metadata) {
    Map<String, byte[]> copy = new LinkedHashMap<>();
    metadata.forEach(
        (k, v) -> {
          if (k == null || v == null) {
            throw new NullPointerException("metadata key and value must not be null");
          }
          copy.put(k, v.clone());
        });
    return Collections.unmodifiableMap(copy);
  }
}
