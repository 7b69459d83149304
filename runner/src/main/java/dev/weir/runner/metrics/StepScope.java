package dev.weir.runner.metrics;


import dev.weir.runner.operators.StepRunner;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.metrics.MetricsContainer;

/**
 * The running step of a container thread: which PTransform's code runs right now. Entering a
 * {@link Step} makes that PTransform current for both things that care, in one bracket: Beam's
 * metrics (the thread's {@link MetricsSwitch} points at the step's metrics container, so
 * {@code Metrics.counter(...).inc()} in user code counts for that PTransform) and profiling (the
 * thread's {@link TransformSpans} segment carries the step's name).
 *
 * <h2>Who brackets</h2>
 *
 * The executor, never the operators. Every call into an operator goes through one of: a
 * {@link dev.weir.runner.task.SpannedReceiver} on each edge of the fused graph (elements, including those a DoFn
 * outputs to the next fused operator), the task's brackets around its calls into an operator
 * (open, watermarks, timers, processing time, side inputs, finish bundle, close), or a source
 * partition's bracket around its reader calls. So element processing, timer firings,
 * {@code @StartBundle/@FinishBundle}, {@code @Setup/@Teardown}, splittable-DoFn resumes,
 * side-input retries and combine functions all run with their own step current without the
 * operators knowing about it. The one piece of user code that runs outside those brackets,
 * bundle finalization callbacks (run after a commit), is run through the step as a
 * {@link StepRunner}.
 *
 * <h2>Cost</h2>
 *
 * A bracket is one {@link #enter} and one {@link #exit}: each writes the current step, the metrics
 * switch's current container (a plain field write; see {@link MetricsSwitch} for why the
 * thread-local is not rewritten per call) and the span tracker's segment (one volatile read and a
 * branch when no profiler records; see {@link TransformSpans}). The steps are built once per task
 * at open; entering one allocates nothing and looks nothing up, by name or otherwise. Brackets
 * nest exactly like the fused calls they wrap, and the step {@link #enter} returns is the
 * caller's, to be resumed by {@link #exit} in a {@code finally}. A task's steps carry buffered,
 * single-writer metric cells (flushed when the task's bundle finishes), so the metric updates made
 * inside a bracket are plain field writes too.
 *
 * <p>Threading: one instance per container (or polling) thread, used only by that thread, like
 * the {@link MetricsSwitch} and {@link TransformSpans} it drives. Its {@link Step}s belong to it.
 */
@Internal
public final class StepScope {
  private final MetricsSwitch metrics;
  private final TransformSpans spans = new TransformSpans();
  /** What runs when no step does: executor code, with the unscoped metrics container. */
  private final Step none;
  /** The running step; {@link #none} between steps. */
  private Step current;

  /** A scope whose metrics, outside any step, go to a container nobody reads. */
  public StepScope() {
    this.metrics = new MetricsSwitch(new MetricsContainerImpl(null));
    this.none = new Step(this, null, null, cellsFor(null), new ElementCounter());
    this.current = none;
  }

  /**
   * A step of this scope; built once per (task, node) when the task opens, never per call.
   *
   * @param name the PTransform's full name, the span tag (a stream writer's: its stream's name)
   * @param metricsContainer the PTransform's metrics container for this task, or null to count
   *     its metrics nowhere (metrics disabled, or a node that runs no user code)
   */
  public Step step(String name, MetricsContainer metricsContainer) {
    return new Step(this, name, metricsContainer, cellsFor(metricsContainer), new ElementCounter());
  }

  /**
   * As {@link #step(String, MetricsContainer)}, with the step's metric cells given by their owner:
   * a task's {@link dev.weir.runner.metrics.StepMetrics.StepContainer}, whose buffered cells are
   * flushed when the task's bundle finishes.
   *
   * @param cells the cells through which this step's code updates {@code metricsContainer}
   * @param elements the step's elements in and out, as its owner reads them
   */
  public Step step(String name, MetricsContainer metricsContainer, MetricsSwitch.StepCells cells,
      ElementCounter elements) {
    return new Step(this, name, metricsContainer, cells, elements);
  }

  /**
   * Cells for a step whose container is given by the caller: the container's own cells when it is
   * read live (e.g. a source read outside a task); buffered cells that are never flushed when
   * there is no container (metrics off, or no step), so that counting into nowhere costs plain
   * field writes, not runners-core's atomics.
   */
  private static MetricsSwitch.StepCells cellsFor(MetricsContainer metricsContainer) {
    return new MetricsSwitch.StepCells(metricsContainer == null);
  }

  /** The thread's metrics switch, to install as the thread's Beam metrics container. */
  public MetricsSwitch metrics() {
    return metrics;
  }

  /** Installs this scope's metrics switch as the calling thread's current Beam metrics container. */
  public void installOnCurrentThread() {
    metrics.installOnCurrentThread();
  }

  /**
   * Makes {@code step} the running step and returns the previous one, which the caller passes to
   * {@link #exit} when the call into the step returns (in a {@code finally}).
   */
  public Step enter(Step step) {
    Step previous = current;
    switchTo(step);
    return previous;
  }

  /** Ends the running step and resumes {@code previous}, as {@link #enter} returned it. */
  public void exit(Step previous) {
    switchTo(previous);
  }

  /** The running step, or null between steps (for tests). */
  public Step current() {
    return current == none ? null : current;
  }

  private void switchTo(Step step) {
    current = step;
    metrics.swap(step.metricsContainer, step.cells);
    spans.switchTo(step.name);
  }

  /**
   * One PTransform of one task as the scope sees it: its span tag and its metrics container.
   * Immutable but for the metric cells its own thread fills; passing one along allocates nothing.
   */
  public static final class Step implements StepRunner {
    private final StepScope scope;
    private final String name;
    private final MetricsContainer metricsContainer;
    /** The cells this step's code has updated, found without a lookup by name (MetricsSwitch). */
    private final MetricsSwitch.StepCells cells;
    /** Elements into and out of this step; counted by the edges of the task's fused graph. */
    private final ElementCounter elements;

    private Step(StepScope scope, String name, MetricsContainer metricsContainer, MetricsSwitch.StepCells cells,
        ElementCounter elements) {
      this.scope = scope;
      this.name = name;
      this.metricsContainer = metricsContainer;
      this.cells = cells;
      this.elements = elements;
    }

    /** This step's elements in and out (counted by the task's edges; unread if nobody registered it). */
    public ElementCounter elements() {
      return elements;
    }

    /** The PTransform's full name (a writer's: its stream's name); null for "no step". */
    public String name() {
      return name;
    }

    /** The PTransform's metrics container for this task, or null if its metrics go nowhere. */
    public MetricsContainer metricsContainer() {
      return metricsContainer;
    }

    /** Runs {@code call} with this step running on the scope's thread (outside the usual brackets). */
    @Override
    public void run(Runnable call) {
      Step previous = scope.enter(this);
      try {
        call.run();
      } finally {
        scope.exit(previous);
      }
    }

    @Override
    public String toString() {
      return name == null ? "(no step)" : name;
    }
  }
}
