package dev.weir.samza;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.memory.InMemoryStorage;
import org.apache.samza.storage.kv.KeyValueStore;
import org.junit.jupiter.api.Test;

/**
 * {@link MessageSequences}: producer numbering per output partition, the consumer dropping replays
 * per producer, and both halves read back by a new instance over the same Samza store, as after
 * samza-core restored the store of the last checkpoint (what was not persisted before it is gone).
 */
class MessageSequencesTest {
  private static SortedByteStore sequenceStore(SamzaKvStorage storage) {
    return storage.sequenceStore();
  }

  private static SamzaKvStorage storage() {
    KeyValueStore<byte[], byte[]> samza = new InMemoryStorage().store("samza");
    return new SamzaKvStorage(samza);
  }

  @Test
  void producer_numbersEachOutputPartitionFromOne() {
    MessageSequences seq = new MessageSequences(sequenceStore(storage()));
    assertThat(seq.nextSequence("s0-shuffle", 0)).isEqualTo(1);
    assertThat(seq.nextSequence("s0-shuffle", 0)).isEqualTo(2);
    assertThat(seq.nextSequence("s0-shuffle", 5)).isEqualTo(1);
    assertThat(seq.nextSequence("s1-forward", 0)).isEqualTo(1);
    assertThat(seq.nextSequence("s0-shuffle", 0)).isEqualTo(3);
  }

  @Test
  void consumer_dropsWhatIsNotAboveTheHighestTakenFromThatProducer() {
    MessageSequences seq = new MessageSequences(sequenceStore(storage()));
    assertThat(seq.accept("s0", 2, 1)).isTrue();
    assertThat(seq.accept("s0", 2, 2)).isTrue();
    assertThat(seq.accept("s0", 2, 2)).as("the same element again").isFalse();
    assertThat(seq.accept("s0", 2, 1)).as("an older one").isFalse();
    assertThat(seq.accept("s0", 3, 1)).as("another producer numbers on its own").isTrue();
    assertThat(seq.accept("s1", 2, 1)).as("another stream too").isTrue();
    assertThat(seq.accept("s0", 2, 0)).as("not numbered: always taken").isTrue();
    assertThat(seq.accept("s0", 2, 0)).isTrue();
    assertThat(seq.accept("s0", 2, 5)).as("a gap is taken (numbers are per partition, all of them arrive)").isTrue();
    assertThat(seq.highestTaken("s0", 2)).isEqualTo(5);
    assertThat(seq.dropped()).isEqualTo(2);
  }

  @Test
  void restart_resumesBothHalvesAtThePersistedNumbers_andTheReplayIsDropped() {
    SamzaKvStorage storage = storage();
    MessageSequences producer = new MessageSequences(sequenceStore(storage));
    // the producer sends 1..3 and checkpoints, then 4..5, then dies before its next checkpoint
    for (int i = 0; i < 3; i++) {
      producer.nextSequence("s0", 1);
    }
    producer.persist();
    producer.nextSequence("s0", 1);
    producer.nextSequence("s0", 1);
    // the consumer took 1..5 and checkpointed them
    SamzaKvStorage consumerStorage = storage();
    MessageSequences consumer = new MessageSequences(sequenceStore(consumerStorage));
    for (long s = 1; s <= 5; s++) {
      assertThat(consumer.accept("s0", 0, s)).isTrue();
    }
    consumer.persist();

    // restarted from its checkpoint, the producer numbers the replayed elements 4, 5 again
    MessageSequences restarted = new MessageSequences(sequenceStore(storage));
    assertThat(restarted.nextSequence("s0", 1)).isEqualTo(4);
    assertThat(restarted.nextSequence("s0", 1)).isEqualTo(5);
    assertThat(restarted.nextSequence("s0", 1)).isEqualTo(6);
    // a restarted consumer drops 4 and 5 and takes 6
    MessageSequences consumerAgain = new MessageSequences(sequenceStore(consumerStorage));
    assertThat(consumerAgain.accept("s0", 0, 4)).isFalse();
    assertThat(consumerAgain.accept("s0", 0, 5)).isFalse();
    assertThat(consumerAgain.accept("s0", 0, 6)).isTrue();
  }

  @Test
  void restartedConsumer_takesAgainWhatItTookAfterItsCheckpoint() {
    SamzaKvStorage storage = storage();
    MessageSequences consumer = new MessageSequences(sequenceStore(storage));
    assertThat(consumer.accept("s0", 0, 1)).isTrue();
    consumer.persist();
    assertThat(consumer.accept("s0", 0, 2)).isTrue(); // its effect is lost with the process, as is this number
    MessageSequences restarted = new MessageSequences(sequenceStore(storage));
    assertThat(restarted.highestTaken("s0", 0)).isEqualTo(1);
    assertThat(restarted.accept("s0", 0, 2)).as("re-read from the checkpointed offset: taken again").isTrue();
  }

  @Test
  void numbers_liveInTheReservedStore_notInTheUsersStores() {
    SamzaKvStorage storage = storage();
    MessageSequences seq = new MessageSequences(sequenceStore(storage));
    seq.nextSequence("s0", 0);
    seq.persist();
    assertThat(storage.storeNames()).isEmpty();
    assertThatThrownBy(() -> storage.store("__weir.sequences")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void anEntryNotInItsFormat_failsNamingTheStore() {
    SamzaKvStorage storage = storage();
    storage.sequenceStore().put(new byte[] {'x', 1}, new byte[] {1});
    assertThatThrownBy(() -> new MessageSequences(storage.sequenceStore()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("__weir.sequences");
  }
}
