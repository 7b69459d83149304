package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.range.OffsetRange;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.splittabledofn.OffsetRangeTracker;
import org.apache.beam.sdk.transforms.splittabledofn.RestrictionTracker;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Splittable DoFns taking a {@code BundleFinalizer} on WeirRunner, bounded and unbounded per
 * element: checkpoints, commits and finalization callbacks interleave, so a DoFn that keeps
 * checkpointing until the callback it registered has run sees that callback run before its next
 * resume, and each callback runs once.
 */
class SplittableBundleFinalizationPipelineTest {

  /** Per test run and element: how many of its callbacks have run (the DoFn may be serialized). */
  private static final Map<String, AtomicInteger> CALLBACKS_RUN = new ConcurrentHashMap<>();

  /**
   * For each element: claims one position per call, registering a callback at the first one, and
   * checkpoints until the callback has run; then emits {@code element@position} (the position of
   * the call that saw the callback had run) and stops. Emits {@code element@gave-up} if it claimed
   * its whole range (1000 calls) without the callback ever running.
   */
  abstract static class WaitForFinalizationFn extends DoFn<String, String> {
    private final String run;

    WaitForFinalizationFn(String run) {
      this.run = run;
    }

    @GetInitialRestriction
    public OffsetRange initial() {
      return new OffsetRange(0, 1000);
    }

    @NewTracker
    public OffsetRangeTracker tracker(@Restriction OffsetRange range) {
      return new OffsetRangeTracker(range);
    }

    @ProcessElement
    public ProcessContinuation process(@Element String element, RestrictionTracker<OffsetRange, Long> tracker,
        BundleFinalizer finalizer, OutputReceiver<String> out) {
      long position = tracker.currentRestriction().getFrom();
      AtomicInteger ran = CALLBACKS_RUN.computeIfAbsent(run + "/" + element, k -> new AtomicInteger());
      if (!tracker.tryClaim(position)) {
        out.output(element + "@gave-up");
        return ProcessContinuation.stop();
      }
      if (ran.get() > 0) {
        out.output(element + "@" + position);
        tracker.tryClaim(Long.MAX_VALUE); // done: the rest of the range is not needed
        return ProcessContinuation.stop();
      }
      if (position == 0) {
        finalizer.afterBundleCommit(Instant.now().plus(Duration.standardMinutes(5)), ran::incrementAndGet);
      }
      return ProcessContinuation.resume();
    }
  }

  @DoFn.BoundedPerElement
  static final class BoundedWaitForFinalizationFn extends WaitForFinalizationFn {
    BoundedWaitForFinalizationFn(String run) {
      super(run);
    }
  }

  @DoFn.UnboundedPerElement
  static final class UnboundedWaitForFinalizationFn extends WaitForFinalizationFn {
    UnboundedWaitForFinalizationFn(String run) {
      super(run);
    }
  }

  @ParameterizedTest(name = "streaming={0}, bounded={1}")
  @CsvSource({"false,true", "true,true", "false,false", "true,false"})
  void callbackRegisteredAtTheFirstCallRunsBeforeTheSecondAndOnlyOnce(boolean streaming, boolean bounded) {
    String run = UUID.randomUUID().toString();
    Pipeline p = Pipelines.create(streaming);
    WaitForFinalizationFn fn = bounded ? new BoundedWaitForFinalizationFn(run) : new UnboundedWaitForFinalizationFn(run);
    PCollection<String> out = p.apply(Create.of("a", "b", "c", "d", "e")).apply(ParDo.of(fn));
    PAssert.that(out).containsInAnyOrder("a@1", "b@1", "c@1", "d@1", "e@1");
    p.run().waitUntilFinish();

    for (String element : new String[] {"a", "b", "c", "d", "e"}) {
      assertThat(CALLBACKS_RUN.get(run + "/" + element).get())
          .as("callbacks run for %s", element).isEqualTo(1);
    }
  }
}
