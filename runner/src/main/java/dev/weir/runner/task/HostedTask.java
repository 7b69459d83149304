package dev.weir.runner.task;

import dev.weir.runner.operators.FailureContext;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.stream.InProcessStream;
import dev.weir.runner.stream.InputPartition;
import dev.weir.runner.stream.KeyedElement;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import dev.weir.state.store.StateStorage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.samza.Partition;
import org.apache.samza.system.SystemStreamPartition;

/**
 * One {@link StageTask} hosted by a foreign run loop, e.g. samza-core's, instead of a
 * {@code executor.Container}: the host hands it each input envelope, its periodic tick and its end of
 * input, and takes what the task writes to its output streams through an {@link Output}. The task,
 * its operators, its watermark aggregation over producers ({@link StageWatermarks}) and its
 * control messages ({@link dev.weir.runner.stream.ProducerWatermark}, {@link dev.weir.runner.stream.ProducerEndOfStream}) are exactly the
 * embedded executor's; only the run loop differs.
 *
 * <p>The hosted task acts as a container of one task: it owns a {@link ContainerState} (the
 * {@code --stateBackend} in its own directory) and a {@link ContainerCommit}. After every call
 * from the host it runs the task until it waits for input again ({@link #pump}): it moves output
 * to the host, fires every ready timer (in the task's slices, one after another: the host has no
 * other task of this container to be fair to) and commits if a bundle finished. The output
 * streams are private in-process queues that each call empties into the {@link Output}; the task's
 * outbox therefore never stays blocked after a call.
 *
 * <p>A host with its own durable store (runner-samza: a Samza store with a changelog) hands it in
 * as a {@link StateStorage}; the object cache then keeps dirty values until the host's commit
 * point, {@link #commitState}, instead of flushing them at every finished bundle.
 *
 * <p>Threading: one host thread at a time (samza-core's run loop calls a task serially); the
 * calling thread's Beam metrics container is set to the task's step scope on each call.
 */
@Internal
public final class HostedTask {
  /** Capacity of each private output queue (envelopes); drained after every step of a call. */
  private static final int OUTPUT_CAPACITY = 256;
  private static final long DRAIN_PARK_NS = 1_000_000L;

  /** Where a hosted task's output goes: the host's stream, e.g. a Kafka topic partition. */
  @FunctionalInterface
  public interface Output {
    /**
     * Sends one envelope of stream {@code stream} to its partition {@code partition}.
     *
     * @param key a shuffle's encoded key bytes, or null
     * @param message a Beam {@code WindowedValue}, a {@link dev.weir.runner.stream.ProducerWatermark} or a
     *     {@link dev.weir.runner.stream.ProducerEndOfStream}
     */
    void send(StreamPlan stream, int partition, byte[] key, Object message);
  }

  /** A hosted input: the task's own identity of it; the host delivers its envelopes. */
  private record HostedInput(SystemStreamPartition ssp, int producers) implements InputPartition {
    @Override
    public Object poll() {
      return null;
    }
  }

  private final String name;
  private final StagePlan stage;
  private final StageTask task;
  private final HostedInput[] inputs;
  private final Map<String, Integer> inputIndex = new HashMap<>();
  private final List<InProcessStream> outputs = new ArrayList<>();
  private final WeirSettings settings;
  private final StepMetrics metrics;
  private final Path stateDirectory;
  /** The host's storage, or null: the {@code --stateBackend} in {@link #stateDirectory}. */
  private final StateStorage hostStorage;
  private final StepScope scope = new StepScope();
  private ContainerState state;
  private ContainerCommit commit;
  private boolean opened;
  /** Every input had ended when the task opened: its restored state is past its end of input. */
  private boolean restoredEnded;
  private long droppedAfterRestoredEnd;

  /**
   * The task {@code taskName} of {@code plan} ({@code stage-N-pP}), not opened yet.
   *
   * @param settings the run's settings (bundles, state backend, object cache, metrics)
   * @param metrics the job's metrics registry; the task's step metrics are committed into it
   * @param stateDirectory the task's own state directory (RocksDB backend; created at
   *     {@link #open}), or null for the memory backend
   * @throws IllegalArgumentException if the plan has no such task
   */
  public HostedTask(JobPlan plan, String taskName, WeirSettings settings, StepMetrics metrics, Path stateDirectory) {
    this(plan, taskName, settings, metrics, stateDirectory, null);
  }

