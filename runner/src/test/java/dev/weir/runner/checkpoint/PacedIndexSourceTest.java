package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.util.SerializableUtils;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/** The crash tests' source on its own: splits, timestamps, watermarks and the mark round trip. */
class PacedIndexSourceTest {
  private static final org.apache.beam.sdk.options.PipelineOptions OPTIONS = PipelineOptionsFactory.create();

  @Test
  void splitsReadDisjointInterleavedIndexesWithTimestampsFromTheIndex() throws Exception {
    List<PacedIndexSource> splits = new PacedIndexSource(10, 0, 3).split(7, OPTIONS);
    assertThat(splits).hasSize(3);
    List<Long> all = new ArrayList<>();
    for (PacedIndexSource split : splits) {
      PacedIndexSource.Reader reader = split.createReader(OPTIONS, null);
      assertThat(reader.getWatermark()).isEqualTo(BoundedWindow.TIMESTAMP_MIN_VALUE);
      for (boolean more = reader.start(); more; more = reader.advance()) {
        assertThat(reader.getCurrentTimestamp()).isEqualTo(new Instant(reader.getCurrent()));
        assertThat(reader.getWatermark()).as("watermark = timestamp of the last element")
            .isEqualTo(reader.getCurrentTimestamp());
        all.add(reader.getCurrent());
      }
      assertThat(reader.getWatermark()).isEqualTo(BoundedWindow.TIMESTAMP_MAX_VALUE);
    }
    assertThat(all).containsExactlyInAnyOrder(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
    assertThat(splits.get(1).split(5, OPTIONS)).containsExactly(splits.get(1));
  }

  @Test
  void aReaderFromAnEncodedMarkResumesWhereTheMarkWasTaken() throws Exception {
    PacedIndexSource split = SerializableUtils.ensureSerializable(new PacedIndexSource(100, 0, 2).split(2, OPTIONS).get(1));
    PacedIndexSource.Reader first = split.createReader(OPTIONS, null);
    first.start();
    for (int i = 0; i < 4; i++) {
      first.advance();
    }
    assertThat(first.getCurrent()).isEqualTo(9L);
    byte[] bytes = CoderUtils.encodeToByteArray(split.getCheckpointMarkCoder(), first.getCheckpointMark());
    PacedIndexSource.Mark mark = CoderUtils.decodeFromByteArray(split.getCheckpointMarkCoder(), bytes);
    assertThat(mark).isEqualTo(new PacedIndexSource.Mark(1, 11));

    PacedIndexSource.Reader resumed = split.createReader(OPTIONS, mark);
    assertThat(resumed.getWatermark()).as("the restored watermark").isEqualTo(new Instant(9));
    assertThat(resumed.start()).isTrue();
    assertThat(resumed.getCurrent()).isEqualTo(11L);
    first.advance();
    assertThat(first.getCurrent()).isEqualTo(resumed.getCurrent());
  }

  @Test
  void aMarkOfAnotherSplitIsRefused() {
    List<PacedIndexSource> splits = new PacedIndexSource(100, 0, 2).split(2, OPTIONS);
    assertThatThrownBy(() -> splits.get(0).createReader(OPTIONS, new PacedIndexSource.Mark(1, 11)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("checkpoint mark of split 1 given to split 0");
  }

  @Test
  void pacingHoldsElementsBackWithoutChangingThem() throws Exception {
    // 1 element per second over 1000 splits: one per 1000 s per split; the first is free, the second waits
    PacedIndexSource.Reader reader = new PacedIndexSource(10_000, 1, 1000).split(1, OPTIONS).get(0)
        .createReader(OPTIONS, null);
    assertThat(reader.start()).isTrue();
    assertThat(reader.getCurrent()).isZero();
    assertThat(reader.advance()).isFalse();
    assertThat(reader.getWatermark()).isEqualTo(new Instant(0));
    assertThat(reader.getCheckpointMark()).isEqualTo(new PacedIndexSource.Mark(0, 1000));
  }

  @Test
  void badArgumentsAreNamed() {
    assertThatThrownBy(() -> new PacedIndexSource(10, 0, 0)).hasMessageContaining("splits >= 1");
  }
}
