package dev.weir.state.cache;

/**
 * How an {@link ObjectCache} is bounded: by entry count; by entry count <em>and</em> estimated
 * bytes; or by a total weight that a caller's {@link Weigher} assigns to each entry.
 *
 * <h2>The byte bound</h2>
 *
 * A decoded object's heap size cannot be known without walking it, and encoding it to count would
 * cost what the cache exists to save. So {@link #bounded(long, long)} counts each entry as
 * {@link #ENTRY_OVERHEAD_BYTES} plus its key's length plus its value's <em>encoded</em> size as last
 * seen: when the value was decoded from the byte store or encoded for it (a value written since
 * and never encoded counts as its store's mean encoded value). Estimates are renewed at every
 * {@link ObjectCache#flush()}, so a value that grows between two flushes (a bag taking elements)
 * is under-counted until the next one. A decoded value usually takes 2 to 4 times its encoded size
 * on the heap; the bound is on the encoded form, which is also what a write-back of the whole cache
 * would write.
 *
 * <p>Both bounds hold together because every entry weighs at least {@code maximumBytes /
 * maximumEntries}: the total weight stays under {@code maximumBytes}, and at most
 * {@code maximumEntries} entries fit in it. Small entries are therefore charged the floor, which
 * matters only when the entry bound is the tighter one. (The entry table bounds by count or by
 * weight, not both, as Caffeine does; this is how one weight carries both.)
 *
 * @param maximumEntries the entry bound, unless {@code weigher} is set; at least 1
 * @param maximumBytes the estimated-bytes bound, or 0 for none; with a weigher, must be 0
 * @param maximumWeight the weight bound, if {@code weigher} is set; at least 1
 * @param weigher assigns a weight to an entry, or null to bound by count (and bytes)
 * @param eviction which entries leave the cache when it is over its bound
 */
public record ObjectCacheSettings(
    long maximumEntries, long maximumBytes, long maximumWeight, Weigher weigher, Eviction eviction) {

  /** Which entry an over-full cache evicts. */
  public enum Eviction {
    /**
     * The least recently read or written entry (see {@code LruEntryTable} for why recency suits
     * stream state). The default.
     */
    LRU,
    /**
     * Caffeine's W-TinyLFU: a new entry displaces an old one only if it was used more often
     * recently; protects often-read cells, but rejects the new cells of merging windows.
     */
    W_TINY_LFU
  }

  /**
   * The bytes charged per entry besides its key and value: the cache entry, its state key and
   * the table's node (object headers, fields and references on a 64-bit JVM with compressed
   * oops), and the key array's header.
   */
  public static final int ENTRY_OVERHEAD_BYTES = 128;

  /** Assigns a weight (for example an estimate in bytes) to a cached entry. */
  @FunctionalInterface
  public interface Weigher {
    /**
     * @param key the encoded key
     * @param value the decoded value, or null for an absent key or a pending delete
     * @return a weight, at least 0
     */
    int weigh(byte[] key, Object value);
  }

  /**
   * Validates the bounds in use.
   *
   * @throws IllegalArgumentException naming the bound that is out of range
   */
  public ObjectCacheSettings {
    if (weigher == null && maximumEntries < 1) {
      throw new IllegalArgumentException("maximumEntries must be >= 1, was " + maximumEntries);
    }
    if (maximumBytes < 0 || (weigher != null && maximumBytes != 0)) {
      throw new IllegalArgumentException(
          "maximumBytes must be >= 0, and 0 with a weigher, was " + maximumBytes);
    }
    if (weigher != null && maximumWeight < 1) {
      throw new IllegalArgumentException("maximumWeight must be >= 1, was " + maximumWeight);
    }
    java.util.Objects.requireNonNull(eviction, "eviction");
  }

  /** These bounds with {@code eviction} as the policy. */
  public ObjectCacheSettings withEviction(Eviction eviction) {
    return new ObjectCacheSettings(maximumEntries, maximumBytes, maximumWeight, weigher, eviction);
  }

  /** Bounds the cache to {@code entries} entries. */
  public static ObjectCacheSettings maximumEntries(long entries) {
    return new ObjectCacheSettings(entries, 0, 0, null, Eviction.LRU);
  }

  /**
   * Bounds the cache to {@code entries} entries and about {@code bytes} bytes, estimated as the
   * class comment says.
   *
   * @param entries at least 1
   * @param bytes at least 1
   * @throws IllegalArgumentException if either is below 1
   */
  public static ObjectCacheSettings bounded(long entries, long bytes) {
    if (bytes < 1) {
      throw new IllegalArgumentException("maximumBytes must be >= 1, was " + bytes);
    }
    return new ObjectCacheSettings(entries, bytes, 0, null, Eviction.LRU);
  }

  /** Bounds the cache to a total weight of {@code weight} as assigned by {@code weigher}. */
  public static ObjectCacheSettings maximumWeight(long weight, Weigher weigher) {
    if (weigher == null) {
      throw new NullPointerException("weigher");
    }
    return new ObjectCacheSettings(0, 0, weight, weigher, Eviction.LRU);
  }

  /** Whether the bound is a caller's weigher. */
  public boolean weighted() {
    return weigher != null;
  }

  /** Whether entries are bounded by estimated bytes as well as by count. */
  public boolean byteBounded() {
    return maximumBytes > 0;
  }

  /**
   * The least weight of an entry under {@link #bounded(long, long)}: {@code maximumBytes /
   * maximumEntries}, rounded up, so that no more than {@code maximumEntries} entries fit.
   */
  long entryFloorBytes() {
    return (maximumBytes + maximumEntries - 1) / maximumEntries;
  }
}
