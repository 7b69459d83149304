package dev.weir.state.cache;

import static dev.weir.state.store.TestBytes.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.state.store.Backend;
import dev.weir.state.store.StoreIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.samza.storage.kv.Entry;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The object cache's contract, on every backend. */
class ObjectCacheTest extends CacheFixture {

  private CachedStore open(Backend backend, ObjectCacheSettings settings) {
    return open(backend, settings, null);
  }

  private CachedStore open(Backend backend, long entries) {
    return open(backend, ObjectCacheSettings.maximumEntries(entries));
  }

  private static byte[] enc(long v) throws Exception {
    return CoderUtils.encodeToByteArray(VarLongCoder.of(), v);
  }

  private static long dec(byte[] bytes) throws Exception {
    return CoderUtils.decodeFromByteArray(VarLongCoder.of(), bytes);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void get_hit_returnsTheSameObject_withoutDecoding(Backend backend) {
    CachedStore store = open(backend, 100);
    Long value = 123_456_789L;
    store.put(b("k"), value, coder);
    assertThat(store.get(b("k"), coder)).isSameAs(value);
    assertThat(coder.decodes).hasValue(0);
    assertThat(coder.encodes).hasValue(0);
    assertThat(cache.stats().hits()).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void get_miss_decodesOnce_thenHits(Backend backend) throws Exception {
    CachedStore store = open(backend, 100);
    store.byteStore().put(b("k"), enc(42));
    for (int i = 0; i < 5; i++) {
      assertThat(store.get(b("k"), coder)).isEqualTo(42L);
    }
    assertThat(coder.decodes).hasValue(1);
    ObjectCacheStats stats = cache.stats();
    assertThat(stats.misses()).isEqualTo(1);
    assertThat(stats.hits()).isEqualTo(4);
    assertThat(stats.bytesDecoded()).isEqualTo(enc(42).length);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void get_missingKey_cachesAbsenceOnlyWhenTheStoreWasAsked(Backend backend) {
    CachedStore store = open(backend, 100);
    assertThat(store.get(b("nothing"), coder)).isNull();
    assertThat(store.get(b("nothing"), coder)).isNull();
    assertThat(cache.stats().absentByFilter()).as("never written: answered by the filter each time").isEqualTo(2);
    assertThat(cache.stats().hits()).isZero();
    store.put(b("gone"), 1L, coder);
    cache.flush();
    store.delete(b("gone"));
    cache.flush();
    cache.evictAll();
    assertThat(store.get(b("gone"), coder)).isNull(); // once stored: the store answers, the absence is cached
    assertThat(store.get(b("gone"), coder)).isNull();
    assertThat(cache.stats().misses()).isEqualTo(3);
    assertThat(cache.stats().hits()).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void put_encodesNothing_untilFlush_thenOncePerDirtyEntry(Backend backend) throws Exception {
    CachedStore store = open(backend, 100);
    StateKey key = store.key(b("counter"));
    for (long i = 1; i <= 1000; i++) {
      Long current = store.get(key, coder);
      store.put(key, current == null ? 1L : current + 1, coder);
    }
    store.put(b("other"), 7L, coder);
    assertThat(coder.encodes).hasValue(0);
    assertThat(store.byteStore().get(b("counter"))).isNull();
    cache.flush();
    assertThat(coder.encodes).hasValue(2);
    assertThat(dec(store.byteStore().get(b("counter")))).isEqualTo(1000);
    assertThat(dec(store.byteStore().get(b("other")))).isEqualTo(7);
    cache.flush(); // nothing dirty any more
    assertThat(coder.encodes).hasValue(2);
    assertThat(cache.stats().flushedEntries()).isEqualTo(2);
    assertThat(cache.stats().flushes()).isEqualTo(2);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void putSealed_encodesOnce_writesThoseBytesBack_andAReadDecodesThemOnce(Backend backend) throws Exception {
    CachedStore store = open(backend, 100);
    StateKey key = store.key(b("full-chunk"));
    store.putSealed(key, 77L, coder);
    assertThat(coder.encodes).as("encoded at the put").hasValue(1);
    assertThat(store.byteStore().get(b("full-chunk"))).as("not written before a write-back").isNull();
    cache.flush();
    assertThat(coder.encodes).as("the flush writes the sealed bytes as they are").hasValue(1);
    assertThat(coder.decodes).as("the coder's first stored value is decoded back once").hasValue(1);
    assertThat(dec(store.byteStore().get(b("full-chunk")))).isEqualTo(77);
    Long read = store.get(key, coder);
    assertThat(read).isEqualTo(77L);
    assertThat(coder.decodes).hasValue(2);
    assertThat(store.get(key, coder)).as("the decoded object is cached again").isSameAs(read);
    assertThat(coder.decodes).hasValue(2);
    assertThat(cache.stats().hits()).isEqualTo(2);
    assertThat(cache.stats().misses()).isZero();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void aValueItsCoderCannotDecode_isNeverStored_theWriteFailsNamingKeyAndCoder(Backend backend) {
    CachedStore store = open(backend, 100);
    org.apache.beam.sdk.coders.Coder<Long> unreadable = new org.apache.beam.sdk.coders.AtomicCoder<>() {
      @Override
      public void encode(Long value, java.io.OutputStream out) throws java.io.IOException {
        org.apache.beam.sdk.coders.VarLongCoder.of().encode(value, out);
      }

      @Override
      public Long decode(java.io.InputStream in) throws java.io.IOException {
        throw new org.apache.beam.sdk.coders.CoderException("cannot decode");
      }

      @Override
      public String toString() {
        return "UnreadableCoder";
      }
    };
    cache.describeKeysWith(k -> "cell " + new String(k.bytes(), java.nio.charset.StandardCharsets.UTF_8));
    store.put(store.key(b("fine")), 1L, coder);
    store.put(store.key(b("bad")), 7L, unreadable);
    assertThatThrownBy(() -> cache.flush()).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cell bad").hasMessageContaining("UnreadableCoder")
        .hasRootCauseMessage("cannot decode");
    assertThat(store.byteStore().get(b("bad"))).as("nothing unreadable is stored").isNull();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void putSealed_thenEvicted_isWrittenWithoutEncodingAgain_andReadBack(Backend backend) {
    CachedStore store = open(backend, 1);
    putSealedIndexes(store, 100);
    assertThat(cache.stats().dirtyWriteBacks()).isGreaterThanOrEqualTo(99);
    assertThat(coder.encodes).hasValue(100);
    assertReadsBackTheirIndex(store, 100);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void putSealed_ofACellDeletedBeforeAnyWriteBack_neverReachesTheStore(Backend backend) {
    CachedStore store = open(backend, 100);
    StateKey key = store.key(b("chunk"));
    store.putSealed(key, 1L, coder);
    store.delete(key);
    cache.flush();
    assertThat(cache.stats().elidedDeletes()).isEqualTo(1);
    assertThat(cache.stats().flushedEntries()).isZero();
    assertThat(store.byteStore().get(b("chunk"))).isNull();
    assertThat(store.get(key, coder)).isNull();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void putSealed_overAnObject_andAPutOverASealedValue_takeTheLatestValue(Backend backend) throws Exception {
    CachedStore store = open(backend, 100);
    StateKey key = store.key(b("k"));
    store.put(key, 1L, coder);
    store.putSealed(key, 2L, coder);
    assertThat(store.get(key, coder)).isEqualTo(2L);
    store.putSealed(key, 3L, coder);
    store.put(key, 4L, coder);
    cache.flush();
    assertThat(dec(store.byteStore().get(b("k")))).isEqualTo(4);
    store.putSealed(key, 5L, coder);
    cache.flush();
    assertThat(dec(store.byteStore().get(b("k")))).isEqualTo(5);
    try (StoreIterator<byte[], Long> it = store.range(b("k"), null, coder)) {
      assertThat(it.next().getValue()).as("a scan decodes a sealed entry's bytes").isEqualTo(5L);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void bytes_aSealedValue_isWeighedByItsEncodedSize(Backend backend) {
    StringUtf8Coder strings = StringUtf8Coder.of();
    CachedStore store = open(backend, ObjectCacheSettings.bounded(1000, 20_000));
    for (int i = 0; i < 20; i++) {
      store.putSealed(store.key(b("k" + i)), "z".repeat(5_000) + i, strings);
      cache.safePoint();
    }
    assertThat(cache.stats().entries()).isBetween(1L, 4L);
    assertThat(cache.stats().estimatedBytes()).isLessThanOrEqualTo(20_000);
    for (int i = 0; i < 20; i++) {
      assertThat(store.get(b("k" + i), strings)).isEqualTo("z".repeat(5_000) + i);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void putSealed_coderFailure_failsAtThePut_andLeavesTheValueUnchanged(Backend backend) {
    CachedStore store = open(backend, 100);
    StateKey key = store.key(b("k"));
    store.put(key, 1L, coder);
    coder.failEncode = true;
    assertThatThrownBy(() -> store.putSealed(key, 2L, coder))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot encode")
        .hasMessageContaining("CountingCoder");
    coder.failEncode = false;
    assertThat(store.get(key, coder)).isEqualTo(1L);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void delete_ofACellCreatedSinceTheLastWriteBack_neverReachesTheStore(Backend backend) {
    CachedStore store = open(backend, 100);
    StateKey key = store.key(b("window-cell"));
    assertThat(store.get(key, coder)).isNull(); // loaded absent
    store.put(key, 5L, coder);
    store.put(key, 6L, coder);
    store.delete(key);
    cache.flush();
    assertThat(cache.stats().flushedEntries()).isZero();
    assertThat(cache.stats().elidedDeletes()).isEqualTo(1);
    assertThat(coder.encodes).hasValue(0);
    assertThat(store.byteStore().get(b("window-cell"))).isNull();
    assertThat(store.get(key, coder)).isNull();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void delete_ofAKeyTheStoreHolds_isWritten_whateverHappenedInTheCacheBefore(Backend backend) throws Exception {
    CachedStore store = open(backend, 100);
    // Written without a read: the cache cannot know the store holds it, so the delete must reach it.
    store.byteStore().put(b("blind"), enc(1));
    store.put(b("blind"), 2L, coder);
    store.delete(b("blind"));
    // Loaded absent, then written back: the store holds it now.
    assertThat(store.get(b("flushed"), coder)).isNull();
    store.put(b("flushed"), 3L, coder);
    cache.flush();
    store.delete(b("flushed"));
    // Loaded present.
    store.byteStore().put(b("loaded"), enc(4));
    assertThat(store.get(b("loaded"), coder)).isEqualTo(4L);
    store.delete(b("loaded"));
    cache.flush();
    assertThat(store.byteStore().get(b("blind"))).isNull();
    assertThat(store.byteStore().get(b("flushed"))).isNull();
    assertThat(store.byteStore().get(b("loaded"))).isNull();
    assertThat(cache.stats().elidedDeletes()).isZero();
    // Deleted and written back: a put and a delete again need no tombstone.
    store.put(b("loaded"), 5L, coder);
    store.delete(b("loaded"));
    cache.flush();
    assertThat(cache.stats().elidedDeletes()).isEqualTo(1);
    assertThat(store.byteStore().get(b("loaded"))).isNull();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void evict_ofADeletedNeverStoredCell_writesNothing(Backend backend) {
    CachedStore store = open(backend, 1);
    assertThat(store.get(b("a"), coder)).isNull();
    store.put(b("a"), 1L, coder);
    store.delete(b("a"));
    store.put(b("b"), 2L, coder); // evicts one of them
    store.put(b("c"), 3L, coder);
    cache.flush();
    assertThat(store.byteStore().get(b("a"))).isNull();
    assertThat(store.get(b("a"), coder)).isNull();
    assertThat(store.get(b("b"), coder)).isEqualTo(2L);
    assertThat(store.get(b("c"), coder)).isEqualTo(3L);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void blindWritesAndDeletes_ofKeysNeverStored_reachTheStoreNever_evenThroughEviction(Backend backend) {
    CachedStore store = open(backend, 2);
    store.put(b("kept"), 1L, coder);
    cache.flush(); // "kept" is stored: its blind delete below must be written
    for (int i = 0; i < 50; i++) {
      StateKey key = store.key(b("window-" + i));
      store.put(key, (long) i, coder); // no read first, as runners-core writes a new window's cells
      store.delete(key);
      store.delete(b("never-" + i)); // a delete of a key nobody wrote
      store.put(b("other-" + i), 7L, coder); // evicts earlier entries from the two-entry cache
      cache.safePoint();
    }
    store.delete(b("kept"));
    cache.flush();
    assertThat(cache.stats().elidedDeletes()).isEqualTo(100);
    assertThat(cache.stats().evictions()).isPositive();
    assertThat(coder.encodes).as("one per stored value: kept and the others").hasValue(51);
    assertThat(store.get(b("window-3"), coder)).isNull();
    assertThat(store.get(b("other-3"), coder)).isEqualTo(7L);
    assertThat(store.byteStore().get(b("kept"))).isNull();
    assertThat(store.byteStore().get(b("window-3"))).isNull();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void evict_dirtyEntries_areWrittenBack_neverLost(Backend backend) throws Exception {
    CachedStore store = open(backend, 1);
    for (long i = 0; i < 2000; i++) {
      store.put(b("k" + i), i, coder);
      cache.safePoint(); // one element per put: evicted entries are written back at its end
    }
    assertThat(cache.stats().evictions()).isGreaterThanOrEqualTo(1999);
    assertThat(cache.stats().dirtyWriteBacks()).isGreaterThanOrEqualTo(1999);
    assertThat(cache.stats().entries()).isLessThanOrEqualTo(1);
    for (long i = 0; i < 2000; i++) {
      assertThat(store.get(b("k" + i), coder)).as("key k%d", i).isEqualTo(i);
    }
    cache.flush();
    for (long i = 0; i < 2000; i++) {
      assertThat(dec(store.byteStore().get(b("k" + i)))).isEqualTo(i);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void dirtyList_staysBoundedByTheCache_notByWritesBetweenCommits(Backend backend) {
    CachedStore store = open(backend, 10);
    for (long i = 0; i < 50_000; i++) {
      store.put(b("k" + i), i, coder);
      cache.safePoint();
    }
    assertThat(store.dirtyListLength()).isLessThan(2 * 10 + 1024 + 1);
    assertThat(cache.stats().dirtyEntries()).isBetween(1L, 10L);
    cache.commit(Map.of());
    assertThat(cache.stats().dirtyEntries()).isZero();
    assertThat(store.get(b("k0"), coder)).isEqualTo(0L);
    assertThat(store.get(b("k49999"), coder)).isEqualTo(49_999L);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void dirtyList_staysBounded_acrossPutAndDeleteCyclesOfAnUnstoredKey(Backend backend) {
    CachedStore store = open(backend, 100);
    StateKey hot = store.key(b("hot"));
    StateKey other = store.key(b("other"));
    assertThat(store.get(hot, coder)).isNull();
    assertThat(store.get(other, coder)).isNull();
    for (long i = 0; i < 20_000; i++) {
      store.put(hot, i, coder); // a new entry each time: the delete dropped the last one
      store.delete(hot); // absent and never stored: nothing for the store, and out of the cache
      store.put(other, i, coder); // dirty already: listed once
    }
    assertThat(cache.stats().entries()).isEqualTo(1);
    assertThat(store.dirtyListLength()).as("stale slots compacted").isLessThanOrEqualTo(2 * 1 + 1024 + 1);
    assertThat(cache.stats().dirtyEntries()).isEqualTo(1);
    store.put(hot, 7L, coder);
    cache.flush();
    assertThat(coder.encodes).hasValue(2);
    assertThat(store.get(hot, coder)).isEqualTo(7L);
    assertThat(store.get(other, coder)).isEqualTo(19_999L);
  }

  /**
   * runners-core's MergingActiveWindowSet reads its window map, changes it in place while it merges
   * (a NEW window with an empty set), cleans up, and writes only if the map differs from a copy
   * taken at the read. If the dirty entry is evicted (or flushed) in between, the half-merged map
   * must not become the stored value: write-back happens at the next safe point, with what the
   * object holds then. (Nexmark Q4 failed "Unexpected empty state address window set" without it.)
   */
  @ParameterizedTest
  @EnumSource(Backend.class)
  void aReaderThatChangesAValueInPlaceAndRestoresIt_neverLeavesTheTransientStateInTheStore(Backend backend) {
    CachedStore store = open(backend, 2);
    org.apache.beam.sdk.coders.ListCoder<Long> listCoder = org.apache.beam.sdk.coders.ListCoder.of(VarLongCoder.of());
    store.put(b("tree"), new ArrayList<>(List.of(1L)), listCoder); // dirty, not yet written back
    cache.safePoint(); // the element that wrote it ended
    List<Long> read = store.get(b("tree"), listCoder);
    read.add(2L); // mid-element: a transient change in place
    store.put(b("x"), 1L, coder); // evicts the dirty "tree" entry
    store.put(b("y"), 2L, coder);
    store.put(b("z"), 3L, coder);
    assertThat(store.get(b("tree"), listCoder)).isSameAs(read); // still the reader's object
    store.put(b("w"), 4L, coder); // evicts again
    store.put(b("v"), 5L, coder);
    read.remove(1); // restored: equal to what was read, so the reader writes nothing
    cache.safePoint(); // the element ended
    cache.evictAll();
    cache.flush();
    assertThat(store.get(b("tree"), listCoder)).containsExactly(1L);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void evictedBeforeTheSafePoint_staysReadableAndWritable_thenIsWrittenOnce(Backend backend) throws Exception {
    CachedStore store = open(backend, 1);
    store.put(b("a"), 1L, coder);
    store.put(b("b"), 2L, coder); // evicts "a" within the same unit of work: deferred, not encoded
    assertThat(coder.encodes).hasValue(0);
    assertThat(store.byteStore().get(b("a"))).isNull();
    assertThat(store.get(b("a"), coder)).isEqualTo(1L); // taken back (and "b" deferred)
    store.put(b("b"), 3L, coder); // taken back and changed
    cache.safePoint();
    cache.evictAll();
    assertThat(dec(store.byteStore().get(b("a")))).isEqualTo(1L);
    assertThat(dec(store.byteStore().get(b("b")))).isEqualTo(3L);
    assertThat(coder.encodes).hasValue(2);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void aMissOnAKeyNeverWritten_isAnsweredWithoutTheStore_aWrittenOneFromIt(Backend backend) {
    CachedStore store = open(backend, 1);
    assertThat(store.get(b("new-window-hold"), coder)).isNull();
    assertThat(cache.stats().absentByFilter()).isEqualTo(1);
    store.put(b("written"), 7L, coder);
    cache.safePoint();
    store.put(b("other"), 8L, coder); // evicts "written": written back at the safe point
    cache.safePoint();
    store.put(b("third"), 9L, coder);
    cache.flush();
    assertThat(store.get(b("written"), coder)).isEqualTo(7L);
    assertThat(store.get(b("other"), coder)).isEqualTo(8L);
    assertThat(cache.stats().absentByFilter()).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(value = Backend.class, names = "ROCKSDB")
  void aReopenedStore_findsEveryKeyItHolds(Backend backend) {
    CachedStore store = open(backend, 10);
    for (long i = 0; i < 100; i++) {
      store.put(b("k" + i), i, coder);
    }
    cache.commit(Map.of());
    cache.close();
    storage.close();
    store = open(backend, 10);
    for (long i = 0; i < 100; i++) {
      assertThat(store.get(b("k" + i), coder)).as("k%d", i).isEqualTo(i);
    }
    assertThat(store.get(b("k100"), coder)).isNull();
    assertThat(cache.stats().absentByFilter()).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void aRangeRead_writesBackOnlyTheDirtyCellsInItsRange(Backend backend) {
    CachedStore store = open(backend, 100);
    store.put(b("a/1"), 1L, coder);
    store.put(b("b/1"), 2L, coder);
    List<Long> seen = new ArrayList<>();
    try (StoreIterator<byte[], Long> it = store.prefix(b("a/"), coder)) {
      it.forEachRemaining(e -> seen.add(e.getValue()));
    }
    assertThat(seen).containsExactly(1L);
    assertThat(store.byteStore().get(b("a/1"))).isNotNull();
    assertThat(store.byteStore().get(b("b/1"))).isNull(); // outside the range: still only in the cache
    assertThat(cache.stats().dirtyEntries()).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void evict_updatesAfterEviction_winOverTheWrittenBackValue(Backend backend) {
    CachedStore store = open(backend, 2);
    for (int round = 0; round < 50; round++) {
      for (long k = 0; k < 10; k++) {
        store.put(b("k" + k), round * 100 + k, coder);
      }
      if (round % 7 == 0) {
        cache.flush();
      }
    }
    cache.evictAll();
    assertThat(cache.stats().entries()).isZero();
    for (long k = 0; k < 10; k++) {
      assertThat(store.get(b("k" + k), coder)).isEqualTo(4900 + k);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void evict_weighted_entryTooBig_isWrittenThrough(Backend backend) {
    CachedStore store = open(backend, ObjectCacheSettings.maximumWeight(50, (k, v) -> v == null ? 1 : 100));
    store.put(b("big"), 1L, coder);
    cache.safePoint();
    assertThat(cache.stats().entries()).isZero();
    assertThat(cache.stats().dirtyWriteBacks()).isEqualTo(1);
    assertThat(store.byteStore().get(b("big"))).isNotNull();
    assertThat(store.get(b("big"), coder)).isEqualTo(1L);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void evict_weighted_boundsTotalWeight(Backend backend) {
    CachedStore store = open(backend, ObjectCacheSettings.maximumWeight(1000, (k, v) -> 10));
    for (long i = 0; i < 500; i++) {
      store.put(b("k" + i), i, coder);
    }
    assertThat(cache.stats().entries()).isLessThanOrEqualTo(100);
    for (long i = 0; i < 500; i++) {
      assertThat(store.get(b("k" + i), coder)).isEqualTo(i);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void bytes_valuesGrownSinceTheirWeighing_areWeighedAgainAtTheFlush_andEvictedDownToTheBound(Backend backend) {
    StringUtf8Coder strings = StringUtf8Coder.of();
    CachedStore store = open(backend, ObjectCacheSettings.bounded(1000, 20_000));
    for (int i = 0; i < 40; i++) {
      store.put(b("k" + i), "x".repeat(2000) + i, strings); // never encoded yet: counted at the store's mean
    }
    cache.flush(); // encodes them: each ~2 KB, so about nine fit
    assertThat(cache.stats().estimatedBytes()).isLessThanOrEqualTo(20_000);
    assertThat(cache.stats().entries()).isBetween(1L, 10L);
    for (int i = 0; i < 40; i++) {
      assertThat(store.get(b("k" + i), strings)).isEqualTo("x".repeat(2000) + i); // nothing lost
    }
    assertThat(cache.stats().estimatedBytes()).isLessThanOrEqualTo(20_000);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void bytes_aValueReadFromTheStore_isWeighedByItsEncodedSize(Backend backend) {
    StringUtf8Coder strings = StringUtf8Coder.of();
    CachedStore store = open(backend, ObjectCacheSettings.bounded(1000, 10_000));
    for (int i = 0; i < 20; i++) {
      store.put(b("k" + i), "y".repeat(3000) + i, strings);
      cache.flush();
    }
    cache.evictAll();
    for (int i = 0; i < 20; i++) {
      assertThat(store.get(b("k" + i), strings)).isEqualTo("y".repeat(3000) + i);
      assertThat(cache.stats().entries()).isLessThanOrEqualTo(3); // ~3.1 KB each
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void bytes_aPutsSizeHint_weighsTheValueUntilItIsEncoded(Backend backend) {
    StringUtf8Coder strings = StringUtf8Coder.of();
    CachedStore store = open(backend, ObjectCacheSettings.bounded(1000, 20_000));
    for (int i = 0; i < 20; i++) {
      // tiny values that their writer says will encode to ~5 KB: about three fit
      store.put(store.key(b("k" + i)), "v" + i, strings, 5_000);
      cache.safePoint();
    }
    assertThat(cache.stats().entries()).isBetween(1L, 4L);
    assertThat(cache.stats().estimatedBytes()).isLessThanOrEqualTo(20_000);
    for (int i = 0; i < 20; i++) {
      assertThat(store.get(b("k" + i), strings)).isEqualTo("v" + i); // nothing lost
    }
    assertThatThrownBy(() -> store.put(store.key(b("k")), "v", strings, -1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("encodedBytesHint");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void bytes_aValueGrownInPlace_isWeighedAgainByItsWritersEstimate_andEncodingMeasuresItAfterwards(Backend backend)
      throws Exception {
    StringUtf8Coder strings = StringUtf8Coder.of();
    CachedStore store = open(backend, ObjectCacheSettings.bounded(1000, 1L << 20));
    StateKey key = store.key(b("grows"));
    long base = ObjectCacheSettings.ENTRY_OVERHEAD_BYTES + key.bytes.length;
    store.put(key, "a", strings, 100);
    assertThat(cache.stats().estimatedBytes()).isEqualTo(base + 100);
    store.put(key, "ab", strings, 150); // moved by 50 bytes: under 64, not weighed again
    cache.safePoint();
    assertThat(cache.stats().estimatedBytes()).isEqualTo(base + 100);
    for (int hint = 200; hint <= 6_400; hint += 100) {
      store.put(key, "abc", strings, hint); // listed once to weigh again, whatever the number of puts
    }
    cache.safePoint();
    assertThat(cache.stats().estimatedBytes()).isEqualTo(base + 6_400);
    cache.flush(); // encoded now: the writer's estimate no longer counts
    cache.safePoint();
    assertThat(cache.stats().estimatedBytes()).isEqualTo(base + CoderUtils.encodeToByteArray(strings, "abc").length);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void bytes_smallValues_stillMeetTheEntryBound(Backend backend) {
    CachedStore store = open(backend, ObjectCacheSettings.bounded(10, 1L << 30));
    for (long i = 0; i < 100; i++) {
      store.put(b("k" + i), i, coder);
      cache.safePoint();
    }
    assertThat(cache.stats().entries()).isLessThanOrEqualTo(10);
    for (long i = 0; i < 100; i++) {
      assertThat(store.get(b("k" + i), coder)).isEqualTo(i);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void bytes_estimate_isReportedOnlyForAByteBound(Backend backend) {
    CachedStore store = open(backend, 100);
    store.put(b("k"), 1L, coder);
    assertThat(cache.stats().estimatedBytes()).isEqualTo(-1);
    cache.close();
    storage.close();
    store = open(backend, ObjectCacheSettings.bounded(100, 1L << 20)); // each entry weighs at least 10,486
    store.put(b("k"), 1L, coder);
    // 128 bytes of bookkeeping + the 1-byte key + the store's initial mean value size (64); no floor
    assertThat(cache.stats().estimatedBytes()).isEqualTo(ObjectCacheSettings.ENTRY_OVERHEAD_BYTES + 1 + 64);
    cache.flush(); // encoded: one byte, weighed again only if it moved by more than 64 bytes
    store.put(b("p1"), 2L, coder);
    store.put(b("p2"), 3L, coder);
    store.deletePrefix(b("p"));
    assertThat(cache.stats().estimatedBytes()).isEqualTo(ObjectCacheSettings.ENTRY_OVERHEAD_BYTES + 1 + 64);
    cache.evictAll();
    assertThat(cache.stats().estimatedBytes()).isZero();
    assertThatThrownBy(() -> ObjectCacheSettings.bounded(10, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maximumBytes");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void delete_isATombstone_untilFlushed(Backend backend) {
    CachedStore store = open(backend, 100);
    store.put(b("k"), 1L, coder);
    cache.commit(Map.of());
    store.delete(b("k"));
    assertThat(store.get(b("k"), coder)).isNull();
    assertThat(store.byteStore().get(b("k"))).isNotNull();
    cache.flush();
    assertThat(store.byteStore().get(b("k"))).isNull();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void delete_ofEvictedTombstone_isWrittenBack(Backend backend) {
    CachedStore store = open(backend, 1);
    store.put(b("a"), 1L, coder);
    cache.commit(Map.of());
    store.delete(b("a"));
    store.put(b("b"), 2L, coder); // evicts one of them
    store.put(b("c"), 3L, coder);
    cache.evictAll();
    assertThat(store.byteStore().get(b("a"))).isNull();
    assertThat(store.get(b("a"), coder)).isNull();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void range_seesUnflushedWritesAndDeletes_inKeyOrder(Backend backend) {
    CachedStore store = open(backend, 100);
    store.put(b("a1"), 1L, coder);
    store.put(b("a2"), 2L, coder);
    store.put(b("b1"), 3L, coder);
    cache.commit(Map.of());
    store.delete(b("a1"));
    store.put(b("a3"), 30L, coder);
    store.put(b("a2"), 20L, coder);
    List<String> seen = new ArrayList<>();
    try (StoreIterator<byte[], Long> it = store.prefix(b("a"), coder)) {
      while (it.hasNext()) {
        Entry<byte[], Long> e = it.next();
        seen.add(new String(e.getKey()) + "=" + e.getValue());
      }
    }
    assertThat(seen).containsExactly("a2=20", "a3=30");
    try (StoreIterator<byte[], Long> it = store.range(b("a3"), null, coder)) {
      assertThat(it.next().getValue()).isEqualTo(30L);
      assertThat(it.next().getValue()).isEqualTo(3L);
      assertThat(it.hasNext()).isFalse();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void deletePrefix_removesCachedAndStoredKeys(Backend backend) {
    CachedStore store = open(backend, 100);
    store.put(b("bag/1"), 1L, coder);
    store.put(b("bag/2"), 2L, coder);
    cache.commit(Map.of());
    store.put(b("bag/3"), 3L, coder); // dirty
    store.put(b("other"), 9L, coder);
    assertThat(store.get(b("bag/1"), coder)).isEqualTo(1L); // cached
    assertThat(store.deletePrefix(b("bag/"))).isEqualTo(3);
    assertThat(store.get(b("bag/1"), coder)).isNull();
    assertThat(store.get(b("bag/3"), coder)).isNull();
    assertThat(store.get(b("other"), coder)).isEqualTo(9L);
    try (StoreIterator<byte[], Long> it = store.prefix(b("bag/"), coder)) {
      assertThat(it.hasNext()).isFalse();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void commit_writesDirtyStateAndMetadataTogether(Backend backend) {
    CachedStore store = open(backend, 100);
    store.put(b("k"), 5L, coder);
    cache.commit(Map.of("mark", b("m1")));
    assertThat(storage.stagedBytes()).isZero();
    assertThat(storage.committedMetadata()).containsKey("mark");
    if (backend.durable()) {
      cache.close();
      storage.close();
      storage = backend.open(dir);
      cache = new ObjectCache(storage, ObjectCacheSettings.maximumEntries(100));
      assertThat(cache.store("s").get(b("k"), coder)).isEqualTo(5L);
      assertThat(storage.committedMetadata()).containsKey("mark");
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void writeBackFailure_duringEviction_failsTheNextFlushAndCommit(Backend backend) {
    CachedStore store = open(backend, 1);
    coder.failEncode = true;
    store.put(b("a"), 1L, coder);
    store.put(b("b"), 2L, coder); // evicts a dirty entry whose encode fails inside Caffeine
    store.put(b("c"), 3L, coder);
    assertThatThrownBy(() -> cache.commit(Map.of()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("could not be written back")
        .hasRootCauseInstanceOf(org.apache.beam.sdk.coders.CoderException.class);
    assertThat(storage.commitSequence()).isZero();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void flush_coderFailure_namesTheKeyAndCoder(Backend backend) {
    CachedStore store = open(backend, 100);
    coder.failEncode = true;
    store.put(b("k"), 1L, coder);
    assertThatThrownBy(cache::flush)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("s:")
        .hasMessageContaining("CountingCoder");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void get_undecodableBytes_failsNamingTheStore(Backend backend) {
    CachedStore store = open(backend, 100);
    store.byteStore().put(b("k"), b("not a varlong \u00ff\u00ff\u00ff\u00ff\u00ff\u00ff\u00ff\u00ff\u00ff\u00ff"));
    assertThatThrownBy(() -> store.get(b("k"), VarLongCoder.of()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot decode");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void storesShareTheBound_butNotTheirKeys(Backend backend) {
    CachedStore one = open(backend, 100);
    CachedStore two = cache.store("t");
    one.put(b("k"), "one", StringUtf8Coder.of());
    two.put(b("k"), "two", StringUtf8Coder.of());
    assertThat(one.get(b("k"), StringUtf8Coder.of())).isEqualTo("one");
    assertThat(two.get(b("k"), StringUtf8Coder.of())).isEqualTo("two");
    assertThat(cache.store("s")).isSameAs(one);
    assertThatThrownBy(() -> one.get(two.key(b("k")), StringUtf8Coder.of()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another store");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void badArguments_andClosedCache_areRejected(Backend backend) {
    CachedStore store = open(backend, 100);
    assertThatThrownBy(() -> store.put((byte[]) null, 1L, coder)).isInstanceOf(NullPointerException.class).hasMessage("key");
    assertThatThrownBy(() -> store.put(b("k"), null, coder)).isInstanceOf(NullPointerException.class).hasMessage("value");
    assertThatThrownBy(() -> store.put(b("k"), 1L, null)).isInstanceOf(NullPointerException.class).hasMessage("coder");
    assertThatThrownBy(() -> store.get(b("k"), null)).isInstanceOf(NullPointerException.class).hasMessage("coder");
    assertThatThrownBy(() -> ObjectCacheSettings.maximumEntries(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maximumEntries");
    cache.close();
    assertThatThrownBy(() -> store.get(b("k"), coder)).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    assertThatThrownBy(() -> cache.flush()).isInstanceOf(IllegalStateException.class);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void close_discardsUncommittedState_butKeepsTheStorageOpen(Backend backend) {
    CachedStore store = open(backend, 100);
    store.put(b("k"), 1L, coder);
    cache.close();
    ObjectCache again = new ObjectCache(storage, ObjectCacheSettings.maximumEntries(100));
    assertThat(again.store("s").get(b("k"), coder)).isNull();
    again.close();
  }
}
