package dev.weir.runner.translation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.ExecutionEnvironment;
import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.io.BoundedSource;
import org.apache.beam.sdk.io.CountingSource;
import org.apache.beam.sdk.io.OffsetBasedSource;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.util.CoderUtils;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * {@link UnboundedSplitGroup} and {@link BoundedSplitGroup}: every element of every split once, a
 * restore from the group's encoded mark goes on where the group was, the watermark is the least of
 * the splits', and the Samza environments (only they) read more splits than {@code --parallelism}
 * through {@code --parallelism} groups.
 */
class SplitGroupTest {
  private static final PipelineOptions OPTIONS = PipelineOptionsFactory.create();

  /** Unbounded splits of 0..n-1 (each split a residue class), with the timestamp = the value. */
  @SuppressWarnings("unchecked")
  private static List<UnboundedSource<Long, UnboundedSource.CheckpointMark>> countingSplits(int splits) throws Exception {
    List<UnboundedSource<Long, UnboundedSource.CheckpointMark>> out = new ArrayList<>();
    SerializableFunction<Long, Instant> timestampIsValue = Instant::new;
    for (UnboundedSource<Long, ?> s : CountingSource.unboundedWithTimestampFn(timestampIsValue).split(splits, OPTIONS)) {
      out.add((UnboundedSource<Long, UnboundedSource.CheckpointMark>) s);
    }
    return out;
  }

