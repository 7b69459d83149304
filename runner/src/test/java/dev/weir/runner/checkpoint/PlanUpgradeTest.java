package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import java.nio.file.Path;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.BigEndianLongCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Filter;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.junit.jupiter.api.Test;

/**
 * {@link PlanFingerprint#shape()} reads a translated plan back from its lines, and
 * {@link PlanUpgrade} matches a checkpoint's plan to a changed pipeline's by PTransform name:
 * what restores, what is refused (naming the transform), and what {@code --allowNonRestoredState}
 * drops.
 */
class PlanUpgradeTest {
  private static final Path CHECKPOINT = Path.of("/state/job/checkpoints/chk-000000000007");

  /** Which version of the pipeline {@link #plan} builds. */
  private record Version(boolean filterAdded, boolean sumRemoved, boolean longCoderInState,
      boolean groupedAsStrings, boolean otherSource) {
    static final Version ONE = new Version(false, false, false, false, false);
  }

  @Test
  void theShapeReadBackFromTheLines_hasEveryStageNodeInputAndStateSchema() {
    JobPlan plan = plan(Version.ONE);
    PlanFingerprint.Shape shape = fingerprint(plan).shape();

    assertThat(shape.stages()).hasSameSizeAs(plan.stages());
    for (int s = 0; s < plan.stages().size(); s++) {
      StagePlan stage = plan.stages().get(s);
      PlanFingerprint.Shape.Stage read = shape.stages().get(s);
      assertThat(read.name()).isEqualTo(stage.name());
      assertThat(read.partitions()).isEqualTo(stage.partitions());
      assertThat(read.source()).isEqualTo(stage.source() != null);
      assertThat(read.inputs()).isEqualTo(stage.inputs().stream().map(i -> i.stream().name()).toList());
      assertThat(read.nodes()).isEqualTo(stage.nodes().stream().map(n -> n.isWriter() ? null : n.stepName()).toList());
    }
    assertThat(shape.schemas()).containsEntry("Count \"it\"/ParMultiDo(Count)",
        "key StringUtf8Coder, windows GlobalWindow$Coder, count=value(VarLongCoder)");
    assertThat(shape.schemas()).containsEntry("Group",
        "key StringUtf8Coder, windows GlobalWindow$Coder, values VarLongCoder");
    assertThat(shape.schemas()).hasSize(3); // and Sum's combining GroupByKey
  }

  @Test
  void theSamePlan_restoresEverythingAndEachStageContinuesItself() {
    JobPlan plan = plan(Version.ONE);
    PlanUpgrade upgrade = new PlanUpgrade(fingerprint(plan).shape(), plan, false);

    assertThat(fingerprint(plan(Version.ONE)).firstDifference(fingerprint(plan)))
        .as("translated again (new coder instances, other identity hashes), the plan is the same").isNull();
    upgrade.check(CHECKPOINT);
    assertThat(upgrade.summary()).isEmpty();
    for (StagePlan stage : plan.stages()) {
      assertThat(upgrade.continues(stage.id()).name()).isEqualTo(stage.name());
    }
  }

  @Test
  void aStatelessStepAdded_restores_andKeyedStagesContinueTheirsWhateverTheirNumber() {
    JobPlan before = plan(Version.ONE);
    JobPlan after = plan(new Version(true, false, false, false, false));
    PlanUpgrade upgrade = new PlanUpgrade(fingerprint(before).shape(), after, false);

    upgrade.check(CHECKPOINT);
    assertThat(upgrade.summary()).startsWith("PTransforms added: Valid/");
    for (StagePlan stage : after.stages()) {
      assertThat(upgrade.continues(stage.id())).as(stage.name()).isNotNull();
    }
    assertThat(upgrade.nodeOf("Count \"it\"/ParMultiDo(Count)")).isNotNull();
  }

