package dev.weir.state.cache;

/**
 * A Bloom filter of the keys a {@link CachedStore}'s byte store may hold, so that a cache miss on
 * a key the store cannot hold answers "absent" without asking the store.
 *
 * <h2>Why</h2>
 *
 * runners-core reads the state of every new window before it has any: the watermark hold, the
 * buffered values, the trigger's bits, the timers' slots. Under merging windows (sessions,
 * Nexmark's auction windows) every element brings a new proto-window, so most object-cache misses
 * are for keys that were never written; each still costs RocksDB a search of the staged write
 * batch and a bloom check per SST file. In a profile of Nexmark Q4 those negative lookups were
 * 7.5% of CPU (runner/BENCHMARKS.md). With write-back at checkpoints and deletes of unwritten cells
 * elided, most window state never reaches the store at all, so the filter answers most of them.
 *
 * <h2>How</h2>
 *
 * One bit array of 2<sup>n</sup> bits, 3 probes derived from the {@link StateKey}'s hash (already
 * computed for the cache lookup, so a probe costs a multiply and three bit tests). Keys are added
 * when the cache writes a value to the store and, at construction, for every key the store already
 * holds (a restored or reopened store). Deletes are not removed; false positives only cost the
 * store lookup that would have happened anyway. When the insertions since the last build exceed a
 * tenth of the bits (about 2% false positives), the owner rebuilds it from the store's live keys at
 * a full flush, sized to them; past {@value #MAX_LOG2_BITS} bits it gives up and answers "maybe"
 * for every key.
 *
 * <p>Threading: confined to the cache's owning thread.
 */
final class StoredKeyFilter {
  static final int MIN_LOG2_BITS = 24; // 2 MiB
  static final int MAX_LOG2_BITS = 29; // 64 MiB

  private long[] words;
  private long mask;
  private long insertions;
  private boolean disabled;

  /** A filter sized for about {@code expectedKeys} keys (at least 2^{@value #MIN_LOG2_BITS} bits). */
  StoredKeyFilter(long expectedKeys) {
    resize(expectedKeys);
  }

  /** Drops every key and resizes for about {@code expectedKeys}; disables the filter if they need too many bits. */
  void resize(long expectedKeys) {
    long wantedBits = Math.max(1L << MIN_LOG2_BITS, Long.highestOneBit(Math.max(1, expectedKeys * 20)) << 1);
    if (wantedBits > (1L << MAX_LOG2_BITS)) {
      disabled = true;
      words = null;
      return;
    }
    disabled = false;
    words = new long[(int) (wantedBits >>> 6)];
    mask = wantedBits - 1;
    insertions = 0;
  }

  void add(int hash) {
    if (disabled) {
      return;
    }
    long h = mix(hash);
    long step = (h >>> 32) | 1;
    for (int i = 0; i < 3; i++) {
      long bit = h & mask;
      words[(int) (bit >>> 6)] |= 1L << bit;
      h += step;
    }
    insertions++;
  }

  /** False only if a key with this hash was never added since the last build. */
  boolean mightContain(int hash) {
    if (disabled) {
      return true;
    }
    long h = mix(hash);
    long step = (h >>> 32) | 1;
    for (int i = 0; i < 3; i++) {
      long bit = h & mask;
      if ((words[(int) (bit >>> 6)] & (1L << bit)) == 0) {
        return false;
      }
      h += step;
    }
    return true;
  }

  /** Whether enough keys were added since the last build that false positives pass about 2%. */
  boolean wantsRebuild() {
    return !disabled && insertions > (mask + 1) / 10;
  }

  boolean disabled() {
    return disabled;
  }

  /** Turns the filter off for good: every key might be stored. */
  void disable() {
    disabled = true;
    words = null;
  }

  /** Murmur3's 64-bit finalizer over the 32-bit key hash. */
  private static long mix(int hash) {
    long h = hash * 0x9E3779B97F4A7C15L;
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }
}
