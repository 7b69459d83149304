package dev.weir.samza;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.BeamVersionCheck;
import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.task.WeirTaskFactory;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.PipelineTranslator;
import dev.weir.runner.translation.SourceSpec;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.BoundedSource;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.Values;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The source split plan (no broker): its envelope round trip and what a damaged or foreign
 * envelope fails with, "first record wins" with two publishers, the check of a plan against this
 * process's translation, the file store, and the task factory reading the plan's splits.
 */
class SourceSplitPlanTest {
  private static final String WHERE = "topic weir-job-1-plan on Kafka at h:1";

  private static WeirSettings settings(String... args) {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs(args).as(WeirPipelineOptions.class);
    options.setRunner(WeirRunner.class);
    return WeirSettings.from(options);
  }

  /** Reads {@link ProcessDependentSource} [0, 1000) cut with {@code seed}, then a shuffle. */
  private static JobPlan plan(long seed, int parallelism) {
    return translated(seed, ProcessDependentSource.SPLITS, parallelism).plan();
  }

  /** A translated pipeline, kept to translate it again. */
  private record Translated(Pipeline pipeline, WeirSettings settings, JobPlan plan) {}

  /**
   * Reads {@link ProcessDependentSource} [0, 1000) cut into {@code splits} with {@code seed}, then
   * a shuffle.
   */
  private static Translated translated(long seed, int splits, int parallelism) {
    return translated(seed, splits, parallelism, false);
  }

  /** As {@link #translated(long, int, int)}, with {@code Values} after the shuffle if {@code thenValues}. */
  private static Translated translated(long seed, int splits, int parallelism, boolean thenValues) {
    String previous = System.getProperty(ProcessDependentSource.SEED_PROPERTY);
    String previousCount = System.getProperty(ProcessDependentSource.COUNT_PROPERTY);
    System.setProperty(ProcessDependentSource.SEED_PROPERTY, Long.toString(seed));
    System.setProperty(ProcessDependentSource.COUNT_PROPERTY, Integer.toString(splits));
    try {
      WeirSettings settings = settings("--executionEnvironment=SAMZA_LOCAL", "--parallelism=" + parallelism,
          "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1");
      Pipeline p = Pipeline.create(settings.pipelineOptions());
      PCollection<KV<Long, Iterable<Long>>> grouped = p.apply("Read", Read.from(new ProcessDependentSource(0, 1000)))
          .apply(WithKeys.<Long, Long>of(v -> v % 3).withKeyType(TypeDescriptors.longs()))
          .apply(GroupByKey.create());
      if (thenValues) {
        grouped.apply("Values", Values.create());
      }
      return new Translated(p, settings, WeirRunner.translate(p, settings));
    } finally {
      restore(ProcessDependentSource.SEED_PROPERTY, previous);
      restore(ProcessDependentSource.COUNT_PROPERTY, previousCount);
    }
  }

  private static void restore(String property, String previous) {
    if (previous == null) {
      System.clearProperty(property);
    } else {
      System.setProperty(property, previous);
    }
  }

  private static List<String> splitNames(SourceSpec spec) {
    List<String> names = new ArrayList<>();
    for (BoundedSource<?> s : ((SourceSpec.Bounded) spec).splits()) {
      names.add(s.toString());
    }
    return names;
  }

  @Test
  void envelope_roundTrip_givesEqualSplitsForTheSameStages() {
    JobPlan plan = plan(0, 4);
    SourceSplitPlan mine = SourceSplitPlan.of(plan, "job", "processor 0");
    SourceSplitPlan read = SourceSplitPlan.decode(mine.encode(), WHERE);
    assertThat(read.writtenBy()).isEqualTo("processor 0");
    assertThat(read.stages()).hasSize(1);
    assertThat(read.stages().get(0).stage()).isZero();
    assertThat(read.stages().get(0).step()).isEqualTo("Read");
    Map<Integer, SourceSpec> sources = read.sourcesFor(plan, "job", WHERE);
    assertThat(sources).containsOnlyKeys(0);
    assertThat(splitNames(sources.get(0))).isEqualTo(splitNames(plan.stages().get(0).source()))
        .hasSize(ProcessDependentSource.SPLITS);
  }

