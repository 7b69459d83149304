package dev.weir.state.cache;

/**
 * A point-in-time copy of an {@link ObjectCache}'s counters, all cumulative since the cache was
 * created. The runner publishes these as metrics.
 *
 * @param hits reads answered from the cache, without decoding
 * @param misses reads that went to the byte store (and decoded, if the key existed)
 * @param evictions entries evicted by the size bound
 * @param dirtyWriteBacks evicted entries that were dirty and so were encoded and written first
 * @param flushedEntries dirty entries written by flushes and commits
 * @param bytesEncoded bytes produced by encoding values (keys excluded), in bytes
 * @param bytesDecoded bytes consumed by decoding values, in bytes
 * @param flushes number of flushes (a commit includes one)
 * @param flushNanos time spent in flushes, encoding included, in ns
 * @param entries current number of cached entries (estimate)
 * @param dirtyEntries entries waiting to be encoded and written back (the commit backlog)
 * @param elidedDeletes deletes that never reached the byte store because it did not hold the key
 *     (state created and cleared between two write-backs)
 * @param absentByFilter misses answered "absent" by the filter of stored keys, without a store
 *     lookup (included in {@code misses})
 * @param estimatedBytes the cached entries' total byte estimate (see {@link ObjectCacheSettings};
 *     without the per-entry floor that makes the entry bound hold), in bytes; -1 unless the cache
 *     is byte-bounded
 */
public record ObjectCacheStats(
    long hits,
    long misses,
    long evictions,
    long dirtyWriteBacks,
    long flushedEntries,
    long bytesEncoded,
    long bytesDecoded,
    long flushes,
    long flushNanos,
    long entries,
    long dirtyEntries,
    long elidedDeletes,
    long absentByFilter,
    long estimatedBytes) {

  /**
   * One line for a log: reads, hit rate, misses (and how many the filter of stored keys answered),
   * evictions, dirty write-backs, flushed entries, and the bytes encoded and decoded (MB).
   */
  public String summary() {
    return String.format("%d reads, %.2f%% hits, %d misses (%d answered by the filter), %d evictions "
        + "(%d dirty, written back), %d flushed in %d flushes (%.1f ms), %.1f MB encoded, %.1f MB decoded, %d entries",
        hits + misses, 100 * hitRate(), misses, absentByFilter, evictions, dirtyWriteBacks, flushedEntries, flushes,
        flushNanos / 1e6, bytesEncoded / 1e6, bytesDecoded / 1e6, entries);
  }

  /** hits / (hits + misses), or 0 when nothing was read. */
  public double hitRate() {
    long reads = hits + misses;
    return reads == 0 ? 0 : (double) hits / reads;
  }
}
