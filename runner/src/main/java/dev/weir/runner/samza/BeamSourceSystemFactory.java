package dev.weir.runner.samza;

import dev.weir.runner.executor.ProducerEndOfStream;
import dev.weir.runner.executor.SourceContext;
import dev.weir.runner.executor.SourcePartition;
import dev.weir.runner.executor.StepScope;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.SourceSpec;
import dev.weir.runner.translation.StagePlan;
import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.samza.config.Config;
import org.apache.samza.metrics.MetricsRegistry;
import org.apache.samza.system.IncomingMessageEnvelope;
import org.apache.samza.system.OutgoingMessageEnvelope;
import org.apache.samza.system.SystemAdmin;
import org.apache.samza.system.SystemConsumer;
import org.apache.samza.system.SystemFactory;
import org.apache.samza.system.SystemProducer;
import org.apache.samza.system.SystemStreamPartition;

/**
 * samza-api {@link SystemFactory} of system {@value #SOURCE_SYSTEM}: the Beam
 * sources of a Weir job. Stream {@code stage-N-source} is source stage N; its partition P is the
 * stage's split P, read by the executor's own {@link SourcePartition} (the same reader loop,
 * watermarks and control messages as in the embedded executor). The job is found through
 * {@link WeirJobs} by the job id in the config.
 *
 * <p>The consumer's {@code poll} returns, per partition: envelopes of Beam {@code WindowedValue}s
 * (in the global window, with the reader's timestamps), Weir's {@code ProducerWatermark}s (an
 * unbounded reader's advancing watermark, then +infinity at the end), Weir's
 * {@code ProducerEndOfStream}, and then samza-core's end-of-stream envelope. Readers are opened on
 * the first poll of their partition and advance only inside {@code poll}, on the polling thread,
 * with the Read step's Beam metrics container current. A partition must be read by one consumer
 * only, and not also by the embedded executor.
 *
 * <p>Not served: a {@code TestStream} source (it replays events as the embedded executor's
 * containers become quiescent, which only that executor tracks). The system is input-only: its
 * producer rejects every send.
 *
 * <p>Threading: the factory is stateless; see {@link PartitionConsumer} for the consumer.
 */
@Internal
public final class BeamSourceSystemFactory implements SystemFactory {
  /** The samza-api system this factory serves: source splits, one partition per split. */
  public static final String SOURCE_SYSTEM = JobPlan.SOURCE_SYSTEM;

  /**
   * The consumer of the job named in {@code config}.
   *
   * @throws IllegalArgumentException if {@code systemName} is not {@value #SOURCE_SYSTEM}
   *     or the config names no job
   * @throws IllegalStateException if the job is not bound in this JVM
   */
  @Override
  public SystemConsumer getConsumer(String systemName, Config config, MetricsRegistry registry) {
    return new Consumer(job(systemName, config), systemName);
  }

  /** A producer that rejects every send: Beam sources are read, never written. */
  @Override
  public SystemProducer getProducer(String systemName, Config config, MetricsRegistry registry) {
    requireName(systemName);
    return new InputOnlyProducer(systemName);
  }

  /** The admin: one partition per split of each source stage. */
  @Override
  public SystemAdmin getAdmin(String systemName, Config config) {
    return admin(systemName, job(systemName, config));
  }

  private static WeirJobs.Job job(String systemName, Config config) {
    requireName(systemName);
    return WeirJobs.lookup(systemName, config);
  }

  private static WeirSystemAdmin admin(String systemName, WeirJobs.Job job) {
    return new WeirSystemAdmin(systemName, job.sourcePartitionCounts());
  }

  private static void requireName(String systemName) {
    // The executor's source partitions name their envelopes' partitions on this system.
    if (!SOURCE_SYSTEM.equals(systemName)) {
      throw new IllegalArgumentException("BeamSourceSystemFactory serves system '" + SOURCE_SYSTEM
          + "' only, not '" + systemName + "'");
    }
  }

  /** Reads source splits; see the factory's comment. */
  private static final class Consumer extends PartitionConsumer {
    private final WeirJobs.Job job;
    /** Polling thread only: its running step; its metrics switch is the thread's Beam metrics container during polls. */
    private final StepScope scope = new StepScope();
    /** Polling thread only: the metrics scope a drain round opened. */
    private Closeable metricsScope;

    Consumer(WeirJobs.Job job, String systemName) {
      super(systemName, admin(systemName, job));
      this.job = job;
    }

    @Override
    Partition bind(SystemStreamPartition ssp) {
      StagePlan stage = job.sourceStage(ssp.getStream());
      if (stage.source() instanceof SourceSpec.Test) {
        throw new IllegalArgumentException(ssp.getStream() + " reads a TestStream, which only the embedded "
            + "executor replays (it waits for the job to be quiescent before each event)");
      }
      return new Split(job.tasks().createSourcePartition(stage, ssp.getPartition().getPartitionId()),
          job.tasks().sourceContext(stage, scope));
    }

    @Override
    void beforeDrain() {
      // Once per poll round, not per element: readers report into the Read step's container,
      // which the source partition makes current (it enters its Read step) around each reader call.
      metricsScope = MetricsEnvironment.scopedMetricsContainer(scope.metrics());
    }

    @Override
    void afterDrain() {
      try {
        metricsScope.close();
      } catch (IOException e) {
        throw new IllegalStateException(e);
      } finally {
        metricsScope = null;
      }
    }
  }

  /** One split: opened on the first drain, ended after Weir's end-of-stream. Polling thread only. */
  private static final class Split implements PartitionConsumer.Partition {
    private final SourcePartition partition;
    private final SourceContext context;
    private boolean opened;

    Split(SourcePartition partition, SourceContext context) {
      this.partition = partition;
      this.context = context;
    }

    @Override
    public boolean drainTo(List<IncomingMessageEnvelope> out, int max) {
      if (!opened) {
        opened = true;
        partition.open(context);
      }
      for (int i = 0; i < max; i++) {
        IncomingMessageEnvelope envelope = partition.poll();
        if (envelope == null) {
          return false;
        }
        out.add(envelope);
        if (envelope.getMessage() instanceof ProducerEndOfStream) {
          return true;
        }
      }
      return false;
    }

    @Override
    public void close() {
      if (opened) {
        partition.close();
      }
    }
  }

  /** The producer of an input-only system. */
  private static final class InputOnlyProducer implements SystemProducer {
    private final String system;

    InputOnlyProducer(String system) {
      this.system = system;
    }

    @Override
    public void start() {}

    @Override
    public void stop() {}

    @Override
    public void register(String source) {}

    /** @throws UnsupportedOperationException always */
    @Override
    public void send(String source, OutgoingMessageEnvelope envelope) {
      throw new UnsupportedOperationException("system " + system + " is input-only (Beam sources): cannot send to "
          + envelope.getSystemStream());
    }

    @Override
    public void flush(String source) {}
  }
}