  @Test
  void anotherProcessesTranslation_readsThePlansSplitsNotItsOwn() {
    JobPlan first = plan(0, 4);
    JobPlan other = plan(1, 4);
    assertThat(splitNames(other.stages().get(0).source())).isNotEqualTo(splitNames(first.stages().get(0).source()));
    byte[] published = SourceSplitPlan.of(first, "job", "processor 0").encode();
    Map<Integer, SourceSpec> sources = SourceSplitPlan.decode(published, WHERE).sourcesFor(other, "job", WHERE);
    assertThat(splitNames(sources.get(0))).isEqualTo(splitNames(first.stages().get(0).source()));
  }

  @Test
  void corruptPayload_failsNamingTheStoreAndTheChecksum() {
    byte[] envelope = SourceSplitPlan.of(plan(0, 4), "job", "p0").encode();
    envelope[envelope.length - 5] ^= 0x10;
    assertThatThrownBy(() -> SourceSplitPlan.decode(envelope, WHERE))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("the split plan in " + WHERE + " is corrupt: checksum");
  }

  @Test
  void versionOneEnvelope_withoutALayout_isStillRead() throws Exception {
    JobPlan plan = plan(0, 4);
    SourceSplitPlan mine = SourceSplitPlan.of(plan, "job", "p0");
    byte[] payload = org.apache.beam.sdk.util.SerializableUtils.serializeToByteArray(new ArrayList<>(mine.stages()));
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(payload);
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
      out.writeInt(SourceSplitPlan.MAGIC);
      out.writeInt(SourceSplitPlan.VERSION_WITHOUT_LAYOUT);
      out.writeUTF("job");
      out.writeUTF("p0");
      out.writeLong(1L);
      out.writeInt(payload.length);
      out.writeInt((int) crc.getValue());
      out.write(payload);
    }
    SourceSplitPlan read = SourceSplitPlan.decode(bytes.toByteArray(), WHERE);
    assertThat(splitNames(read.sourcesFor(plan(1, 4), "job", WHERE).get(0)))
        .isEqualTo(splitNames(plan.stages().get(0).source()));
    assertThat(read.sourcesFor(plan(1, 8), "job", WHERE)).as("no layout: another --parallelism is not seen").hasSize(1);
  }

  @Test
  void otherVersion_failsNamingBothVersions() {
    byte[] envelope = SourceSplitPlan.of(plan(0, 4), "job", "p0").encode();
    ByteBuffer.wrap(envelope).putInt(4, 4);
    assertThatThrownBy(() -> SourceSplitPlan.decode(envelope, "file /x/plan"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("the split plan in file /x/plan has version 4; this Weir (" + BeamVersionCheck.weirBuild()
            + ") reads versions 1 to 3 only");
  }

  @Test
  void planOfAnotherWeirBuild_failsTheStartNamingBothBuilds() {
    JobPlan plan = plan(0, 4);
    String older = "dev.weir:weir-runner:0.0.9 for Beam 2.69.0";
    SourceSplitPlan published = SourceSplitPlan.decode(
        SourceSplitPlan.of(plan, "job", "processor 0").withWeirBuild(older).encode(), WHERE);
    assertThatThrownBy(() -> published.adopt(plan, "job", WHERE))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("job job: the split plan in " + WHERE)
        .hasMessageContaining("it was made by Weir " + older + ", this process runs Weir " + BeamVersionCheck.weirBuild())
        .hasMessageContaining("start a new job.id");
    assertThatThrownBy(() -> published.sourcesFor(plan, "job", WHERE)).hasMessageContaining("made by Weir " + older);
    assertThat(SourceSplitPlan.decode(SourceSplitPlan.of(plan, "job", "p0").encode(), WHERE).sourcesFor(plan, "job",
        WHERE)).as("the same build and shape").hasSize(1);
  }

  @Test
  void restartWithAnotherPipelineOfTheSameLayout_failsNamingTheFirstLineThatDiffers() {
    SourceSplitPlan published = SourceSplitPlan.decode(
        SourceSplitPlan.of(plan(0, 4), "job", "processor 0").encode(), WHERE);
    JobPlan withValues = translated(0, ProcessDependentSource.SPLITS, 4, true).plan();
    assertThat(withValues.stages()).hasSameSizeAs(plan(0, 4).stages());
    assertThatThrownBy(() -> published.sourcesFor(withValues, "job", WHERE))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("job job: the split plan in " + WHERE)
        .hasMessageContaining("the jobs differ at line 6 of their shapes: the plan's job has 'stage-1 node 0: "
            + "GroupByKey/OnePane 'GroupByKey' -> [[]]' and this process's translation 'stage-1 node 0: GroupByKey/OnePane "
            + "'GroupByKey' -> [[1]]'")
        .hasMessageContaining("start a new job.id");
  }

  @Test
  void notAPlan_andTruncated_failNamingTheStore() {
    assertThatThrownBy(() -> SourceSplitPlan.decode("hello world, not a plan".getBytes(), WHERE))
        .hasMessageContaining("the split plan in " + WHERE + " is not a Weir split plan");
    byte[] envelope = SourceSplitPlan.of(plan(0, 4), "job", "p0").encode();
    byte[] cut = java.util.Arrays.copyOf(envelope, envelope.length - 10);
    assertThatThrownBy(() -> SourceSplitPlan.decode(cut, WHERE))
        .hasMessageContaining("the split plan in " + WHERE + " is corrupt: its payload has");
  }

  @Test
  void stageMismatch_failsNamingTheJobTheStageAndBothCounts() {
    byte[] published = SourceSplitPlan.of(plan(0, 4), "job", "processor 0").encode();
    // the test source always cuts 4 splits: a plan published by a process whose translation cut 3
    JobPlan four = plan(0, 4);
    SourceSplitPlan three = SourceSplitPlan.decode(threeSplits(four), WHERE);
    assertThatThrownBy(() -> three.sourcesFor(four, "job", WHERE))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("job job: the split plan in " + WHERE)
        .hasMessageContaining("stage-0 ('Read') has 3 split(s) in the plan and 4 in this process's translation");
    assertThatThrownBy(() -> SourceSplitPlan.decode(published, WHERE).sourcesFor(four, "other", WHERE))
        .hasMessageContaining("job other: the split plan in " + WHERE)
        .hasMessageContaining("it was made for job job");
  }

  @Test
  void otherSplitCount_isAdopted_andTheTranslationAgainHasThePlansLayout() {
    // the first process's source split into 3; this one's (later: more files) into 4
    byte[] published = SourceSplitPlan.of(translated(0, 3, 4).plan(), "job", "processor 0").encode();
    Translated here = translated(1, 4, 4);
    SourceSplitPlan shared = SourceSplitPlan.decode(published, WHERE);

    SourceSplitPlan.Adoption adoption = shared.adopt(here.plan(), "job", WHERE);
    assertThat(adoption.changesCounts()).isTrue();
    assertThat(adoption.adopted()).containsExactly(
        "source stage stage-0 ('Read'): the plan has 3 splits, this process's source split into 4; using the plan's");
    assertThat(adoption.byStep()).containsOnlyKeys("Read");
    assertThatThrownBy(() -> shared.sourcesFor(here.plan(), "job", WHERE))
        .as("without a second translation the counts still differ")
        .hasMessageContaining("stage-0 ('Read') has 3 split(s) in the plan and 4 in this process's translation");

    JobPlan again = PipelineTranslator.translate(here.pipeline(), here.settings(), adoption.planned());
    assertThat(again.stages().get(0).partitions()).isEqualTo(3);
    assertThat(again.streams()).allSatisfy(s -> {
      if (s.producer().id() == 0) {
        assertThat(s.producers()).as("producers of " + s.name()).isEqualTo(3);
      }
    });
    assertThat(again.stages().get(1).partitions()).as("the shuffle's stage keeps --parallelism").isEqualTo(4);
    assertThat(again.taskCount()).isEqualTo(here.plan().taskCount() - 1);
    assertThat(shared.adopt(again, "job", WHERE).changesCounts()).isFalse();
    assertThat(splitNames(shared.sourcesFor(again, "job", WHERE).get(0)))
        .isEqualTo(splitNames(new SourceSpec.Bounded(castSplits(SourceSplitPlan.decode(published, WHERE)))));
    WeirTaskFactory tasks = new WeirTaskFactory(again, shared.sourcesFor(again, "job", WHERE), Map.of(),
        here.settings(), new StepMetrics(), JobClock.SYSTEM, null);
    assertThat(tasks.createSourcePartition(again.stages().get(0), 2)).isNotNull();

    // another --parallelism: the source stage is adopted, but the shuffle's stage has 2 partitions, not 4
    Translated two = translated(1, 4, 2);
    SourceSplitPlan.Adoption other = shared.adopt(two.plan(), "job", WHERE);
    JobPlan twoAgain = PipelineTranslator.translate(two.pipeline(), two.settings(), other.planned());
    assertThatThrownBy(() -> shared.sourcesFor(twoAgain, "job", WHERE))
        .hasMessageContaining("stage-1 has 4 partition(s) in the plan's job and 2 in this process's translation")
        .hasMessageContaining("--parallelism");

    // the same count: nothing to adopt
    assertThat(SourceSplitPlan.decode(published, WHERE).adopt(translated(2, 3, 4).plan(), "job", WHERE)
        .changesCounts()).isFalse();
  }

  @Test
  void adopt_stillRejects_anUnboundedPlanForABoundedRead_anExtraStage_andAnotherJob() {
    JobPlan plan = plan(0, 4);
    SourceSplitPlan full = SourceSplitPlan.of(plan, "job", "processor 9");
    SourceSplitPlan.StageSplits s = full.stages().get(0);
    SourceSplitPlan unbounded = SourceSplitPlan.decode(full.withStages(List.of(
        new SourceSplitPlan.StageSplits(s.stage(), s.step(), true, s.splits()))).encode(), WHERE);
    assertThatThrownBy(() -> unbounded.adopt(plan, "job", WHERE))
        .hasMessageContaining("stage-0 is an unbounded read 'Read' in the plan and a bounded read 'Read' here");
    SourceSplitPlan extra = SourceSplitPlan.decode(full.withStages(List.of(s,
        new SourceSplitPlan.StageSplits(7, "Other", false, s.splits()))).encode(), WHERE);
    assertThatThrownBy(() -> extra.adopt(plan, "job", WHERE))
        .hasMessageContaining("stage-7 ('Other') has 4 split(s) in the plan and reads no source in this process's "
            + "translation");
    SourceSplitPlan none = SourceSplitPlan.decode(full.withStages(List.of()).encode(), WHERE);
    assertThatThrownBy(() -> none.adopt(plan, "job", WHERE))
        .hasMessageContaining("stage-0 ('Read') reads a source here but has no splits in the plan");
    assertThatThrownBy(() -> full.adopt(plan, "other", WHERE)).hasMessageContaining("it was made for job job");
  }

  @Test
  void translation_rejectsGivenSplitsOfTheOtherKind_namingTheStep() {
    Translated t = translated(0, 4, 4);
    SourceSpec unbounded = new SourceSpec.Unbounded(List.of());
    assertThatThrownBy(() -> PipelineTranslator.translate(t.pipeline(), t.settings(), step -> unbounded))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("the splits given for Read (unbounded read, 0 split(s)) do not fit it: it is a bounded read");
  }

  @SuppressWarnings("unchecked")
  private static List<BoundedSource<?>> castSplits(SourceSplitPlan plan) {
    List<BoundedSource<?>> splits = new ArrayList<>();
    plan.stages().get(0).splits().forEach(x -> splits.add((BoundedSource<?>) x));
    return splits;
  }

  /** The plan of {@code plan} with its stage 0 cut to 3 splits, encoded. */
  private static byte[] threeSplits(JobPlan plan) {
    SourceSplitPlan full = SourceSplitPlan.of(plan, "job", "processor 9");
    SourceSplitPlan.StageSplits s = full.stages().get(0);
    SourceSplitPlan.StageSplits cut = new SourceSplitPlan.StageSplits(s.stage(), s.step(), s.unbounded(),
        new ArrayList<>(s.splits().subList(0, 3)));
    return full.withStages(List.of(cut)).encode();
  }

  /** A log in memory whose reads can be held back, to interleave two publishers. */
  private static class MemoryStore implements SplitPlanStore {
    final List<byte[]> records = new ArrayList<>();
    int emptyReadsLeft;

    @Override
    public byte[] first() {
      if (emptyReadsLeft > 0) {
        emptyReadsLeft--;
        return null; // as if the other publisher's record were not there yet
      }
      return records.isEmpty() ? null : records.get(0);
    }

    @Override
    public void append(byte[] envelope) {
      records.add(envelope);
    }

    @Override
    public String describe() {
      return "memory";
    }
  }

  @Test
  void twoPublishers_bothFindingTheStoreEmpty_bothUseTheFirstRecord() {
    JobPlan plan0 = plan(0, 4);
    JobPlan plan1 = plan(1, 4);
    MemoryStore store = new MemoryStore();
    // publisher 1 finds the store empty, then publisher 0 too, then 0 appends, then 1 appends
    store.emptyReadsLeft = 1;
    SourceSplitPlan p0 = SourceSplitPlan.resolve(store, SourceSplitPlan.of(plan0, "job", "processor 0"));
    SourceSplitPlan p1 = SourceSplitPlan.resolve(new SplitPlanStore() {
      boolean appended;

      @Override
      public byte[] first() {
        return appended ? store.first() : null; // it read before processor 0 appended
      }

      @Override
      public void append(byte[] envelope) {
        store.append(envelope);
        appended = true;
      }

      @Override
      public String describe() {
        return store.describe();
      }
    }, SourceSplitPlan.of(plan1, "job", "processor 1"));
    assertThat(store.records).hasSize(2);
    assertThat(p0.writtenBy()).isEqualTo("processor 0");
    assertThat(p1.writtenBy()).isEqualTo("processor 0");
    assertThat(splitNames(p1.sourcesFor(plan1, "job", "memory").get(0)))
        .isEqualTo(splitNames(p0.sourcesFor(plan0, "job", "memory").get(0)))
        .isEqualTo(splitNames(plan0.stages().get(0).source()));
    // a restarted process (or a late one) reads the same plan and publishes nothing
    SourceSplitPlan again = SourceSplitPlan.resolve(store, SourceSplitPlan.of(plan1, "job", "processor 1"));
    assertThat(again.writtenBy()).isEqualTo("processor 0");
    assertThat(store.records).hasSize(2);
  }

  @Test
  void emptyStoreOfAJobWithCheckpoints_failsInsteadOfPlanningAnew() {
    MemoryStore store = new MemoryStore() {
      @Override
      public String progressWithoutPlan() {
        return "its checkpoint topic c holds checkpoints";
      }
    };
    assertThatThrownBy(() -> SourceSplitPlan.resolve(store, SourceSplitPlan.of(plan(0, 4), "job", "p0")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("job job: memory holds no split plan, but its checkpoint topic c holds checkpoints")
        .hasMessageContaining("new job.id");
    assertThat(store.records).isEmpty();
  }

  @Test
  void fileStore_firstWriterWins_andTheFileIsNeverReplaced(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("plans").resolve("job.plan");
    FileSplitPlanStore a = new FileSplitPlanStore(file);
    FileSplitPlanStore b = new FileSplitPlanStore(file);
    assertThat(a.first()).isNull();
    byte[] first = SourceSplitPlan.of(plan(0, 4), "job", "processor 0").encode();
    byte[] second = SourceSplitPlan.of(plan(1, 4), "job", "processor 1").encode();
    a.append(first);
    b.append(second);
    assertThat(b.first()).isEqualTo(first);
    assertThat(SourceSplitPlan.resolve(b, SourceSplitPlan.decode(second, "x")).writtenBy()).isEqualTo("processor 0");
    try (var files = Files.list(file.getParent())) {
      assertThat(files).containsExactly(file); // no temporary file left
    }
  }

  @Test
  void taskFactory_opensThePlansSplit_andRejectsAnotherPartitionCount() {
    JobPlan plan = plan(1, 4);
    WeirSettings settings = settings("--parallelism=4");
    SourceSpec planned = SourceSplitPlan.decode(SourceSplitPlan.of(plan(0, 4), "job", "p0").encode(), WHERE)
        .sourcesFor(plan, "job", WHERE).get(0);
    WeirTaskFactory tasks = new WeirTaskFactory(plan, Map.of(0, planned), Map.of(), settings, new StepMetrics(),
        JobClock.SYSTEM, null);
    assertThat(tasks.createSourcePartition(plan.stages().get(0), 2)).isNotNull();
    SourceSpec one = new SourceSpec.Bounded(List.of(new ProcessDependentSource(0, 10)));
    assertThatThrownBy(() -> new WeirTaskFactory(plan, Map.of(0, one), Map.of(), settings, new StepMetrics(),
        JobClock.SYSTEM, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("stage-0 has 4 partition(s), the given source 1");
  }
}
