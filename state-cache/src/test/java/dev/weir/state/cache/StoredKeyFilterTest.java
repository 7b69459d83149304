package dev.weir.state.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The Bloom filter of stored keys: no false negatives, few false positives, rebuilt or given up on when full. */
class StoredKeyFilterTest {

  @Test
  void everyAddedHash_mightBeContained_andFewOthersAre() {
    StoredKeyFilter filter = new StoredKeyFilter(100_000);
    Random random = new Random(3);
    int[] added = new int[100_000];
    for (int i = 0; i < added.length; i++) {
      added[i] = random.nextInt();
      filter.add(added[i]);
    }
    for (int hash : added) {
      assertThat(filter.mightContain(hash)).isTrue();
    }
    int falsePositives = 0;
    for (int i = 0; i < 100_000; i++) {
      if (filter.mightContain(random.nextInt())) {
        falsePositives++;
      }
    }
    assertThat(falsePositives).isLessThan(1_000); // sized at 20 bits per key: well under 1%
    assertThat(filter.wantsRebuild()).isFalse();
  }

  @Test
  void wantsARebuild_afterATenthOfItsBitsInInsertions() {
    StoredKeyFilter filter = new StoredKeyFilter(0);
    long limit = (1L << StoredKeyFilter.MIN_LOG2_BITS) / 10;
    for (long i = 0; i <= limit; i++) {
      filter.add((int) (i * 2654435761L));
    }
    assertThat(filter.wantsRebuild()).isTrue();
    filter.resize(1_000);
    assertThat(filter.wantsRebuild()).isFalse();
    assertThat(filter.mightContain(12345)).isFalse();
  }

  @Test
  void tooManyKeys_orADisable_answerMaybeForEveryKey() {
    StoredKeyFilter filter = new StoredKeyFilter(1L << 30);
    assertThat(filter.disabled()).isTrue();
    assertThat(filter.mightContain(42)).isTrue();
    StoredKeyFilter other = new StoredKeyFilter(10);
    other.disable();
    assertThat(other.mightContain(42)).isTrue();
    assertThat(other.wantsRebuild()).isFalse();
  }
}
