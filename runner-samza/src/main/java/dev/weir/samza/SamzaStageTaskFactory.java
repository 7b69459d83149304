package dev.weir.samza;

import dev.weir.runner.WeirSettings;
import dev.weir.runner.task.HostedTask;
import dev.weir.runner.stream.ProducerEndOfStream;
import dev.weir.runner.stream.ProducerWatermark;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StreamPlan;
import java.nio.file.Path;
import org.apache.samza.storage.kv.KeyValueStore;
import java.util.HashMap;
import java.util.Map;
import org.apache.samza.context.Context;
import org.apache.samza.scheduler.CallbackScheduler;
import org.apache.samza.scheduler.ScheduledCallback;
import org.apache.samza.system.IncomingMessageEnvelope;
import org.apache.samza.system.OutgoingMessageEnvelope;
import org.apache.samza.system.SystemStream;
import org.apache.samza.task.AsyncStreamTask;
import org.apache.samza.task.AsyncStreamTaskFactory;
import org.apache.samza.task.ClosableTask;
import org.apache.samza.task.EndOfStreamListenerTask;
import org.apache.samza.task.InitableTask;
import org.apache.samza.task.MessageCollector;
import org.apache.samza.task.TaskCallback;
import org.apache.samza.task.TaskCoordinator;
import org.apache.beam.sdk.values.WindowedValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The samza-api task factory of a Weir job on samza-core: each Samza task becomes, at
 * {@code init}, the Weir task of the same name ({@code stage-N-pP}) as a {@link HostedTask},
 * which runs the stage's fused operators exactly as the embedded executor does. Envelopes of its
 * input partitions (source splits, intermediate Kafka topics) go to it; what it writes to its
 * output streams goes to samza-core's {@link MessageCollector}, to the stream's topic and the
 * partition Weir's writer chose; a callback of samza-core's callback scheduler (every
 * {@value SamzaJobConfig#TICK_MS} ms, rescheduled by each tick) is its tick. samza-core's
 * {@code window} is not used: its run loop takes a snapshot of a container-wide 5-minute timer
 * after every window call, whose cost grows with the number of window calls (tasks x ticks). A
 * task whose input ended and whose output is sent asks samza-core to shut it down
 * ({@link TaskCoordinator.RequestScope#CURRENT_TASK}); when every task has, the container ends.
 *
 * <p>State ({@code --stateBackend=rocksdb}): the task's keyed state, timers and holds live in its
 * Samza store {@value SamzaJobConfig#STATE_STORE} (RocksDB, Kafka changelog) as a
 * {@link SamzaKvStorage}, under Weir's object cache (the same {@code ContainerState} as the
 * embedded executor: cells, timer index and commit record in Weir's own layout). samza-core
 * restores the store from its changelog before {@code init}. With {@code --stateBackend=memory}
 * the state is Weir's heap store, lost with the process.
 *
 * <p>Commit point. samza-core's own timed commit is disabled ({@code task.commit.ms=-1} in the
 * generated config): it runs between two calls of the task and would checkpoint input offsets
 * while the effects of the envelopes before them are still dirty in Weir's object cache, and the
 * low-level API has no hook that runs before a commit's store flush. Instead the task commits in
 * its tick (samza-core runs scheduled callbacks on the task's thread, never concurrently with
 * {@code process}) once the user's {@code task.commit.ms} has passed: it finishes the open
 * bundle and flushes the object cache into the store ({@link HostedTask#commitState}), then asks
 * samza-core to commit now ({@link TaskCoordinator#commit}, scope {@code CURRENT_TASK}), which
 * runs right after the tick returns: samza-core flushes the producers (outputs), the store
 * and its changelog, then writes the checkpoint of the task's input offsets. The same happens
 * before the task asks to shut down.
 *
 * <p>What that promises (samza-core 1.8 with its defaults, transactional state on: the
 * checkpoint records each store's changelog offset next to the input offsets). After a process
 * dies, a restarted task gets its store as of its last checkpoint (the local store directory if it
 * is kept, else the changelog up to the recorded offset; changelog writes after it are trimmed) and
 * resumes its intermediate-stream inputs at the offsets of that same checkpoint: its state is
 * exactly once with respect to those inputs. What it sent after the last checkpoint is sent again:
 * with {@code weir.processing.guarantee=exactly_once} nobody saw the first sending (the task's
 * records and its checkpoint commit in one Kafka transaction, {@link TaskTransaction}; the task
 * announces each commit to it so that the commit's first flush seals it), at-least-once the next
 * stage reads it twice, as Samza does without Kafka transactions. Its heap state (watermarks,
 * pushed-back elements, metrics) is in the store's commit record ({@link HostedTask#commitState}),
 * so it resumes with it. Source splits resume the
 * same way: their envelopes' offsets are the splits' positions (runner's
 * {@code BeamSourceSystemFactory}), so a restarted source task resumes each split at the position
 * of its last checkpoint. Since only the last envelope of each drained batch carries a position, a
 * due commit waits until the last source envelope processed carried one ({@link SourceCommitGate};
 * at most one batch, 1024 envelopes, later), and is then taken right after that envelope.
 *
 * <p>Replayed elements at-least-once (issue 15). What a task sent after its last checkpoint it sends
 * again after a restart. A source stage with no other input (its task reads one split and nothing else)
 * numbers the elements it sends per output partition ({@link SequencedElement}, counts in
 * {@link MessageSequences}, persisted in the task's Samza store right after
 * {@link HostedTask#commitState}, i.e. in the same checkpoint as its split positions); every task
 * with Samza stores keeps, in the same way, the highest number it took per producer and drops an
 * element at or below it. A replay therefore does not reach the next stage's state twice, provided
 * the source task, resumed at its checkpointed position, sends the same elements in the same order
 * (a split whose reader returns the same records from a checkpoint mark, e.g. KafkaIO reading one
 * Kafka partition; DoFns that output deterministically and not from {@code @FinishBundle}, whose
 * bundles end at other points after a restart). If not, a replay can be dropped in place of a new
 * element (lost) or taken twice. Tasks of other stages (a shuffle's, Flatten's or side input's
 * several producers interleave differently after a restart; timers fire at other points) do not
 * number their elements: their replays are at-least-once, as is any memory-backend task's.
 *
 * <p>Watermarks to other tasks go through a {@link WatermarkThrottle}: at most one every
 * {@code weir.watermark.interval.ms} ms (default 100; {@link SamzaJobConfig#watermarkIntervalMs()})
 * per output partition (the latest; held ones go at the tick or
 * before the partition's end of stream). Without it a KafkaIO source (processing-time watermark)
 * sent a new watermark to every output partition on each empty poll, about 1,500 messages per
 * second per partition in {@code SamzaStandaloneKillIT}, more than the counting tasks could read:
 * their lag grew by about 900 messages per second, so the later a phase of that test, the longer its
 * input took to be counted, and after the last restart (store wiped, phase 4) it was not counted
 * within the test's 90 s (seen as "three keys at 110 of 120" and "nothing counted"; the restarted
 * process only restored, it lost nothing). samza-core's "Registering duplicate callback for key:
 * weir-tick-..." warning is harmless: {@code EpochTimeScheduler.setTimer} records a timer's future
 * after scheduling it, so a tick due before that (10 ms under load) leaves a finished future in its
 * map, which the next {@code setTimer} finds, fails to cancel because it is done, and replaces; no
 * tick is lost.
 *
 * <p>Threading: samza-core calls each task from one thread at a time.
 */
final class SamzaStageTaskFactory implements AsyncStreamTaskFactory {
  private static final Logger LOG = LoggerFactory.getLogger(SamzaStageTaskFactory.class);

  /** How often a done task asks again for its last commit, ns (samza-core skipped the earlier request). */
  private static final long FINAL_COMMIT_RETRY_NS = 50_000_000L;

  private final JobPlan plan;
  private final WeirSettings settings;
  private final StepMetrics metrics;
  private final Path stateDirectory;
  private final boolean samzaStores;
  private final long commitNs;
  /** Least time between two watermarks a task sends to one output partition, ms ({@link WatermarkThrottle}). */
  private final long watermarkIntervalMs;
  /** Exactly-once: the job instance's transactional id prefix ({@link TaskTransactions}); null: at-least-once. */
  private final String transactionalIdPrefix;
  /** Topic to stream name, for the inputs; stream name to output system stream. */
  private final Map<String, String> streamOfTopic = new HashMap<>();
  private final Map<String, SystemStream> outputOf = new HashMap<>();

  /**
   * @param topics the Kafka topic of each intermediate stream, by stream name
   * @param stateDirectory the run's state directory for Weir's own stores (each task gets a
   *     sub-directory), or null: the memory backend, or Samza stores
   * @param samzaStores whether tasks keep their state in the Samza store {@value SamzaJobConfig#STATE_STORE}
   * @param commitMs the tasks' commit interval, ms (with Samza stores)
   * @param watermarkIntervalMs the least time between two watermarks a task sends to one output partition, ms (>= 1)
   * @param transactionalIdPrefix with exactly-once, the prefix of the tasks' transactional ids
   *     ({@link TaskTransactions}); null for at-least-once
   */
  SamzaStageTaskFactory(JobPlan plan, WeirSettings settings, StepMetrics metrics, Map<String, String> topics,
      Path stateDirectory, boolean samzaStores, long commitMs, long watermarkIntervalMs, String transactionalIdPrefix) {
    this.transactionalIdPrefix = transactionalIdPrefix;
    this.watermarkIntervalMs = watermarkIntervalMs;
    this.samzaStores = samzaStores;
    this.commitNs = Math.min(commitMs, Long.MAX_VALUE / 1_000_000L) * 1_000_000L;
    this.plan = plan;
    this.settings = settings;
    this.metrics = metrics;
    this.stateDirectory = stateDirectory;
    topics.forEach((stream, topic) -> {
      streamOfTopic.put(topic, stream);
      outputOf.put(stream, new SystemStream(SamzaJobConfig.KAFKA_SYSTEM, topic));
    });
  }

  @Override
  public AsyncStreamTask createInstance() {
    return new Task();
  }

  /** One Samza task hosting one Weir task. */
  private final class Task
      implements AsyncStreamTask, InitableTask, EndOfStreamListenerTask, ClosableTask, ScheduledCallback<String> {
    private HostedTask task;
    private CallbackScheduler scheduler;
    private String tickKey;
    private MessageCollector collector;
    private final HostedTask.Output output = this::send;
    private boolean shutdownRequested;
    private long lastCommitNs;
    private final SourceCommitGate gate = new SourceCommitGate();
    private final WatermarkThrottle throttle = new WatermarkThrottle(watermarkIntervalMs, this::sendNow);
    /** With Samza stores: this task's sequence numbers (both halves); else null. */
    private MessageSequences sequences;
    /** Whether this task numbers the elements it sends (a source stage with no other input, Samza stores). */
    private boolean numbered;
    /** This task's partition index in its stage: the producer index in its elements' numbers. */
    private int producerIndex;
    private long droppedLogged;
    /** Exactly-once: the task's transaction (opened by samza-core's producer start, before init); else null. */
    private TaskTransaction transaction;

    @Override
    @SuppressWarnings("unchecked")
    public void init(Context context) throws Exception {
      String name = context.getTaskContext().getTaskModel().getTaskName().getTaskName();
      if (samzaStores) {
        KeyValueStore<byte[], byte[]> store =
            (KeyValueStore<byte[], byte[]>) context.getTaskContext().getStore(SamzaJobConfig.STATE_STORE);
        SamzaKvStorage storage = new SamzaKvStorage(store);
        sequences = new MessageSequences(storage.sequenceStore());
        task = new HostedTask(plan, name, settings, metrics, null, storage);
        numbered = task.stage().source() != null && task.stage().inputs().isEmpty();
      } else {
        task = new HostedTask(plan, name, settings, metrics, stateDirectory == null ? null : stateDirectory.resolve(name));
      }
      for (int p = 0; p < task.stage().partitions(); p++) {
        if (JobPlan.taskName(task.stage(), p).equals(name)) {
          producerIndex = p;
        }
      }
      if (transactionalIdPrefix != null) {
        transaction = TaskTransactions.find(transactionalIdPrefix, name);
        if (transaction == null) {
          throw new IllegalStateException("exactly-once: " + name + " has no Kafka transaction (Weir's Kafka system "
              + "producer opens one per registered task at start)");
        }
      }
      task.open();
      if (numbered) {
        LOG.info("{} numbers the elements it sends (a source stage with no other input); replays are dropped "
            + "downstream", name);
      }
      lastCommitNs = System.nanoTime();
      scheduler = context.getTaskContext().getCallbackScheduler();
      tickKey = "weir-tick-" + name;
      scheduleTick();
    }

    private void scheduleTick() {
      scheduler.scheduleCallback(tickKey, System.currentTimeMillis() + SamzaJobConfig.TICK_MS, this);
    }

    @Override
    public void processAsync(IncomingMessageEnvelope envelope, MessageCollector collector,
        TaskCoordinator coordinator, TaskCallback callback) {
      try {
        this.collector = collector;
        String stream = envelope.getSystemStreamPartition().getStream();
        String weirStream = streamOfTopic.getOrDefault(stream, stream);
        int input = task.inputIndex(weirStream);
        if (input < 0) {
          throw new IllegalStateException(task.name() + " does not read " + envelope.getSystemStreamPartition());
        }
        if (JobPlan.SOURCE_SYSTEM.equals(envelope.getSystemStreamPartition().getSystem())) {
          gate.sourceEnvelope(envelope.getOffset());
        }
        Object message = envelope.getMessage();
        if (message instanceof SequencedElement sequenced) {
          if (sequences != null && !sequences.accept(weirStream, sequenced.producer(), sequenced.sequence())) {
            callback.complete(); // a replay of an element taken before: its effects are in the state
            return;
          }
          message = sequenced.element();
        }
        task.process(input, envelope.getKey(), message, output);
        commitIfDue(coordinator); // a deferred commit, right after the envelope that carried a position
        shutDownIfDone(coordinator);
        callback.complete();
      } catch (Throwable t) {
        callback.failure(t);
      }
    }

    /** The tick: samza-core's run loop calls it on the task's thread, never during {@code processAsync}. */
    @Override
    public void onCallback(String key, MessageCollector collector, TaskCoordinator coordinator) {
      if (shutdownRequested) {
        // samza-core skips a commit asked for while its previous one is still being written: a done
        // task asks again until its transaction holds nothing uncommitted (its last outputs, e.g. its
        // end of stream, would otherwise never become visible to read_committed readers, and block them)
        if (transaction != null && transaction.hasUncommitted()) {
          if (System.nanoTime() - lastCommitNs >= FINAL_COMMIT_RETRY_NS) {
            lastCommitNs = System.nanoTime();
            requestCommit(coordinator);
          }
          scheduleTick();
        }
        return;
      }
      this.collector = collector;
      task.tick(output);
      throttle.flushDue(System.nanoTime());
      if (samzaStores && !gate.isDue() && System.nanoTime() - lastCommitNs >= commitNs) {
        gate.commitDue();
      }
      commitIfDue(coordinator);
      shutDownIfDone(coordinator);
      if (!shutdownRequested || transaction != null) {
        scheduleTick();
      }
    }

    @Override
    public void onEndOfStream(MessageCollector collector, TaskCoordinator coordinator) {
      this.collector = collector;
      task.endOfInput(output);
      // samza-core runs no more operations for this task (no process, tick or requested commit) except
      // the commit asked for in this callback: the last one, which with exactly-once makes the task's
      // last outputs (its end of stream among them) visible. Asked for even if the task asked before
      // (done by its last envelope): that request may have been taken by a commit still under way.
      shutDownIfDone(coordinator);
      requestCommit(coordinator);
    }

    @Override
    public void close() {
      if (task != null) {
        task.close();
      }
    }

    /** Commits if the interval passed and the last source envelope carried a position ({@link SourceCommitGate}). */
    private void commitIfDue(TaskCoordinator coordinator) {
      if (gate.takeCommit()) {
        if (!task.commitState(output)) {
          gate.commitDue(); // an operator is not ready to snapshot its heap state: the next tick tries again
          return;
        }
        lastCommitNs = System.nanoTime();
        persistSequences();
        requestCommit(coordinator);
      }
    }

    /** Asks samza-core to commit the task; with exactly-once its next flush seals the transaction for that commit. */
    private void requestCommit(TaskCoordinator coordinator) {
      if (transaction != null) {
        transaction.requestCommit();
      }
      coordinator.commit(TaskCoordinator.RequestScope.CURRENT_TASK);
    }

    private void shutDownIfDone(TaskCoordinator coordinator) {
      if (!shutdownRequested && task.isDone()) {
        shutdownRequested = true;
        // a done task processed its source's end-of-stream, which carries a position: the gate is open
        if (samzaStores) {
          task.commitState(output);
          persistSequences();
        }
        lastCommitNs = System.nanoTime();
        requestCommit(coordinator);
        coordinator.shutdown(TaskCoordinator.RequestScope.CURRENT_TASK);
        if (transaction == null) {
          scheduler.deleteCallback(tickKey);
        } // else the tick goes on until the last commit is in (see onCallback)
      }
    }

    /** After the task's state was flushed into the store: its numbers go into the same store, for the same checkpoint. */
    private void persistSequences() {
      if (sequences == null) {
        return;
      }
      sequences.persist();
      if (sequences.dropped() != droppedLogged) {
        LOG.info("{} dropped {} replayed element(s) of restarted producers since it started",
            task.name(), sequences.dropped());
        droppedLogged = sequences.dropped();
      }
    }

    /** The task's output: watermarks through the throttle, elements numbered if this task numbers them. */
    private void send(StreamPlan stream, int partition, byte[] key, Object message) {
      if (message instanceof ProducerWatermark watermark) {
        throttle.offer(stream.name(), partition, watermark, System.nanoTime());
        return;
      }
      if (message instanceof ProducerEndOfStream) {
        throttle.flush(stream.name(), partition, System.nanoTime()); // the last watermark before the end
      } else if (numbered && message instanceof WindowedValue<?> element) {
        message = new SequencedElement(producerIndex, sequences.nextSequence(stream.name(), partition), element);
      }
      sendNow(stream.name(), partition, key, message);
    }

    private void sendNow(String stream, int partition, Object message) {
      sendNow(stream, partition, null, message);
    }

    private void sendNow(String stream, int partition, byte[] key, Object message) {
      collector.send(new OutgoingMessageEnvelope(outputOf.get(stream), partition, key, message));
    }
  }
}
