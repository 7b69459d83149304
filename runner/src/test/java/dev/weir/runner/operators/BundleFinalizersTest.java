package dev.weir.runner.operators;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/** When bundle finalization callbacks run, and which are dropped. */
class BundleFinalizersTest {
  private long nowMs = 1_000;
  private final BundleFinalizers finalizers = new BundleFinalizers(() -> nowMs);
  private final List<String> ran = new ArrayList<>();

  @Test
  void callbacksRunAtTheCommitAfterTheirBundleFinishedNotBefore() {
    BundleFinalizers.Finalizer op = finalizers.finalizer("Step", StepRunner.CURRENT);
    op.afterBundleCommit(new Instant(5_000), () -> ran.add("a"));
    assertThat(finalizers.runCommitted()).isZero(); // a commit while the bundle is still open
    assertThat(ran).isEmpty();

    op.bundleFinished();
    op.afterBundleCommit(new Instant(5_000), () -> ran.add("next bundle"));
    assertThat(finalizers.runCommitted()).isEqualTo(1);
    assertThat(ran).containsExactly("a");
    assertThat(finalizers.runCommitted()).isZero(); // each callback runs once
    assertThat(op.pending()).isEqualTo(1);
  }

  @Test
  void expiredCallbacksAreDropped() {
    BundleFinalizers.Finalizer op = finalizers.finalizer("Step", StepRunner.CURRENT);
    op.afterBundleCommit(new Instant(1_500), () -> ran.add("expired"));
    op.afterBundleCommit(new Instant(3_000), () -> ran.add("valid"));
    op.bundleFinished();
    nowMs = 2_000;
    finalizers.runCommitted();
    assertThat(ran).containsExactly("valid");
    assertThat(finalizers.waiting()).isZero();
  }

  @Test
  void aFailingCallbackDoesNotStopTheOthers() {
    BundleFinalizers.Finalizer first = finalizers.finalizer("First", StepRunner.CURRENT);
    BundleFinalizers.Finalizer second = finalizers.finalizer("Second", StepRunner.CURRENT);
    first.afterBundleCommit(new Instant(5_000), () -> {
      throw new IllegalStateException("ack failed");
    });
    second.afterBundleCommit(new Instant(5_000), () -> ran.add("second"));
    first.bundleFinished();
    second.bundleFinished();
    assertThat(finalizers.runCommitted()).isEqualTo(1);
    assertThat(ran).containsExactly("second");
  }

  @Test
  void anOperatorHasUncommittedCallbacksFromRegistrationUntilTheCommitRanThem() {
    BundleFinalizers.Finalizer op = finalizers.finalizer("Step", StepRunner.CURRENT);
    BundleFinalizers.Finalizer other = finalizers.finalizer("Other", StepRunner.CURRENT);
    assertThat(op.hasUncommitted()).isFalse();
    op.afterBundleCommit(new Instant(5_000), () -> ran.add("a"));
    assertThat(op.hasUncommitted()).as("open bundle").isTrue();
    op.bundleFinished();
    assertThat(op.hasUncommitted()).as("finished, not committed").isTrue();
    assertThat(other.hasUncommitted()).isFalse();

    finalizers.runCommitted();
    assertThat(ran).containsExactly("a");
    assertThat(op.hasUncommitted()).isFalse();
  }
}
