package dev.weir.state.cache;

/**
 * How an {@link ObjectCache} is bounded: by entry count, or by a total weight that a
 * {@link Weigher} assigns to each entry.
 *
 * @param maximumEntries the entry bound, if {@code weigher} is null; at least 1
 * @param maximumWeight the weight bound, if {@code weigher} is set; at least 1
 * @param weigher assigns a weight to an entry, or null to bound by count
 */
public record ObjectCacheSettings(long maximumEntries, long maximumWeight, Weigher weigher) {

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

  /** Validates the bound in use. */
  public ObjectCacheSettings {
    if (weigher == null && maximumEntries < 1) {
      throw new IllegalArgumentException("maximumEntries must be >= 1, was " + maximumEntries);
    }
    if (weigher != null && maximumWeight < 1) {
      throw new IllegalArgumentException("maximumWeight must be >= 1, was " + maximumWeight);
    }
  }

  /** Bounds the cache to {@code entries} entries. */
  public static ObjectCacheSettings maximumEntries(long entries) {
    return new ObjectCacheSettings(entries, 0, null);
  }

  /** Bounds the cache to a total weight of {@code weight} as assigned by {@code weigher}. */
  public static ObjectCacheSettings maximumWeight(long weight, Weigher weigher) {
    if (weigher == null) {
      throw new NullPointerException("weigher");
    }
    return new ObjectCacheSettings(0, weight, weigher);
  }

  /** Whether the bound is by weight. */
  public boolean weighted() {
    return weigher != null;
  }
}