  @Test
  void aStatefulTransformRemoved_isRefusedNamingIt_unlessItsStateIsDropped() {
    JobPlan before = plan(Version.ONE);
    JobPlan after = plan(new Version(false, true, false, false, false));

    assertThatThrownBy(() -> new PlanUpgrade(fingerprint(before).shape(), after, false).check(CHECKPOINT))
        .hasMessageContaining(CHECKPOINT.toString())
        .hasMessageContaining("keyed state of PTransform 'Sum' (key StringUtf8Coder, windows GlobalWindow$Coder, "
            + "accumulators DelegateCoder{coder=VarLongCoder, toFn=org.apache.beam.sdk.transforms.Combine"
            + "$BinaryCombineLongFn$ToLongCodingFunction, ")
        .hasMessageContaining("which the job does not have")
        .hasMessageContaining("--allowNonRestoredState=true");

    PlanUpgrade dropping = new PlanUpgrade(fingerprint(before).shape(), after, true);
    dropping.check(CHECKPOINT);
    assertThat(dropping.dropped()).hasSize(1);
    assertThat(dropping.dropped()).containsOnlyKeys("Sum");
    assertThat(dropping.drops("Group")).isFalse();
  }

  @Test
  void aStateCoderChanged_isRefusedNamingTheTransformAndBothSchemas() {
    JobPlan before = plan(Version.ONE);

    assertThatThrownBy(() -> new PlanUpgrade(fingerprint(before).shape(),
        plan(new Version(false, false, true, false, false)), false).check(CHECKPOINT))
        .hasMessageContaining("PTransform 'Count \"it\"/ParMultiDo(Count)' holds keyed state of another shape")
        .hasMessageContaining("count=value(VarLongCoder)' there")
        .hasMessageContaining("count=value(BigEndianLongCoder)' in the job");
    assertThatThrownBy(() -> new PlanUpgrade(fingerprint(before).shape(),
        plan(new Version(false, false, false, true, false)), false).check(CHECKPOINT))
        .hasMessageContaining("PTransform 'Group' holds keyed state of another shape")
        .hasMessageContaining("values StringUtf8Coder' in the job");
  }

  @Test
  void aSourceRemoved_isRefusedNamingIt() {
    JobPlan before = plan(Version.ONE);

    assertThatThrownBy(() -> new PlanUpgrade(fingerprint(before).shape(),
        plan(new Version(false, false, false, false, true)), false).check(CHECKPOINT))
        .hasMessageContaining("the positions of source 'Events/Read(BoundedCountingSource)'");
  }

  private static PlanFingerprint fingerprint(JobPlan plan) {
    return PlanFingerprint.of(plan, new dev.weir.runner.state.KeyGroups(128));
  }

  /** A source, a stateful DoFn, a GroupByKey and a Sum; changed as {@code version} says. */
  private static JobPlan plan(Version version) {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--streaming=true", "--parallelism=2",
        "--containers=2", "--stateBackend=MEMORY").as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    PCollection<Long> events = p.apply(version.otherSource() ? "Other events" : "Events",
        GenerateSequence.from(0).to(100));
    if (version.filterAdded()) {
      events = events.apply("Valid", Filter.by((Long n) -> n >= 0));
    }
    PCollection<KV<String, Long>> keyed = events.apply("Key",
        WithKeys.of((Long n) -> Long.toString(n % 7)).withKeyType(TypeDescriptors.strings()));
    keyed.apply("Count \"it\"", ParDo.of(version.longCoderInState() ? new BigEndianCountFn() : new CountFn()));
    if (version.groupedAsStrings()) {
      keyed.apply("As strings", org.apache.beam.sdk.transforms.MapElements
              .into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.strings()))
              .via((KV<String, Long> kv) -> KV.of(kv.getKey(), Long.toString(kv.getValue()))))
          .setCoder(KvCoder.of(StringUtf8Coder.of(), StringUtf8Coder.of()))
          .apply("Group", GroupByKey.create());
    } else {
      keyed.apply("Group", GroupByKey.create());
    }
    if (!version.sumRemoved()) {
      keyed.apply("Sum", Sum.longsPerKey());
    }
    return WeirRunner.translate(p, WeirSettings.from(options));
  }

  static final class CountFn extends DoFn<KV<String, Long>, Void> {
    @StateId("count")
    private final StateSpec<ValueState<Long>> count = StateSpecs.value(VarLongCoder.of());

    @ProcessElement
    public void process(@StateId("count") ValueState<Long> count) {}
  }

  static final class BigEndianCountFn extends DoFn<KV<String, Long>, Void> {
    @StateId("count")
    private final StateSpec<ValueState<Long>> count = StateSpecs.value(BigEndianLongCoder.of());

    @ProcessElement
    public void process(@StateId("count") ValueState<Long> count) {}
  }
}
