package dev.weir.runner.samza;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.samza.system.IncomingMessageEnvelope;
import org.apache.samza.system.SystemConsumer;
import org.apache.samza.system.SystemStreamPartition;

/**
 * The polling half shared by Weir's {@link SystemConsumer}s: registered partitions are drained
 * without blocking, at most {@value #MAX_ENVELOPES_PER_POLL} envelopes per partition per poll; a
 * poll that finds nothing waits (parking for growing intervals up to 1 ms) and retries until its
 * timeout. Each partition's own control messages (Weir's {@code ProducerWatermark} and
 * {@code ProducerEndOfStream}, which Weir's tasks consume) pass through unchanged; once a partition
 * has ended, the consumer appends samza-core's end-of-stream envelope
 * ({@link IncomingMessageEnvelope#buildEndOfStreamEnvelope}), which is how samza-core's run loop
 * learns that an input partition is finished, and polls it no more.
 *
 * <p>Offsets: a registration's offset goes to {@link #bind}: source splits resume at the position
 * it encodes ({@link BeamSourceSystemFactory}); in-process streams ignore it.
 *
 * <p>Threading: {@link #register} and {@link #start} before polling; {@link #poll} from one thread
 * at a time (samza-core polls from its run-loop thread); {@link #stop} when no poll is running
 * (samza-core stops consumers after its run loop has exited). A stop from another thread during a
 * waiting poll ends the wait.
 */
abstract class PartitionConsumer implements SystemConsumer {
  /** Envelopes taken from one partition in one poll: bounds a poll's latency for the others. */
  static final int MAX_ENVELOPES_PER_POLL = 1024;
  private static final long MIN_PARK_NS = 10_000L;
  private static final long MAX_PARK_NS = 1_000_000L;

  /** One registered partition's source of envelopes. Used only by the polling thread. */
  interface Partition {
    /**
     * Appends up to {@code max} envelopes to {@code out} without blocking.
     *
     * @return true once the partition has delivered its last envelope (it is not drained again)
     */
    boolean drainTo(List<IncomingMessageEnvelope> out, int max);

    /** Releases the partition's resources; must not throw. */
    default void close() {}
  }

  /** A registered partition and whether it ended. Polling thread only. */
  private static final class Registered {
    final Partition partition;
    boolean ended;

    Registered(Partition partition) {
      this.partition = partition;
    }
  }

  private final String system;
  private final WeirSystemAdmin admin;
  private final Map<SystemStreamPartition, Registered> partitions = new LinkedHashMap<>();
  /** Polling thread only. */
  private final List<IncomingMessageEnvelope> scratch = new ArrayList<>();
  private volatile boolean stopped;

  /**
   * @param system the system name; registered partitions must belong to it
   * @param admin the system's admin, which validates registered partitions
   */
  PartitionConsumer(String system, WeirSystemAdmin admin) {
    this.system = system;
    this.admin = admin;
  }

  /**
   * Binds a validated partition of this system, to be read from {@code offset} (samza-core's
   * starting offset: null on a fresh start).
   *
   * @throws IllegalStateException naming the partition if {@code offset} cannot be resumed from
   */
  abstract Partition bind(SystemStreamPartition ssp, String offset);

  /** Called on the polling thread before each round of drains (e.g. to install metrics). */
  void beforeDrain() {}

  /** Called on the polling thread after each round of drains. */
  void afterDrain() {}

  /**
   * @throws IllegalArgumentException if {@code ssp} is not a partition of this system's streams
   * @throws IllegalStateException if it is registered already
   */
  @Override
  public void register(SystemStreamPartition ssp, String offset) {
    admin.checkPartition(ssp);
    if (partitions.containsKey(ssp)) {
      throw new IllegalStateException(ssp + " is registered already");
    }
    partitions.put(ssp, new Registered(bind(ssp, offset)));
  }

  @Override
  public void start() {}

  /** Closes every registered partition. Idempotent. */
  @Override
  public void stop() {
    stopped = true;
    for (Registered registered : partitions.values()) {
      registered.partition.close();
    }
  }

  /**
   * Envelopes of the requested partitions: waits up to {@code timeout} ms
   * ({@link #BLOCK_ON_OUTSTANDING_MESSAGES}: until there is one) if none is available, and returns
   * an empty map at once when every requested partition has ended. Partitions with nothing to
   * give are absent from the result.
   *
   * @throws IllegalArgumentException if a requested partition is not registered
   * @throws InterruptedException if the thread is interrupted while waiting
   */
  @Override
  public Map<SystemStreamPartition, List<IncomingMessageEnvelope>> poll(Set<SystemStreamPartition> ssps,
      long timeout) throws InterruptedException {
    long deadline = timeout < 0 ? Long.MAX_VALUE : System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeout);
    long parkNs = MIN_PARK_NS;
    Map<SystemStreamPartition, List<IncomingMessageEnvelope>> result = new HashMap<>(); // stays empty until returned
    while (true) {
      boolean live = drainOnce(ssps, result);
      if (!result.isEmpty() || !live || stopped || System.nanoTime() - deadline >= 0) {
        return result;
      }
      LockSupport.parkNanos(parkNs);
      if (Thread.interrupted()) {
        throw new InterruptedException("interrupted while polling " + system);
      }
      parkNs = Math.min(MAX_PARK_NS, parkNs << 1);
    }
  }

  /** One round over the requested partitions; returns whether any of them has not ended. */
  private boolean drainOnce(Set<SystemStreamPartition> ssps,
      Map<SystemStreamPartition, List<IncomingMessageEnvelope>> result) {
    boolean live = false;
    beforeDrain();
    try {
      for (SystemStreamPartition ssp : ssps) {
        Registered registered = partitions.get(ssp);
        if (registered == null) {
          throw new IllegalArgumentException(ssp + " is not registered with this " + system + " consumer");
        }
        if (registered.ended) {
          continue;
        }
        // A scratch list, copied only when it has envelopes: idle polls allocate nothing per partition.
        scratch.clear();
        if (registered.partition.drainTo(scratch, MAX_ENVELOPES_PER_POLL)) {
          registered.ended = true;
          scratch.add(IncomingMessageEnvelope.buildEndOfStreamEnvelope(ssp));
        } else {
          live = true;
        }
        if (!scratch.isEmpty()) {
          result.put(ssp, new ArrayList<>(scratch));
        }
      }
    } finally {
      afterDrain();
    }
    return live;
  }
}