  /**
   * As the other constructor, but with {@code hostStorage} (if not null) as the task's storage
   * instead of the {@code --stateBackend}: the object cache is flushed into it only at
   * {@link #commitState} (and when it evicts), the host's commit point. Closed by {@link #close}.
   */
  public HostedTask(JobPlan plan, String taskName, WeirSettings settings, StepMetrics metrics, Path stateDirectory,
      StateStorage hostStorage) {
    this.hostStorage = hostStorage;
    this.name = taskName;
    this.settings = settings;
    this.metrics = metrics;
    this.stateDirectory = stateDirectory;
    StagePlan found = null;
    int partition = -1;
    for (StagePlan candidate : plan.stages()) {
      for (int p = 0; p < candidate.partitions() && found == null; p++) {
        if (JobPlan.taskName(candidate, p).equals(taskName)) {
          found = candidate;
          partition = p;
        }
      }
    }
    if (found == null) {
      throw new IllegalArgumentException("the job has no task " + taskName);
    }
    this.stage = found;
    List<InputPartition> partitions = new ArrayList<>();
    if (stage.source() != null) {
      String stream = JobPlan.sourceStreamName(stage);
      inputIndex.put(stream, partitions.size());
      partitions.add(new HostedInput(new SystemStreamPartition(JobPlan.SOURCE_SYSTEM, stream, new Partition(partition)),
          1));
    }
    for (StagePlan.Input input : stage.inputs()) {
      inputIndex.put(input.stream().name(), partitions.size());
      partitions.add(new HostedInput(new SystemStreamPartition(InProcessStream.SYSTEM, input.stream().name(),
          new Partition(partition)), input.stream().producers()));
    }
    this.inputs = partitions.toArray(new HostedInput[0]);
    Map<Integer, InProcessStream> streams = new HashMap<>();
    for (StreamPlan stream : plan.streams()) {
      if (stream.producer() == stage) {
        InProcessStream queue = new InProcessStream(stream, OUTPUT_CAPACITY);
        streams.put(stream.id(), queue);
        outputs.add(queue);
      }
    }
    this.task = new StageTask(stage, partition, partitions, streams, settings, JobClock.SYSTEM, null);
  }

  /** The task's name, e.g. {@code stage-2-p0}. */
  public String name() {
    return name;
  }

  /** The task's stage. */
  public StagePlan stage() {
    return stage;
  }

  /**
   * The index of the input named {@code streamName} (a source stream, {@link JobPlan#sourceStreamName},
   * or an intermediate stream, {@link StreamPlan#name()}), or -1 if the task does not read it.
   */
  public int inputIndex(String streamName) {
    Integer index = inputIndex.get(streamName);
    return index == null ? -1 : index;
  }

  /** Opens state and operators on the calling (host) thread. */
  public void open() throws Exception {
    scope.installOnCurrentThread();
    if (stateDirectory != null) {
      java.nio.file.Files.createDirectories(stateDirectory);
    }
    state = hostStorage != null
        ? new ContainerState(hostStorage, settings.objectCacheBounds(), name, true)
        : new ContainerState(settings.stateBackend(), stateDirectory, settings.objectCacheBounds(), name, false);
    state.keyGroups(settings.keyGroups());
    commit = new ContainerCommit(state, metrics.newCommitter(), task::committed);
    if (hostStorage != null) {
      // the task's heap part as of the host's last commit point: watermarks, metrics, operators' heap state
      task.restore(hostStorage.committedMetadata());
    }
    task.open(scope, commit);
    restoredEnded = task.inputsEnded(); // nothing processed yet: only a restored end of input
    opened = true;
  }

  /**
   * Processes one envelope of input {@code input} ({@link #inputIndex}), then runs the task until
   * it waits for input again, sending its output to {@code out}.
   *
   * A task restored past its end of input drops what it is given ({@link #droppedAfterRestoredEnd()}).
   *
   * @param message a Beam {@code WindowedValue}, a {@link dev.weir.runner.stream.ProducerWatermark} or a {@link dev.weir.runner.stream.ProducerEndOfStream}
   * @throws RuntimeException the task's failure, with the task's name attached ({@link FailureContext})
   * @throws IllegalStateException if a task that ended while running (not restored past its end) is given more input
   */
  public void process(int input, Object key, Object message, Output out) {
    scope.installOnCurrentThread();
    if (restoredEnded) {
      // restored past its end of input: what its producers send again (their last watermark and end
      // of stream, or replays of elements whose effects the restored state holds) changes nothing;
      // the task itself finishes its (restored) end, sending its end of stream again (idempotent)
      droppedAfterRestoredEnd++;
      pump(out);
      return;
    }
    if (task.nextOp() == TaskOp.NONE) {
      throw new IllegalStateException(name + " is done but got " + message + " on input " + inputs[input].ssp());
    }
    try {
      task.process(input, KeyedElement.of((byte[]) key, message));
    } catch (Throwable t) {
      throw FailureContext.attach(t, "in task " + name + " (hosted)");
    }
    pump(out);
  }

