package dev.weir.runner.samza;

import dev.weir.runner.stream.ProducerEndOfStream;
import dev.weir.runner.source.SourceContext;
import dev.weir.runner.source.SourcePartition;
import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.SourceSpec;
import dev.weir.runner.translation.StagePlan;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.samza.checkpoint.CheckpointListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
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
 * <p>Offsets (issue 15): an envelope's Samza offset is its split's whole position, the same bytes
 * the embedded executor checkpoints ({@link SourcePartition#position()}: an unbounded split's
 * checkpoint mark in the source's mark coder, a bounded split's count of elements read, whether an
 * impulse fired, the phase) as {@value #OFFSET_PREFIX} + URL-safe Base64. It is taken once per
 * drained batch, not per element (Beam's own Samza runner encoded the mark for every element): only
 * the last envelope of a {@code poll}'s batch of a split (at most
 * {@link PartitionConsumer#MAX_ENVELOPES_PER_POLL} envelopes) and each control message after the
 * data (final watermark, end-of-stream) carry one; the others carry a null offset, which
 * samza-core 1.8's {@code OffsetManager.update} skips, so a task's checkpointed offset is always the
 * position of the last positioned envelope it processed. A consumer registered at an offset decodes
 * it and resumes the split there ({@link SourcePartition#resumeAt}): an unbounded reader is created
 * from the decoded mark, a bounded split skips the elements it had read, an ended split returns only
 * its final watermark and end-of-stream. An offset that cannot be decoded fails the registration
 * naming the partition and the offset. Tasks must commit only right after a positioned envelope
 * (runner-samza's {@code SamzaStageTaskFactory} defers its commits so).
 *
 * <p>Checkpoint marks are finalized ({@code CheckpointMark.finalizeCheckpoint}, e.g. KafkaIO's
 * {@code commitOffsetsInFinalize}) only once the checkpoint holding their position is durable: the
 * consumer is a samza-api {@link CheckpointListener}, which samza-core 1.8 calls after its
 * checkpoint manager wrote a task's checkpoint (in the async stage of the commit, on its commit
 * thread). Every mark up to the checkpointed position is then finalized, oldest first, on the
 * polling thread at its next poll (readers stay confined to it); after {@link #stop} (samza-core
 * stops consumers before the last commit's async stage ends) on the listener's thread.
 *
 * <p>Not served: a {@code TestStream} source (it replays events as the embedded executor's
 * containers become quiescent, which only that executor tracks). The system is input-only: its
 * producer rejects every send.
 *
 * <p>Threading: the factory is stateless; see {@link PartitionConsumer} for the consumer.
 */
@Internal
public final class BeamSourceSystemFactory implements SystemFactory {
  private static final Logger LOG = LoggerFactory.getLogger(BeamSourceSystemFactory.class);
  /** The samza-api system this factory serves: source splits, one partition per split. */
  public static final String SOURCE_SYSTEM = JobPlan.SOURCE_SYSTEM;
  /** Version prefix of a source position as a Samza offset; the rest is URL-safe Base64 without padding. */
  public static final String OFFSET_PREFIX = "w1.";

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

  /** The Samza offset of a split position: {@value #OFFSET_PREFIX} + URL-safe Base64. */
  static String encodeOffset(byte[] position) {
    return OFFSET_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(position);
  }

  /**
   * The split position of a Samza offset written by {@link #encodeOffset}.
   *
   * @throws IllegalArgumentException if it is not one
   */
  static byte[] decodeOffset(String offset) {
    if (!offset.startsWith(OFFSET_PREFIX)) {
      throw new IllegalArgumentException("it does not start with '" + OFFSET_PREFIX + "'");
    }
    return Base64.getUrlDecoder().decode(offset.substring(OFFSET_PREFIX.length()));
  }

  /** Reads source splits; see the factory's comment. */
  static final class Consumer extends PartitionConsumer implements CheckpointListener {
    /** Registered splits; written on register (before start), read by the checkpoint listener's thread. */
    private final Map<SystemStreamPartition, Split> splits = new ConcurrentHashMap<>();
    private final WeirJobs.Job job;
    /** Polling thread only: its running step; its metrics switch is the thread's Beam metrics container during polls. */
    private final StepScope scope = new StepScope();
    /** Polling thread only: the metrics scope a drain round opened. */
    private Closeable metricsScope;

    Consumer(WeirJobs.Job job, String systemName) {
      super(systemName, admin(systemName, job));
      this.job = job;
    }

    /**
     * @throws IllegalStateException naming {@code ssp} and {@code offset} if the offset is not a
     *     position of this split
     */
    @Override
    Partition bind(SystemStreamPartition ssp, String offset) {
      StagePlan stage = job.sourceStage(ssp.getStream());
      if (stage.source() instanceof SourceSpec.Test) {
        throw new IllegalArgumentException(ssp.getStream() + " reads a TestStream, which only the embedded "
            + "executor replays (it waits for the job to be quiescent before each event)");
      }
      SourcePartition partition = job.tasks().createSourcePartition(stage, ssp.getPartition().getPartitionId());
      if (offset != null) {
        try {
          partition.resumeAt(decodeOffset(offset));
        } catch (RuntimeException e) {
          throw new IllegalStateException("cannot resume " + ssp + " at the checkpointed offset '" + offset
              + "': " + e.getMessage() + " (was the pipeline or its source splitting changed since the checkpoint?)", e);
        }
      }
      Split split = new Split(partition, job.tasks().sourceContext(stage, scope));
      splits.put(ssp, split);
      return split;
    }

    /**
     * A task's checkpoint with these offsets was written (samza-core's commit thread): marks up to
     * each checkpointed position become finalizable.
     */
    @Override
    public void afterCheckpoint(Map<SystemStreamPartition, String> offsets) {
      offsets.forEach((ssp, offset) -> {
        Split split = splits.get(ssp);
        if (split != null && offset != null) {
          split.durable(offset);
        }
      });
    }

    /** The registered split of {@code ssp}, or null (tests). */
    Split split(SystemStreamPartition ssp) {
      return splits.get(ssp);
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

  /**
   * One split: opened on the first drain, ended after Weir's end-of-stream; positions its batches
   * (see the factory's comment) and holds the marks they encoded until their checkpoint is durable.
   * Polling thread only, except {@link #durable}, which any thread may call.
   */
  static final class Split implements PartitionConsumer.Partition {
    /** A mark and the offset of the position that encoded it. */
    private record HeldMark(String offset, UnboundedSource.CheckpointMark mark) {}

    private final SourcePartition partition;
    private final SourceContext context;
    private boolean opened;
    /** Guarded by itself: marks not finalized yet, oldest first. */
    private final ArrayDeque<HeldMark> held = new ArrayDeque<>();
    /** Guarded by {@link #held}: the last durable offset not yet applied, and whether the split stopped. */
    private String durableOffset;
    private boolean closed;

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
      finalizeDurable();
      int first = out.size();
      for (int i = 0; i < max; i++) {
        Object message = partition.poll();
        if (message == null) {
          break;
        }
        IncomingMessageEnvelope envelope = new IncomingMessageEnvelope(partition.ssp(), null, null, message, 0, 0L, 0L);
        if (partition.dataEnded()) { // final watermark, end-of-stream: each carries a position
          envelope = positioned(envelope);
        }
        out.add(envelope);
        if (message instanceof ProducerEndOfStream) {
          return true;
        }
      }
      int last = out.size() - 1;
      if (last >= first && out.get(last).getOffset() == null) {
        out.set(last, positioned(out.get(last)));
      }
      return false;
    }

    /** {@code envelope} with the split's current position as its offset. */
    private IncomingMessageEnvelope positioned(IncomingMessageEnvelope envelope) {
      String offset = encodeOffset(partition.position());
      UnboundedSource.CheckpointMark mark = partition.takePositionMark();
      if (mark != null) {
        synchronized (held) {
          held.addLast(new HeldMark(offset, mark));
        }
      }
      return new IncomingMessageEnvelope(envelope.getSystemStreamPartition(), offset, envelope.getKey(),
          envelope.getMessage(), envelope.getSize(), envelope.getEventTime(), envelope.getArrivalTime());
    }

    /**
     * The checkpoint holding position {@code offset} is durable: its mark and all older ones may be
     * finalized (at the next drain; right away once the split is closed). Any thread.
     */
    void durable(String offset) {
      List<HeldMark> marks;
      synchronized (held) {
        durableOffset = offset;
        if (!closed) {
          return;
        }
        marks = takeDurable();
      }
      for (HeldMark m : marks) { // the reader is closed: nothing else uses the split
        try {
          m.mark().finalizeCheckpoint();
        } catch (IOException | RuntimeException e) {
          LOG.warn("finalizing a checkpoint mark of {} after it stopped failed", partition.ssp(), e);
        }
      }
    }

    /** Finalizes, on the polling thread, the marks a durable checkpoint covers. */
    void finalizeDurable() {
      List<HeldMark> marks;
      synchronized (held) {
        marks = takeDurable();
      }
      for (HeldMark m : marks) {
        partition.finalizeMark(m.mark());
      }
    }

    /** Marks up to the durable offset, oldest first, removed from {@link #held}; caller holds its lock. */
    private List<HeldMark> takeDurable() {
      String offset = durableOffset;
      durableOffset = null;
      if (offset == null || held.isEmpty()) {
        return List.of();
      }
      int covered = 0;
      int i = 0;
      for (HeldMark m : held) {
        i++;
        if (m.offset().equals(offset)) {
          covered = i; // the newest held mark of that position
        }
      }
      List<HeldMark> marks = new ArrayList<>(covered);
      for (int k = 0; k < covered; k++) {
        marks.add(held.pollFirst());
      }
      return marks;
    }

    /** Marks held, not finalized yet (tests). */
    int heldMarks() {
      synchronized (held) {
        return held.size();
      }
    }

    @Override
    public void close() {
      synchronized (held) {
        closed = true;
      }
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
