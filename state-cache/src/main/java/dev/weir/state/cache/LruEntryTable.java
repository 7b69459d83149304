package dev.weir.state.cache;

import java.util.HashMap;
import java.util.function.ToIntFunction;

/**
 * An {@link EntryTable} that evicts the least recently used entry: a hash map of the entries and a
 * doubly linked list through them ({@link CacheEntry#newer}, {@link CacheEntry#older}), the most
 * recent at the head. A read or write moves the entry to the head; a victim is taken from the tail.
 *
 * <h2>Why recency, for state</h2>
 *
 * A stream job's state is touched in bursts by key and by window: an element reads and writes the
 * cells of its key's current window, the next element of that key does it again soon, and a window
 * that closed is touched once more, at its garbage collection. Under merging windows (sessions)
 * every element even moves its key's state to cells of a new window. A frequency-based admission
 * (W-TinyLFU, {@link CaffeineEntryTable}) sees each such new cell once and keeps the long-lived
 * cells it has seen often instead, so the new cells are evicted while still live, written to the
 * byte store and read back by the next element (Nexmark Q11 at 1,000,000 events: about 800,000
 * evictions per container, 97% of them dirty). Recency keeps what the next elements will touch, and
 * evicts the cells of keys that went quiet. Range reads do not pass through the table (they decode
 * from the byte store without caching), so a scan cannot flush it.
 *
 * <p>Costs: one {@link HashMap} node per entry and four pointer writes per use; no sketch, no
 * buffers. Threading: confined to the owning thread.
 */
final class LruEntryTable implements EntryTable {

  private final HashMap<StateKey, CacheEntry> map = new HashMap<>();
  private final long maximumWeight;
  /** An entry's weight, or null: each entry weighs 1. */
  private final ToIntFunction<CacheEntry> weigher;
  private final EvictionListener listener;
  /** The most and least recently used entries; null when empty. */
  private CacheEntry head;
  private CacheEntry tail;
  private long weight;

  /**
   * @param maximumWeight the bound on the entries' total weight, at least 0
   * @param weigher an entry's weight (at least 0), or null to count entries
   * @param listener receives each victim
   */
  LruEntryTable(long maximumWeight, ToIntFunction<CacheEntry> weigher, EvictionListener listener) {
    this.maximumWeight = maximumWeight;
    this.weigher = weigher;
    this.listener = listener;
  }

  @Override
  public CacheEntry get(StateKey key) {
    CacheEntry entry = map.get(key);
    if (entry != null && entry != head) {
      unlink(entry);
      linkAtHead(entry);
    }
    return entry;
  }

  @Override
  public CacheEntry peek(StateKey key) {
    return map.get(key);
  }

  @Override
  public void put(StateKey key, CacheEntry entry) {
    CacheEntry previous = map.put(key, entry);
    if (previous != null) {
      unlink(previous);
      weight -= previous.tableWeight;
    }
    entry.tableWeight = weigher == null ? 1 : weigher.applyAsInt(entry);
    weight += entry.tableWeight;
    linkAtHead(entry);
    evictOver(maximumWeight);
  }

  @Override
  public boolean remove(StateKey key, CacheEntry entry) {
    if (entry == null || !map.remove(key, entry)) { // CacheEntry has identity equality
      return false;
    }
    dropLinked(entry);
    return true;
  }

  @Override
  public CacheEntry remove(StateKey key) {
    CacheEntry entry = map.remove(key);
    if (entry != null) {
      dropLinked(entry);
    }
    return entry;
  }

  @Override
  public void evictAll() {
    evictOver(0);
  }

  @Override
  public long size() {
    return map.size();
  }

  @Override
  public void clear() {
    map.clear();
    for (CacheEntry e = head; e != null; ) {
      CacheEntry next = e.older;
      e.newer = null;
      e.older = null;
      e = next;
    }
    head = null;
    tail = null;
    weight = 0;
  }

  /** Evicts from the tail while the total weight exceeds {@code bound}. */
  private void evictOver(long bound) {
    while (weight > bound && tail != null) {
      CacheEntry victim = tail;
      map.remove(victim.key);
      dropLinked(victim);
      listener.evicted(victim.key, victim);
    }
  }

  private void dropLinked(CacheEntry entry) {
    unlink(entry);
    weight -= entry.tableWeight;
    entry.tableWeight = 0;
  }

  private void linkAtHead(CacheEntry entry) {
    entry.newer = null;
    entry.older = head;
    if (head != null) {
      head.newer = entry;
    }
    head = entry;
    if (tail == null) {
      tail = entry;
    }
  }

  private void unlink(CacheEntry entry) {
    CacheEntry newer = entry.newer;
    CacheEntry older = entry.older;
    if (newer != null) {
      newer.older = older;
    } else if (head == entry) {
      head = older;
    }
    if (older != null) {
      older.newer = newer;
    } else if (tail == entry) {
      tail = newer;
    }
    entry.newer = null;
    entry.older = null;
  }
}
