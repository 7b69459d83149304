package dev.weir.runner.executor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The container's mailbox on its own: order, bounds, failures, many writers, and waking a parked owner. */
class MailboxTest {

  @Test
  void lettersRunOnTheOwnerInTheOrderTheyArrivedUpToTheBound() {
    Mailbox mailbox = new Mailbox();
    mailbox.bindOwner();
    List<Integer> ran = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      int n = i;
      mailbox.put(() -> ran.add(n));
    }
    assertThat(mailbox.runLetters(3)).isEqualTo(3);
    assertThat(ran).containsExactly(0, 1, 2);
    assertThat(mailbox.isEmpty()).isFalse();
    assertThat(mailbox.runLetters(10)).isEqualTo(2);
    assertThat(ran).containsExactly(0, 1, 2, 3, 4);
    assertThat(mailbox.isEmpty()).isTrue();
  }

  @Test
  void aLetterThatThrowsEndsTheRunAndLeavesLaterLettersQueued() {
    Mailbox mailbox = new Mailbox();
    mailbox.bindOwner();
    List<String> ran = new ArrayList<>();
    mailbox.put(() -> {
      throw new IllegalStateException("boom");
    });
    mailbox.put(() -> ran.add("after"));
    assertThatThrownBy(() -> mailbox.runLetters(10)).hasMessage("boom");
    assertThat(ran).isEmpty();
    assertThat(mailbox.runLetters(10)).isEqualTo(1);
    assertThat(ran).containsExactly("after");
  }

  @Test
  @Timeout(60)
  void everyLetterOfManyWritersRunsExactlyOnce() throws InterruptedException {
    Mailbox mailbox = new Mailbox();
    mailbox.bindOwner();
    int writers = 4;
    int each = 10_000;
    long[] sums = new long[1];
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      Thread t = new Thread(() -> {
        for (int i = 1; i <= each; i++) {
          int n = i;
          mailbox.put(() -> sums[0] += n); // runs on the owner only: a plain field is enough
        }
      });
      threads.add(t);
      t.start();
    }
    long expected = (long) writers * each * (each + 1) / 2;
    int ran = 0;
    while (ran < writers * each) {
      int now = mailbox.runLetters(100);
      ran += now;
      if (now == 0) {
        mailbox.park(1_000_000L);
      }
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(mailbox.isEmpty()).isTrue();
    assertThat(sums[0]).isEqualTo(expected);
  }

  @Test
  @Timeout(60)
  void aLetterWakesAnOwnerParkedForLong() throws InterruptedException {
    Mailbox mailbox = new Mailbox();
    mailbox.bindOwner();
    CountDownLatch parked = new CountDownLatch(1);
    Thread writer = new Thread(() -> {
      try {
        parked.await();
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      mailbox.put(() -> { });
    });
    writer.start();
    parked.countDown();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (mailbox.isEmpty() && System.nanoTime() < deadline) {
      mailbox.park(TimeUnit.SECONDS.toNanos(30)); // spurious returns loop; the letter must end it well before
    }
    assertThat(mailbox.isEmpty()).as("woken by the letter, not by the 30 s timeout").isFalse();
    assertThat(mailbox.runLetters(1)).isEqualTo(1);
    writer.join();
  }

  @Test
  void parkingWithALetterWaitingReturnsAtOnce() {
    Mailbox mailbox = new Mailbox();
    mailbox.bindOwner();
    mailbox.put(() -> { });
    mailbox.park(TimeUnit.HOURS.toNanos(1)); // would hang the test if it parked
    assertThat(mailbox.runLetters(1)).isEqualTo(1);
  }
}
