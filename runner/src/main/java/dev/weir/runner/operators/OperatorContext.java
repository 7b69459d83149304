package dev.weir.runner.operators;

import dev.weir.runner.state.ContainerState;
import dev.weir.runner.time.JobClock;
import java.util.Map;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.values.TupleTag;

/**
 * What an operator instance gets from its task when it opens: the options, where each of its
 * outputs goes, its state and clock, and bundle finalization.
 *
 * <p>Metrics and profiling are not here: the executor makes the operator's PTransform the running
 * step (its metrics container current, its span open) around every call into the operator, so
 * an operator never scopes its own user-code calls. Only code that runs outside those calls (bundle
 * finalization callbacks) goes through {@link #step()}.
 *
 * @param options the pipeline's options (the deserialized copy owned by the executor)
 * @param stepName the PTransform's full name
 * @param partition the task's partition index within its stage
 * @param outputs the receiver per output tag; a tag with no consumer maps to nothing
 * @param step runs code in this PTransform's step outside the executor's calls into the operator
 * @param state the container's state (storage + object cache), shared by the container's tasks
 * @param clock the job's processing-time clock (the system clock, or a test stream's manual one)
 * @param finalizers the container's bundle finalization (see {@link #newFinalizer()})
 * @param restored the heap-only state this operator instance wrote into the checkpoint the job
 *     restored from ({@link Operator#snapshot}); {@link OperatorSnapshot#EMPTY} on a fresh start
 * @param checkpointed whether the job takes checkpoints ({@link Operator#checkpointCompleted()} is
 *     then called after each one)
 * @param eventBundles whether the task's bundles follow the events of a {@code TestStream} the job
 *     replays: while it replays, a bundle ends at the end of an event in the source's stage and
 *     when the job settled after it downstream (or at a watermark, or at {@code --maxBundleSize}
 *     input elements), not after {@code --maxBundleTimeMs}, so one bundle holds what one event
 *     brought into this stage, as a bundle of Beam's Direct runner does; an operator whose results
 *     depend on where bundles end (a GroupByKey under a trigger that counts elements) may then
 *     rely on them
 * @param workers the container's worker threads and mailbox for a concurrent ParDo
 *     ({@link ConcurrentParDoOperator}), or null when the job runs every ParDo on its container
 *     thread ({@code --containerThreadPoolSize=0}, the default) or the host has no worker pool
 * @param drainCaused whether the task's input watermark went to the end of time because the job
 *     is draining: timers fired while it holds are caused by the drain (Beam 2.73's
 *     {@code CausedByDrain}); asked per fired timer, on the container thread
 */
@Internal
public record OperatorContext(
    PipelineOptions options,
    String stepName,
    int partition,
    Map<TupleTag<?>, Receiver> outputs,
    StepRunner step,
    ContainerState state,
    JobClock clock,
    BundleFinalizers finalizers,
    OperatorSnapshot restored,
    boolean checkpointed,
    boolean eventBundles,
    ProcessElementWorkers workers,
    java.util.function.BooleanSupplier drainCaused) {

  /** A context whose task never drains (tests, and hosts without drain). */
  public OperatorContext(PipelineOptions options, String stepName, int partition, Map<TupleTag<?>, Receiver> outputs,
      StepRunner step, ContainerState state, JobClock clock, BundleFinalizers finalizers, OperatorSnapshot restored,
      boolean checkpointed, boolean eventBundles, ProcessElementWorkers workers) {
    this(options, stepName, partition, outputs, step, state, clock, finalizers, restored, checkpointed, eventBundles,
        workers, () -> false);
  }

  /** A context without worker threads (every operator but a concurrent ParDo needs none). */
  public OperatorContext(PipelineOptions options, String stepName, int partition, Map<TupleTag<?>, Receiver> outputs,
      StepRunner step, ContainerState state, JobClock clock, BundleFinalizers finalizers, OperatorSnapshot restored,
      boolean checkpointed, boolean eventBundles) {
    this(options, stepName, partition, outputs, step, state, clock, finalizers, restored, checkpointed, eventBundles,
        null);
  }

  /** A context on a fresh start (nothing restored). */
  public OperatorContext(PipelineOptions options, String stepName, int partition, Map<TupleTag<?>, Receiver> outputs,
      StepRunner step, ContainerState state, JobClock clock, BundleFinalizers finalizers) {
    this(options, stepName, partition, outputs, step, state, clock, finalizers, OperatorSnapshot.EMPTY, false, false);
  }

  /**
   * A context with bundle finalization of its own, whose callbacks nobody runs, and no step
   * scoping (for tests).
   */
  public OperatorContext(PipelineOptions options, String stepName, int partition, Map<TupleTag<?>, Receiver> outputs,
      ContainerState state, JobClock clock) {
    this(options, stepName, partition, outputs, StepRunner.CURRENT, state, clock, new BundleFinalizers());
  }

  /**
   * A new bundle finalizer for this operator instance: hand it to runners-core through the
   * DoFn's {@code StepContext.bundleFinalizer()} and call {@link BundleFinalizers.Finalizer#bundleFinished()}
   * at the end of every bundle; its callbacks then run after the container's next commit.
   */
  public BundleFinalizers.Finalizer newFinalizer() {
    return finalizers.finalizer(stepName, step);
  }

  /** The receiver of {@code tag}, or {@link Receiver#DISCARD} if nothing consumes it. */
  public Receiver output(TupleTag<?> tag) {
    Receiver receiver = outputs.get(tag);
    return receiver == null ? Receiver.DISCARD : receiver;
  }

  /** The receiver of the single output of an operator that has one. */
  public Receiver singleOutput() {
    if (outputs.size() > 1) {
      throw new IllegalStateException(stepName + " has " + outputs.size() + " outputs, expected one");
    }
    return outputs.isEmpty() ? Receiver.DISCARD : outputs.values().iterator().next();
  }
}
