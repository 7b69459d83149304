package dev.weir.runner.executor;

import java.util.concurrent.locks.LockSupport;

/**
 * What a container does when a loop iteration found no work: spin briefly, then yield, then park
 * for growing intervals up to {@link #MAX_PARK_NS} (Agrona's BackoffIdleStrategy shape). Any work
 * resets it. Confined to one container thread.
 */
final class BackoffIdle {
  static final int SPINS = 50;
  static final int YIELDS = 50;
  static final long MIN_PARK_NS = 10_000L;
  static final long MAX_PARK_NS = 1_000_000L;

  private int idleRounds;
  private long parkNs = MIN_PARK_NS;

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
      LockSupport.parkNanos(parkNs);
      parkNs = Math.min(MAX_PARK_NS, parkNs << 1);
    }
  }
}
