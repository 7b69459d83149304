package dev.weir.runner.executor;

/**
 * What a container does when a loop iteration found no work: spin briefly, then yield, then park
 * for growing intervals up to {@link #MAX_PARK_NS} (Agrona's BackoffIdleStrategy shape). Any work
 * resets it. It parks through the container's {@link Mailbox}, so a letter another thread puts
 * ends the park at once. Confined to one container thread.
 */
final class BackoffIdle {
  static final int SPINS = 50;
  static final int YIELDS = 50;
  static final long MIN_PARK_NS = 10_000L;
  static final long MAX_PARK_NS = 1_000_000L;

  private final Mailbox mailbox;
  private int idleRounds;
  private long parkNs = MIN_PARK_NS;

  /** @param mailbox the container's mailbox, through which the loop parks */
  BackoffIdle(Mailbox mailbox) {
    this.mailbox = mailbox;
  }

  /** Called once per loop iteration with the amount of work done in it. */
  void idle(int workCount) {
    if (workCount > 0) {
      idleRounds = 0;
      parkNs = MIN_PARK_NS;
      return;
    }
    idleRounds++;
    if (idleRounds <= SPINS) {
      Thread.onSpinWait();
    } else if (idleRounds <= SPINS + YIELDS) {
      Thread.yield();
    } else {
      mailbox.park(parkNs);
      parkNs = Math.min(MAX_PARK_NS, parkNs << 1);
    }
  }
}