  @Test
  void groupDealsSplitsRoundRobin_andLeavesFewSplitsAlone() throws Exception {
    List<UnboundedSource<Long, UnboundedSource.CheckpointMark>> splits = countingSplits(5);
    assertThat(splits).hasSize(5);
    List<? extends UnboundedSource<?, ?>> groups = UnboundedSplitGroup.group(splits, 2);
    assertThat(groups).hasSize(2);
    assertThat(List.<Object>copyOf(((UnboundedSplitGroup<?>) groups.get(0)).splits())).containsExactly(splits.get(0), splits.get(2), splits.get(4));
    assertThat(List.<Object>copyOf(((UnboundedSplitGroup<?>) groups.get(1)).splits())).containsExactly(splits.get(1), splits.get(3));
    assertThat(UnboundedSplitGroup.group(splits, 5)).isSameAs(splits);
    assertThatThrownBy(() -> UnboundedSplitGroup.group(splits, 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 1");
  }

  @Test
  void unboundedGroupReadsEverySplitInTurn_andResumesFromItsEncodedMarkWithoutLossOrRepeat() throws Exception {
    UnboundedSplitGroup<Long> group = new UnboundedSplitGroup<>(countingSplits(3));
    List<Long> read = new ArrayList<>();
    UnboundedSource.UnboundedReader<Long> reader = group.createReader(OPTIONS, null);
    assertThat(reader.start()).isTrue();
    read.add(reader.getCurrent());
    for (int i = 0; i < 9; i++) {
      assertThat(reader.advance()).isTrue();
      read.add(reader.getCurrent());
    }
    // three splits of the naturals: 0,1,2 from split 0,1,2, then 3,4,5, ...
    assertThat(read).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
    // each split's watermark is its last element's timestamp (= value): 9, 7 and 8
    assertThat(reader.getWatermark()).isEqualTo(new Instant(7));

    Coder<UnboundedSplitGroup.Mark> coder = group.getCheckpointMarkCoder();
    byte[] encoded = CoderUtils.encodeToByteArray(coder, (UnboundedSplitGroup.Mark) reader.getCheckpointMark());
    reader.close();

    UnboundedSource.UnboundedReader<Long> restored =
        group.createReader(OPTIONS, CoderUtils.decodeFromByteArray(coder, encoded));
    List<Long> after = new ArrayList<>();
    assertThat(restored.start()).isTrue();
    after.add(restored.getCurrent());
    for (int i = 0; i < 5; i++) {
      assertThat(restored.advance()).isTrue();
      after.add(restored.getCurrent());
    }
    assertThat(after).containsExactlyInAnyOrder(10L, 11L, 12L, 13L, 14L, 15L);
    restored.close();
  }

  @Test
  void unboundedGroupMarkOfASplitNeverAskedResumesItFromItsStart() throws Exception {
    UnboundedSplitGroup<Long> group = new UnboundedSplitGroup<>(countingSplits(3));
    UnboundedSource.UnboundedReader<Long> reader = group.createReader(OPTIONS, null);
    assertThat(reader.start()).isTrue();
    assertThat(reader.getCurrent()).isEqualTo(0L);
    assertThat(reader.getWatermark()).as("splits 1 and 2 not started yet").isEqualTo(BoundedWindow.TIMESTAMP_MIN_VALUE);
    UnboundedSplitGroup.Mark mark = (UnboundedSplitGroup.Mark) reader.getCheckpointMark();
    assertThat(mark.marks().get(1)).isNull();
    byte[] encoded = CoderUtils.encodeToByteArray(group.getCheckpointMarkCoder(), mark);

    UnboundedSource.UnboundedReader<Long> restored =
        group.createReader(OPTIONS, CoderUtils.decodeFromByteArray(group.getCheckpointMarkCoder(), encoded));
    List<Long> after = new ArrayList<>();
    assertThat(restored.start()).isTrue();
    after.add(restored.getCurrent());
    for (int i = 0; i < 2; i++) {
      assertThat(restored.advance()).isTrue();
      after.add(restored.getCurrent());
    }
    assertThat(after).containsExactlyInAnyOrder(1L, 2L, 3L);
  }

  @Test
  void unboundedGroupRefusesAMarkOfAnotherSize() throws Exception {
    UnboundedSplitGroup<Long> three = new UnboundedSplitGroup<>(countingSplits(3));
    UnboundedSplitGroup<Long> two = new UnboundedSplitGroup<>(countingSplits(2));
    UnboundedSource.UnboundedReader<Long> reader = two.createReader(OPTIONS, null);
    reader.start();
    byte[] encoded = CoderUtils.encodeToByteArray(two.getCheckpointMarkCoder(), (UnboundedSplitGroup.Mark) reader.getCheckpointMark());
    assertThatThrownBy(() -> CoderUtils.decodeFromByteArray(three.getCheckpointMarkCoder(), encoded))
        .isInstanceOf(IOException.class).hasMessageContaining("2 split(s) cannot resume a group of 3");
  }

  @Test
  @SuppressWarnings("unchecked")
  void boundedGroupReadsItsSplitsOneAfterAnother() throws Exception {
    OffsetBasedSource<Long> all = (OffsetBasedSource<Long>) CountingSource.upTo(7);
    List<BoundedSource<Long>> splits = new ArrayList<>();
    splits.add(all.createSourceForSubrange(0, 3));
    splits.add(all.createSourceForSubrange(3, 3)); // empty
    splits.add(all.createSourceForSubrange(3, 7));
    BoundedSplitGroup<Long> group = new BoundedSplitGroup<>(splits);
    assertThat(group.getEstimatedSizeBytes(OPTIONS)).isEqualTo(7 * 8L);
    List<Long> read = new ArrayList<>();
    try (BoundedSource.BoundedReader<Long> reader = group.createReader(OPTIONS)) {
      for (boolean more = reader.start(); more; more = reader.advance()) {
        read.add(reader.getCurrent());
      }
      assertThat(reader.advance()).isFalse();
    }
    assertThat(read).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);

    List<? extends BoundedSource<?>> groups = BoundedSplitGroup.group(splits, 2);
    assertThat(List.<Object>copyOf(((BoundedSplitGroup<?>) groups.get(0)).splits())).containsExactly(splits.get(0), splits.get(2));
  }

  @Test
  void samzaTranslationReadsManySplitsThroughParallelismGroups_embeddedKeepsOnePartitionPerSplit() {
    for (ExecutionEnvironment env : List.of(ExecutionEnvironment.EMBEDDED, ExecutionEnvironment.SAMZA_LOCAL)) {
      WeirPipelineOptions options = PipelineOptionsFactory.as(WeirPipelineOptions.class);
      options.setRunner(WeirRunner.class);
      options.setParallelism(2);
      options.setExecutionEnvironment(env);
      Pipeline p = Pipeline.create(options);
      p.apply(Read.from(new ManySplits()));
      StagePlan source = WeirRunner.translate(p, options).stages().get(0);
      if (env == ExecutionEnvironment.EMBEDDED) {
        assertThat(source.partitions()).isEqualTo(5);
        assertThat(source.source().describe()).isEqualTo("unbounded read, 5 split(s)");
      } else {
        assertThat(source.partitions()).isEqualTo(2);
        assertThat(source.source().describe()).isEqualTo("unbounded read, 2 split group(s) of 5 split(s)");
      }
    }
  }

  /** An unbounded source that, like Nexmark's generator, makes 5 splits whatever it is asked for. */
  private static final class ManySplits extends UnboundedSource<Long, UnboundedSource.CheckpointMark> {
    @Override
    @SuppressWarnings("unchecked")
    public List<UnboundedSource<Long, UnboundedSource.CheckpointMark>> split(int desired, PipelineOptions options)
        throws Exception {
      return countingSplits(5);
    }

    @Override
    public UnboundedReader<Long> createReader(PipelineOptions options, CheckpointMark mark) {
      throw new UnsupportedOperationException("only split");
    }

    @Override
    @SuppressWarnings("unchecked")
    public Coder<CheckpointMark> getCheckpointMarkCoder() {
      return (Coder<CheckpointMark>) (Coder<?>) CountingSource.unbounded().getCheckpointMarkCoder();
    }

    @Override
    public Coder<Long> getOutputCoder() {
      return CountingSource.unbounded().getOutputCoder();
    }
  }
}
