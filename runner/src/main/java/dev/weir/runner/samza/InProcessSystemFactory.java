package dev.weir.runner.samza;

import dev.weir.runner.stream.InProcessStream;
import dev.weir.runner.stream.KeyedElement;
import dev.weir.runner.stream.ProducerEndOfStream;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.samza.config.Config;
import org.apache.samza.metrics.MetricsRegistry;
import org.apache.samza.system.IncomingMessageEnvelope;
import org.apache.samza.system.OutgoingMessageEnvelope;
import org.apache.samza.system.SystemAdmin;
import org.apache.samza.system.SystemConsumer;
import org.apache.samza.system.SystemFactory;
import org.apache.samza.system.SystemProducer;
import org.apache.samza.system.SystemStreamPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * samza-api {@link SystemFactory} of system {@value InProcessStream#SYSTEM}: a Weir job's
 * intermediate streams (shuffles, forwards, side-input broadcasts), bound to the job's
 * {@link InProcessStream}s, found through {@link WeirJobs} by the job id in the config. Envelopes
 * pass by reference, exactly as between the embedded executor's tasks.
 *
 * <p>In-process by design: these streams are queues in this JVM, so the producing and consuming
 * tasks must run in it. A multi-process samza-core deployment swaps this system for one that
 * crosses processes, e.g. Kafka topics with one partition per stream partition and serdes for
 * Weir's envelopes (Beam coders for elements, a small encoding for the watermark and end-of-stream
 * control messages); the stream names and partition counts stay those of the plan.
 *
 * <p>Consumer: partition P of a stream is that stream's queue P; it delivers elements and Weir's
 * per-producer watermarks and end-of-stream messages, and after the last producer's end-of-stream
 * samza-core's end-of-stream envelope. A partition must have one consumer only (the queues are
 * single-consumer), and not also the embedded executor.
 *
 * <p>Producer: sends to partition {@link OutgoingMessageEnvelope#getPartitionKey()}, which must be
 * the partition index as an {@link Integer} (Weir's writers choose partitions themselves: by key
 * hash, forward or broadcast); the envelope's key (a shuffle's encoded key bytes) and message go
 * through unchanged. A full partition applies back-pressure: {@code send} waits until it has room.
 *
 * <p>Threading: the factory is stateless; consumer as {@link PartitionConsumer}; a producer may be
 * used from any number of threads (the queues are multi-producer).
 */
@Internal
public final class InProcessSystemFactory implements SystemFactory {
  private static final Logger LOG = LoggerFactory.getLogger(InProcessSystemFactory.class);

  /**
   * The consumer of the job named in {@code config}.
   *
   * @throws IllegalArgumentException if {@code systemName} is not {@value InProcessStream#SYSTEM}
   *     or the config names no job
   * @throws IllegalStateException if the job is not bound in this JVM
   */
  @Override
  public SystemConsumer getConsumer(String systemName, Config config, MetricsRegistry registry) {
    return new Consumer(job(systemName, config), systemName);
  }

  /** The producer writing into the job's streams (same errors as {@link #getConsumer}). */
  @Override
  public SystemProducer getProducer(String systemName, Config config, MetricsRegistry registry) {
    return new Producer(job(systemName, config), systemName);
  }

  /** The admin: each stream with its plan's partition count (same errors as {@link #getConsumer}). */
  @Override
  public SystemAdmin getAdmin(String systemName, Config config) {
    return admin(systemName, job(systemName, config));
  }

  private static WeirJobs.Job job(String systemName, Config config) {
    // The in-process streams name their partitions on this system.
    if (!InProcessStream.SYSTEM.equals(systemName)) {
      throw new IllegalArgumentException("InProcessSystemFactory serves system '" + InProcessStream.SYSTEM
          + "' only, not '" + systemName + "'");
    }
    return WeirJobs.lookup(systemName, config);
  }

  private static WeirSystemAdmin admin(String systemName, WeirJobs.Job job) {
    return new WeirSystemAdmin(systemName, job.streamPartitionCounts());
  }

