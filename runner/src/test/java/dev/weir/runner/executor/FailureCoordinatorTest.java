package dev.weir.runner.executor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** How a job's containers end together, through the coordinator's seams: stoppables and the job's end hook. */
class FailureCoordinatorTest {
  private final CompletableFuture<Void> completion = new CompletableFuture<>();
  private final List<Boolean> ends = new ArrayList<>();
  private final List<Boolean> completedBeforeEnd = new ArrayList<>();
  private final FailureCoordinator coordinator = new FailureCoordinator("job", completion, normal -> {
    ends.add(normal);
    completedBeforeEnd.add(completion.isDone() && !completion.isCompletedExceptionally());
  });
  private final AtomicInteger stops = new AtomicInteger();

  private void containers(int n) {
    List<FailureCoordinator.Stoppable> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      all.add(stops::incrementAndGet);
    }
    coordinator.setContainers(all);
  }

  @Test
  void whenEveryContainerEndsNormally_theJobEndRunsOnceBeforeTheJobCompletes() {
    containers(2);
    coordinator.exited(null);
    assertThat(completion).isNotDone();
    assertThat(ends).isEmpty();
    coordinator.exited(null);
    assertThat(ends).containsExactly(true);
    assertThat(completedBeforeEnd).containsExactly(false);
    assertThat(completion).isCompletedWithValue(null);
    assertThat(stops).hasValue(0);
  }

  @Test
  void theFirstFailureIsTheCause_evenWhenALaterOneExitsFirst() {
    containers(2);
    RuntimeException first = new RuntimeException("first");
    RuntimeException teardown = new RuntimeException("a teardown broke under the first");
    coordinator.failing(first);
    assertThat(stops).as("every container asked to stop").hasValue(2);
    coordinator.failing(teardown);
    coordinator.exited(teardown);
    coordinator.exited(first);
    assertThat(ends).containsExactly(false);
    assertThatThrownBy(() -> completion.get()).isInstanceOf(ExecutionException.class).hasCause(first);
  }

  @Test
  void aCancelledJob_endsAsNotNormal() {
    containers(1);
    completion.completeExceptionally(new CancellationException("cancelled"));
    coordinator.exited(null);
    assertThat(ends).containsExactly(false);
  }

  @Test
  void aContainerThatEndedNormally_waitsForEveryOtherLoopBeforeItTearsDown() throws Exception {
    containers(2);
    CountDownLatch returned = new CountDownLatch(1);
    Thread waiting = new Thread(() -> {
      coordinator.loopEnded(true);
      returned.countDown();
    });
    waiting.start();
    assertThat(returned.await(100, TimeUnit.MILLISECONDS)).as("the other loop still runs").isFalse();
    coordinator.loopEnded(false); // the other container failed or was stopped: it does not wait
    assertThat(returned.await(10, TimeUnit.SECONDS)).isTrue();
    waiting.join();
  }

  @Test
  void aFailureIsLoggedOnce_beforeTheJobsEndLogsItsSummaries() {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    List<Boolean> loggedBeforeEnd = new ArrayList<>();
    FailureCoordinator failing = new FailureCoordinator("job-x", new CompletableFuture<>(),
        normal -> loggedBeforeEnd.add(captured.toString(StandardCharsets.UTF_8).contains("Weir job job-x failed")));
    failing.setContainers(List.of(stops::incrementAndGet, stops::incrementAndGet));
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      RuntimeException boom = new RuntimeException("boom");
      failing.failing(boom);
      failing.exited(boom);
      failing.exited(null);
    } finally {
      System.setErr(original);
    }
    assertThat(loggedBeforeEnd).as("the ERROR line came before the job's end ran").containsExactly(true);
    assertThat(captured.toString(StandardCharsets.UTF_8).split("Weir job job-x failed", -1)).as("logged once")
        .hasSize(2);
  }

  @Test
  void aCancelledJob_logsNoFailure() {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    containers(1);
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      completion.completeExceptionally(new CancellationException("cancelled"));
      coordinator.failing(new IllegalStateException("interrupted by the cancel"));
      coordinator.exited(new IllegalStateException("interrupted by the cancel"));
    } finally {
      System.setErr(original);
    }
    assertThat(captured.toString(StandardCharsets.UTF_8)).doesNotContain("failed");
  }
}
