package dev.weir.state.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link ByteKeys#hash}: equal keys hash equally, and hashes spread over a table's low bits. */
class ByteKeysTest {

  @Test
  void hash_ofEqualArrays_isEqual_atEveryLength() {
    Random random = new Random(7);
    for (int length = 0; length <= 40; length++) {
      byte[] key = new byte[length];
      random.nextBytes(key);
      assertThat(ByteKeys.hash(Arrays.copyOf(key, length))).as("length %d", length).isEqualTo(ByteKeys.hash(key));
    }
  }

  @Test
  void hash_changesWithEveryBit_atEveryPosition_andWithTrailingZeros() {
    Random random = new Random(11);
    for (int length = 1; length <= 40; length++) {
      byte[] key = new byte[length];
      random.nextBytes(key);
      int base = ByteKeys.hash(key);
      for (int bit = 0; bit < length * 8; bit++) {
        byte[] flipped = key.clone();
        flipped[bit / 8] ^= (byte) (1 << (bit % 8));
        assertThat(ByteKeys.hash(flipped)).as("length %d, bit %d", length, bit).isNotEqualTo(base);
      }
      assertThat(ByteKeys.hash(Arrays.copyOf(key, length + 1))).as("a zero byte appended to %d", length)
          .isNotEqualTo(base);
    }
  }

  @Test
  void hash_ofSimilarKeys_spreadsOverATablesLowBits() {
    // Keys as a keyed operator sees them: a common prefix and a counter, as encoded strings.
    int keys = 1 << 16;
    int buckets = 1 << 10;
    int[] counts = new int[buckets];
    Set<Integer> distinct = new HashSet<>();
    for (int i = 0; i < keys; i++) {
      byte[] key = ("operator-7/window-0/key-" + i).getBytes(StandardCharsets.UTF_8);
      int h = ByteKeys.hash(key);
      distinct.add(h);
      counts[h & (buckets - 1)]++;
    }
    assertThat(distinct).as("collisions among %d keys", keys).hasSizeGreaterThan(keys - 4);
    int expected = keys / buckets; // 64 per bucket
    assertThat(Arrays.stream(counts).max().orElseThrow()).isLessThan(expected * 2);
    assertThat(Arrays.stream(counts).min().orElseThrow()).isGreaterThan(expected / 2);
  }
}
