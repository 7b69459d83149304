package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.range.OffsetRange;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.transforms.splittabledofn.OffsetRangeTracker;
import org.apache.beam.sdk.transforms.splittabledofn.RestrictionTracker;
import org.apache.beam.sdk.values.PCollectionView;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/** Where splittable DoFns land in the job plan, and which ones are rejected. */
class UnboundedSplittableDoFnPlanTest {

  /** Emits {@code 0..n-1} for element {@code n}; per-element boundedness set by the subclass. */
  abstract static class RangeFn extends DoFn<Long, Long> {
    @GetInitialRestriction
    public OffsetRange initial(@Element Long n) {
      return new OffsetRange(0, n);
    }

    @NewTracker
    public OffsetRangeTracker tracker(@Restriction OffsetRange range) {
      return new OffsetRangeTracker(range);
    }
  }

  @DoFn.UnboundedPerElement
  static final class UnboundedRangeFn extends RangeFn {
    private final PCollectionView<Long> offset;

    UnboundedRangeFn(PCollectionView<Long> offset) {
      this.offset = offset;
    }

    @ProcessElement
    public ProcessContinuation process(ProcessContext c, RestrictionTracker<OffsetRange, Long> tracker) {
      for (long i = tracker.currentRestriction().getFrom(); tracker.tryClaim(i); i++) {
        c.output(i + c.sideInput(offset));
      }
      return ProcessContinuation.stop();
    }
  }

  @DoFn.BoundedPerElement
  static final class BoundedRangeFn extends RangeFn {
    @ProcessElement
    public void process(RestrictionTracker<OffsetRange, Long> tracker, OutputReceiver<Long> out) {
      for (long i = tracker.currentRestriction().getFrom(); tracker.tryClaim(i); i++) {
        out.output(i);
      }
    }
  }

  @DoFn.UnboundedPerElement
  static final class FinalizingRangeFn extends RangeFn {
    @ProcessElement
    public ProcessContinuation process(RestrictionTracker<OffsetRange, Long> tracker, BundleFinalizer finalizer,
        OutputReceiver<Long> out) {
      finalizer.afterBundleCommit(Instant.now().plus(60_000), () -> {});
      for (long i = tracker.currentRestriction().getFrom(); tracker.tryClaim(i); i++) {
        out.output(i);
      }
      return ProcessContinuation.stop();
    }
  }

  @DoFn.BoundedPerElement
  static final class BoundedFinalizingRangeFn extends RangeFn {
    @ProcessElement
    public void process(RestrictionTracker<OffsetRange, Long> tracker, BundleFinalizer finalizer,
        OutputReceiver<Long> out) {
      finalizer.afterBundleCommit(Instant.now().plus(60_000), () -> {});
      for (long i = tracker.currentRestriction().getFrom(); tracker.tryClaim(i); i++) {
        out.output(i);
      }
    }
  }

  @DoFn.BoundedPerElement
  static final class FinalizingAtFinishBundleFn extends RangeFn {
    @ProcessElement
    public void process(RestrictionTracker<OffsetRange, Long> tracker, OutputReceiver<Long> out) {
      for (long i = tracker.currentRestriction().getFrom(); tracker.tryClaim(i); i++) {
        out.output(i);
      }
    }

    @FinishBundle
    public void finish(BundleFinalizer finalizer) {
      finalizer.afterBundleCommit(Instant.now().plus(60_000), () -> {});
    }
  }

  @Test
  void unboundedSdfRunsOnAKeyedStageFedByAShuffleAndABroadcastPerSideInput() {
    Pipeline p = Pipelines.create(true);
    PCollectionView<Long> offset = p.apply("Offset", Create.of(100L)).apply(View.asSingleton());
    p.apply("Sizes", Create.of(3L, 4L))
        .apply("Range", ParDo.of(new UnboundedRangeFn(offset)).withSideInputs(offset));
    JobPlan plan = WeirRunner.translate(p, Pipelines.options(true));

    StagePlan sdf = plan.stages().stream().filter(s -> kinds(s).contains("SplittableProcess")).findFirst().orElseThrow();
    assertThat(kinds(sdf).get(0)).isEqualTo("SplittableProcess");
    assertThat(sdf.partitions()).isEqualTo(2);
    assertThat(sdf.inputs()).extracting(i -> i.stream().kind())
        .containsExactlyInAnyOrder(StreamPlan.Kind.SHUFFLE, StreamPlan.Kind.BROADCAST);
    assertThat(sdf.inputs()).allSatisfy(i -> assertThat(i.entryNode()).isZero());
  }

  @Test
  void boundedSdfStaysFusedInItsProducersStage() {
    Pipeline p = Pipelines.create(false);
    p.apply(Create.of(3L, 4L)).apply(ParDo.of(new BoundedRangeFn()));
    JobPlan plan = WeirRunner.translate(p, Pipelines.options(false));

    assertThat(plan.stages()).allSatisfy(s -> assertThat(kinds(s)).doesNotContain("SplittableProcess"));
  }

  @Test
  void unboundedSdfTakingABundleFinalizerRunsOnAKeyedStage() {
    Pipeline p = Pipelines.create(true);
    p.apply(Create.of(3L)).apply("Finalizing", ParDo.of(new FinalizingRangeFn()));
    JobPlan plan = WeirRunner.translate(p, Pipelines.options(true));

    assertThat(plan.stages()).anySatisfy(s -> assertThat(kinds(s)).first().isEqualTo("SplittableProcess"));
  }

  @Test
  void boundedSdfTakingABundleFinalizerRunsOnAKeyedStageInsteadOfTheNaiveExpansion() {
    Pipeline p = Pipelines.create(false);
    p.apply(Create.of(3L)).apply("Finalizing", ParDo.of(new BoundedFinalizingRangeFn()));
    JobPlan plan = WeirRunner.translate(p, Pipelines.options(false));

    StagePlan sdf = plan.stages().stream().filter(s -> kinds(s).contains("SplittableProcess")).findFirst().orElseThrow();
    assertThat(kinds(sdf).get(0)).isEqualTo("SplittableProcess");
    assertThat(sdf.inputs()).extracting(i -> i.stream().kind()).containsExactly(StreamPlan.Kind.SHUFFLE);
  }

  @Test
  void sdfTakingABundleFinalizerInFinishBundleIsRejectedNamingTheTransform() {
    Pipeline p = Pipelines.create(false);
    p.apply(Create.of(3L)).apply("FinalizingAtFinish", ParDo.of(new FinalizingAtFinishBundleFn()));

    assertThatThrownBy(() -> WeirRunner.translate(p, Pipelines.options(false)))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("FinalizingAtFinish")
        .hasMessageContaining("beam:runners_core:transforms:splittable_process:v1")
        .hasMessageContaining("BundleFinalizer in finish");
  }

  private static List<String> kinds(StagePlan stage) {
    return stage.nodes().stream().map(NodeSpec::kind).toList();
  }
}
