package dev.weir.state.store.rocksdb;

import org.rocksdb.CompressionType;

/**
 * Typed RocksDB settings for a {@link RocksDbStorage}. Immutable; build from {@link #defaults()}
 * with the {@code with*} methods.
 *
 * <p>The defaults favour a state store that is read point-wise through an object cache: a shared
 * LRU block cache, a bloom filter on every column family (most misses of the object cache are for
 * keys that do not exist yet), LZ4 compression (cheap to decompress), and WAL-synced commits.
 *
 * @param blockCacheBytes size of the LRU block cache shared by all column families, in bytes
 * @param blockSizeBytes size of an uncompressed data block, in bytes
 * @param bloomBitsPerKey bits per key of the bloom filter; 0 disables it
 * @param compression block compression of every column family
 * @param writeBufferBytes size of one memtable per column family, in bytes
 * @param maxWriteBuffers memtables per column family before writes stall
 * @param maxBackgroundJobs threads for flushes and compactions
 * @param syncCommits whether a commit fsyncs the write-ahead log before returning; false keeps
 *     commits atomic and ordered but may lose the last commits on a machine (not process) crash
 * @param writeAheadLog whether commits are written to RocksDB's write-ahead log; false writes them
 *     to the memtables only: still atomic, ordered and visible to this process, and in every
 *     {@link RocksDbStorage#checkpointTo checkpoint} (which flushes the memtables first), but
 *     commits since the last memtable flush are lost when the process dies. For callers that
 *     never reopen a working directory after a crash and restore from checkpoints instead (Weir's
 *     runner wipes its working directories at every start); it saves writing every commit twice.
 *     Requires {@code syncCommits == false}.
 * @param stagedWrites whether writes are staged in memory until a commit, which then applies them
 *     atomically (see {@link RocksDbStorage}); false writes each put and delete to RocksDB at once
 *     (its memtables, and its write-ahead log if on), and a commit only writes the commit record:
 *     a crash may then leave part of the writes since the last commit in the directory, but every
 *     {@link RocksDbStorage#checkpointTo checkpoint} taken right after a commit holds exactly what
 *     was written before it. For callers that restore from checkpoints only; it saves inserting
 *     every write twice (into the staged batch's index, then into the memtable at the commit) and
 *     the batch lookup on every read.
 */
public record RocksDbSettings(
    long blockCacheBytes,
    long blockSizeBytes,
    int bloomBitsPerKey,
    CompressionType compression,
    long writeBufferBytes,
    int maxWriteBuffers,
    int maxBackgroundJobs,
    boolean syncCommits,
    boolean writeAheadLog,
    boolean stagedWrites) {

  /** Validates ranges. */
  public RocksDbSettings {
    requirePositive(blockCacheBytes, "blockCacheBytes");
    requirePositive(blockSizeBytes, "blockSizeBytes");
    if (bloomBitsPerKey < 0) {
      throw new IllegalArgumentException("bloomBitsPerKey must be >= 0, was " + bloomBitsPerKey);
    }
    if (compression == null) {
      throw new NullPointerException("compression");
    }
    requirePositive(writeBufferBytes, "writeBufferBytes");
    requirePositive(maxWriteBuffers, "maxWriteBuffers");
    requirePositive(maxBackgroundJobs, "maxBackgroundJobs");
    if (syncCommits && !writeAheadLog) {
      throw new IllegalArgumentException("syncCommits needs the write-ahead log (writeAheadLog=true)");
    }
  }

  /**
   * 64 MiB block cache, 16 KiB blocks, 10-bit bloom filters, LZ4, 32 MiB memtables, writes
   * staged until a commit, commits written to the write-ahead log and synced.
   */
  public static RocksDbSettings defaults() {
    return new RocksDbSettings(
        64L << 20, 16L << 10, 10, CompressionType.LZ4_COMPRESSION, 32L << 20, 3, 2, true, true, true);
  }

  public RocksDbSettings withBlockCacheBytes(long bytes) {
    return new RocksDbSettings(bytes, blockSizeBytes, bloomBitsPerKey, compression,
        writeBufferBytes, maxWriteBuffers, maxBackgroundJobs, syncCommits, writeAheadLog, stagedWrites);
  }

  public RocksDbSettings withBloomBitsPerKey(int bits) {
    return new RocksDbSettings(blockCacheBytes, blockSizeBytes, bits, compression,
        writeBufferBytes, maxWriteBuffers, maxBackgroundJobs, syncCommits, writeAheadLog, stagedWrites);
  }

  public RocksDbSettings withCompression(CompressionType type) {
    return new RocksDbSettings(blockCacheBytes, blockSizeBytes, bloomBitsPerKey, type,
        writeBufferBytes, maxWriteBuffers, maxBackgroundJobs, syncCommits, writeAheadLog, stagedWrites);
  }

  public RocksDbSettings withWriteBufferBytes(long bytes) {
    return new RocksDbSettings(blockCacheBytes, blockSizeBytes, bloomBitsPerKey, compression,
        bytes, maxWriteBuffers, maxBackgroundJobs, syncCommits, writeAheadLog, stagedWrites);
  }

  public RocksDbSettings withSyncCommits(boolean sync) {
    return new RocksDbSettings(blockCacheBytes, blockSizeBytes, bloomBitsPerKey, compression,
        writeBufferBytes, maxWriteBuffers, maxBackgroundJobs, sync, writeAheadLog, stagedWrites);
  }

  /** See {@code writeAheadLog}; turning it off also turns off {@code syncCommits}. */
  public RocksDbSettings withWriteAheadLog(boolean wal) {
    return new RocksDbSettings(blockCacheBytes, blockSizeBytes, bloomBitsPerKey, compression,
        writeBufferBytes, maxWriteBuffers, maxBackgroundJobs, syncCommits && wal, wal, stagedWrites);
  }

  /** See {@code stagedWrites}. */
  public RocksDbSettings withStagedWrites(boolean staged) {
    return new RocksDbSettings(blockCacheBytes, blockSizeBytes, bloomBitsPerKey, compression,
        writeBufferBytes, maxWriteBuffers, maxBackgroundJobs, syncCommits, writeAheadLog, staged);
  }

  private static void requirePositive(long value, String name) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + " must be > 0, was " + value);
    }
  }
}