  private static InProcessStream stream(WeirJobs.Job job, String name) {
    return job.tasks().stream(job.stream(name).id());
  }

  /** Reads stream partitions; see the factory's comment. */
  private static final class Consumer extends PartitionConsumer {
    private final WeirJobs.Job job;

    Consumer(WeirJobs.Job job, String systemName) {
      super(systemName, admin(systemName, job));
      this.job = job;
    }

    /** In-process streams have no offsets: a start offset is ignored (they are read from the start). */
    @Override
    Partition bind(SystemStreamPartition ssp, String offset) {
      if (offset != null) {
        LOG.warn("{}: ignoring start offset {}; in-process streams have no offsets and are read from the start", ssp,
            offset);
      }
      return new Queue(stream(job, ssp.getStream()).partition(ssp.getPartition().getPartitionId()));
    }
  }

  /** One stream partition: ends after every producer's end-of-stream. Polling thread only. */
  private static final class Queue implements PartitionConsumer.Partition {
    private final InProcessStream.Partition partition;
    private int endedProducers;

    Queue(InProcessStream.Partition partition) {
      this.partition = partition;
    }

    @Override
    public boolean drainTo(List<IncomingMessageEnvelope> out, int max) {
      for (int i = 0; i < max; i++) {
        Object message = partition.poll();
        if (message == null) {
          return false;
        }
        out.add(new IncomingMessageEnvelope(partition.ssp(), null, KeyedElement.keyOf(message),
            KeyedElement.messageOf(message), 0, 0L, 0L));
        if (message instanceof ProducerEndOfStream && ++endedProducers == partition.producers()) {
          return true;
        }
      }
      return false;
    }
  }

  /** Writes into the job's streams; see the factory's comment. */
  private static final class Producer implements SystemProducer {
    private static final long MAX_PARK_NS = 1_000_000L;
    private final WeirJobs.Job job;
    private final String system;
    private volatile boolean stopped;

    Producer(WeirJobs.Job job, String system) {
      this.job = job;
      this.system = system;
    }

    @Override
    public void start() {}

    /** Ends the wait of any send blocked on a full partition (it then throws). */
    @Override
    public void stop() {
      stopped = true;
    }

    @Override
    public void register(String source) {}

    /**
     * Appends the envelope to its partition, waiting while the partition is full.
     *
     * @throws IllegalArgumentException if the envelope names another system, a stream the job does
     *     not have, or a partition key that is not an Integer in [0, partitions)
     * @throws IllegalStateException if the producer is stopped or the thread interrupted while waiting
     */
    @Override
    public void send(String source, OutgoingMessageEnvelope envelope) {
      if (!system.equals(envelope.getSystemStream().getSystem())) {
        throw new IllegalArgumentException("system " + system + " cannot send to " + envelope.getSystemStream());
      }
      InProcessStream stream = stream(job, envelope.getSystemStream().getStream());
      int partition = partitionOf(envelope, stream.partitionCount());
      SystemStreamPartition ssp = stream.partition(partition).ssp();
      Object message = KeyedElement.of((byte[]) envelope.getKey(), envelope.getMessage());
      long parkNs = 10_000L;
      while (!stream.offer(partition, message)) {
        if (stopped || Thread.currentThread().isInterrupted()) {
          throw new IllegalStateException("stopped while " + ssp + " was full; the envelope was not sent");
        }
        LockSupport.parkNanos(parkNs);
        parkNs = Math.min(MAX_PARK_NS, parkNs << 1);
      }
    }

    /** Nothing to flush: a sent envelope is in its queue already. */
    @Override
    public void flush(String source) {}

    private static int partitionOf(OutgoingMessageEnvelope envelope, int partitions) {
      if (envelope.getPartitionKey() instanceof Integer p && p >= 0 && p < partitions) {
        return p;
      }
      throw new IllegalArgumentException("the partition key of an envelope to " + envelope.getSystemStream()
          + " must be the partition index, an Integer in [0, " + partitions + "), not " + envelope.getPartitionKey());
    }
  }
}
