package dev.weir.state.cache;

import static dev.weir.state.store.TestBytes.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.state.store.Backend;
import java.util.ArrayDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.beam.sdk.util.CoderUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Sealed puts encoded off the owning thread ({@link BackgroundSealer}, {@link SealerQueue}): the
 * sealer's jobs run when the test says, so every interleaving of puts, reads, write-backs and
 * finished encodings is pinned.
 */
class BackgroundSealingTest extends CacheFixture {
  /** The sealer: jobs wait here until {@link #runSealer()}. */
  private final ArrayDeque<Runnable> jobs = new ArrayDeque<>();
  private final Executor sealer = jobs::add;

  private CachedStore open(Backend backend, ObjectCacheSettings settings) {
    return open(backend, settings, sealer);
  }

  private CachedStore open(Backend backend, long entries) {
    return open(backend, ObjectCacheSettings.maximumEntries(entries));
  }

  private void runSealer() {
    while (!jobs.isEmpty()) {
      jobs.poll().run();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void sealedPut_isCachedAsTheObject_untilTheSealerEncodedIt_andTheFlushWritesThoseBytes(Backend backend)
      throws Exception {
    CachedStore store = open(backend, 100);
    StateKey key = store.key(b("full-chunk"));
    Long value = 77L;
    store.putSealed(key, value, coder);
    assertThat(coder.encodes).as("not encoded on the owning thread").hasValue(0);
    assertThat(store.get(key, coder)).as("read back as the object, no decode").isSameAs(value);
    runSealer();
    assertThat(coder.encodes).hasValue(1);
    cache.safePoint(); // installs the bytes
    cache.flush();
    assertThat(coder.encodes).as("the flush writes the sealer's bytes as they are").hasValue(1);
    assertThat(store.byteStore().get(b("full-chunk"))).isEqualTo(CoderUtils.encodeToByteArray(coder, 77L));
    assertThat(store.get(key, coder)).isEqualTo(77L);
    assertThat(coder.decodes).as("a read after the install decodes once (after the flush decoded the coder's "
        + "first stored value back)").hasValue(2);
    assertThat(cache.stats().bytesEncoded()).as("counted once, at the install")
        .isEqualTo(CoderUtils.encodeToByteArray(coder, 77L).length);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void flushBeforeTheSealerFinished_encodesInline_andTheLateBytesChangeNothing(Backend backend) throws Exception {
    CachedStore store = open(backend, 100);
    StateKey key = store.key(b("k"));
    store.putSealed(key, 5L, coder);
    cache.flush();
    assertThat(coder.encodes).hasValue(1);
    runSealer();
    cache.safePoint();
    cache.flush();
    assertThat(cache.stats().flushedEntries()).as("the entry stayed clean").isEqualTo(1);
    assertThat(store.get(key, coder)).isEqualTo(5L);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void aValueReplacedOrDeletedWhileItsEncodingRan_keepsTheLatestWrite(Backend backend) throws Exception {
    CachedStore store = open(backend, 100);
    StateKey replaced = store.key(b("replaced"));
    StateKey deleted = store.key(b("deleted"));
    store.putSealed(replaced, 1L, coder);
    store.put(replaced, 2L, coder);
    store.putSealed(deleted, 3L, coder);
    store.delete(deleted);
    runSealer();
    cache.safePoint();
    assertThat(store.get(replaced, coder)).isEqualTo(2L);
    assertThat(store.get(deleted, coder)).isNull();
    cache.flush();
    assertThat(store.byteStore().get(b("replaced"))).isEqualTo(CoderUtils.encodeToByteArray(coder, 2L));
    assertThat(store.byteStore().get(b("deleted"))).isNull();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void evictedBeforeItsEncodingFinished_isWrittenBackInline_andReadBack(Backend backend) {
    CachedStore store = open(backend, 1);
    putSealedIndexes(store, 50);
    assertThat(cache.stats().dirtyWriteBacks()).isGreaterThanOrEqualTo(49);
    runSealer();
    cache.safePoint();
    assertReadsBackTheirIndex(store, 50);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void aCoderFailureOnTheSealer_failsTheWriteBack_onTheOwningThread(Backend backend) {
    CachedStore store = open(backend, 100);
    StateKey key = store.key(b("k"));
    coder.failEncode = true;
    store.putSealed(key, 2L, coder);
    runSealer(); // fails quietly: the entry keeps its object
    cache.safePoint();
    assertThat(store.get(key, coder)).isEqualTo(2L);
    assertThatThrownBy(cache::flush)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot encode")
        .hasMessageContaining("CountingCoder");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void beyondTheValuesInFlight_aSealedPutEncodesInline(Backend backend) {
    CachedStore store = open(backend, 10_000);
    int extra = 10;
    for (long i = 0; i < BackgroundSealer.MAX_IN_FLIGHT + extra; i++) {
      store.putSealed(store.key(b("k" + i)), i, coder);
    }
    assertThat(jobs).hasSize(BackgroundSealer.MAX_IN_FLIGHT);
    assertThat(coder.encodes).hasValue(extra);
    runSealer();
    cache.safePoint();
    store.putSealed(store.key(b("after")), 1L, coder);
    assertThat(jobs).as("installed jobs free their room").hasSize(1);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void bytes_anInstalledEncoding_isWeighedByItsSize(Backend backend) {
    CachedStore store = open(backend, ObjectCacheSettings.bounded(1000, 20_000));
    org.apache.beam.sdk.coders.StringUtf8Coder strings = org.apache.beam.sdk.coders.StringUtf8Coder.of();
    for (int i = 0; i < 20; i++) {
      store.putSealed(store.key(b("k" + i)), "z".repeat(5_000) + i, strings);
      runSealer();
      cache.safePoint();
    }
    assertThat(cache.stats().estimatedBytes()).isLessThanOrEqualTo(20_000);
    for (int i = 0; i < 20; i++) {
      assertThat(store.get(b("k" + i), strings)).isEqualTo("z".repeat(5_000) + i);
    }
  }

  @Test
  void sealerQueue_runPending_takesAtMostTheGivenNumberOfJobs() {
    try (SealerQueue queue = new SealerQueue()) {
      AtomicInteger ran = new AtomicInteger();
      for (int i = 0; i < 5; i++) {
        queue.execute(ran::incrementAndGet);
      }
      assertThat(queue.runPending(3)).isEqualTo(3);
      assertThat(queue.pending()).isEqualTo(2);
      assertThat(queue.runPending(10)).isEqualTo(2);
      assertThat(ran).hasValue(5);
      assertThat(queue.runPending(10)).isZero();
    }
  }

  @Test
  void sealerQueue_dedicatedThreads_runJobsAsTheyCome_andCloseRefusesMore() throws Exception {
    SealerQueue queue = new SealerQueue();
    queue.startThreads(2, "test-sealer");
    CountDownLatch done = new CountDownLatch(100);
    for (int i = 0; i < 100; i++) {
      queue.execute(done::countDown);
    }
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    queue.close();
    assertThatThrownBy(() -> queue.execute(() -> { }))
        .isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("closed");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void aClosedSealerQueue_makesSealedPutsEncodeInline(Backend backend) {
    storage = backend.open(dir);
    SealerQueue queue = new SealerQueue();
    queue.close();
    cache = new ObjectCache(storage, ObjectCacheSettings.maximumEntries(100), queue);
    CachedStore store = cache.store("s");
    store.putSealed(store.key(b("k")), 3L, coder);
    assertThat(coder.encodes).hasValue(1);
    assertThat(store.get(b("k"), coder)).isEqualTo(3L);
  }
}