  /** The host's periodic tick (bundle time-outs, processing-time timers); then runs the task as {@link #process}. */
  public void tick(Output out) {
    scope.installOnCurrentThread();
    if (task.nextOp() == TaskOp.PROCESS) {
      task.tick(false);
    }
    pump(out);
  }

  /**
   * Every input ended (e.g. samza-core's end of stream of a bounded source): ends the task's
   * input and runs it until it is done, ticking it while operators have pending work.
   */
  public void endOfInput(Output out) {
    scope.installOnCurrentThread();
    if (!restoredEnded) { // a restored end was ended at open
      task.endOfInput();
    }
    pump(out);
    while (!isDone()) {
      LockSupport.parkNanos(DRAIN_PARK_NS);
      tick(out);
    }
  }

  /**
   * The host's commit point (e.g. just before samza-core's commit): finishes the open bundle, if
   * any, moves its output to {@code out}, then flushes every dirty value of the object cache into
   * the storage and writes the commit record ({@link ContainerState#commit()}). After it, the
   * storage holds the effect of every input envelope the task was given. With a host storage the
   * commit record also holds the task's heap part (its producers' watermarks, its step metrics and
   * its operators' heap state, e.g. elements pushed back until a side input is ready:
   * {@link StageTask#snapshot}), which {@link #open} hands back to the task after a restart, as the
   * embedded executor's checkpoints do.
   *
   * @return true if committed; false if the task is not quiet for a snapshot yet (an operator not
   *     {@link StageTask#quietForCheckpoint() ready}): nothing was committed, the host tries again later
   */
  public boolean commitState(Output out) {
    scope.installOnCurrentThread();
    if (task.nextOp() == TaskOp.PROCESS) {
      task.finishBundleForCheckpoint();
    }
    pump(out);
    if (hostStorage == null) {
      state.commit();
      return true;
    }
    if (task.nextOp() != TaskOp.NONE && !task.quietForCheckpoint()) {
      return false;
    }
    Map<String, byte[]> metadata = new HashMap<>();
    task.snapshot(metadata);
    state.commit(metadata);
    return true;
  }

  /**
   * Envelopes dropped because the task was restored past its end of input (its producers' last
   * watermark and end of stream sent again after a restart, or replays of elements the state holds).
   */
  public long droppedAfterRestoredEnd() {
    return droppedAfterRestoredEnd;
  }

  /** Whether the task sent its end of stream and has no output left. */
  public boolean isDone() {
    return task.nextOp() == TaskOp.NONE && outputsEmpty();
  }

  /** Closes operators and state; after a normal end, publishes the last metrics as committed. Never throws. */
  public void close() {
    if (!opened) {
      return;
    }
    opened = false;
    boolean done = isDone();
    try {
      task.close();
    } finally {
      if (done) {
        commit.commitFinal();
      } else {
        commit.flushAttemptedMetrics(); // a failed or stopped task's attempted values count its open bundle
      }
      state.close();
      MetricsEnvironment.setCurrentContainer(null);
    }
  }

  /** Moves output to the host, fires ready timers and commits, until the task waits for input. */
  private void pump(Output out) {
    while (true) {
      flush(out);
      switch (task.nextOp()) {
        case DRAIN_OUTBOX -> task.drainOutbox();
        case FIRE_TIMERS -> task.continueTimers();
        case PROCESS, NONE -> {
          state.safePoint(); // between elements, as after a run-loop iteration of the embedded executor
          commit.commitIfNeeded();
          flush(out);
          return;
        }
      }
    }
  }

  private void flush(Output out) {
    for (InProcessStream stream : outputs) {
      for (int p = 0; p < stream.partitionCount(); p++) {
        InProcessStream.Partition partition = stream.partition(p);
        Object message;
        while ((message = partition.poll()) != null) {
          out.send(stream.plan(), p, KeyedElement.keyOf(message), KeyedElement.messageOf(message));
        }
      }
    }
  }

  private boolean outputsEmpty() {
    for (InProcessStream stream : outputs) {
      for (int p = 0; p < stream.partitionCount(); p++) {
        if (stream.partition(p).size() > 0) {
          return false;
        }
      }
    }
    return true;
  }
}
