package dev.weir.runner.operators;

import dev.weir.runner.compat.BeamElements;
import java.util.Collection;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.WindowFn;
import org.apache.beam.sdk.values.WindowedValue;
import org.joda.time.Instant;

/**
 * {@code Window.assignInto}: assigns each element to the windows its {@link WindowFn} chooses,
 * keeping value, timestamp, pane and metadata (record id and offset, drain cause: Beam's
 * {@code Redistribute} carries them across its shuffle). One reusable assign context per task; an element already in
 * several windows is exploded first so that {@code AssignContext.window()} is well defined.
 * Confined to the task's thread.
 */
@Internal
public final class WindowAssignOperator<T, W extends BoundedWindow> implements Operator {
  private final WindowFn<T, W> windowFn;
  private Receiver output;
  private OperatorContext context;
  private final Context assignContext;

  /** @param windowFn the window function, or null to pass elements through unchanged */
  public WindowAssignOperator(WindowFn<T, W> windowFn) {
    this.windowFn = windowFn;
    this.assignContext = windowFn == null ? null : new Context(windowFn);
  }

  @Override
  public void open(OperatorContext context) {
    this.context = context;
    this.output = context.singleOutput();
  }

  @Override
  @SuppressWarnings("unchecked")
  public void accept(WindowedValue<?> element) {
    if (windowFn == null) {
      output.accept(element);
      return;
    }
    WindowedValue<T> typed = (WindowedValue<T>) element;
    if (typed.getWindows().size() == 1) {
      assign(typed, typed.getWindows().iterator().next());
    } else {
      for (WindowedValue<T> single : typed.explodeWindows()) {
        assign(single, single.getWindows().iterator().next());
      }
    }
  }

  private void assign(WindowedValue<T> element, BoundedWindow window) {
    Collection<W> windows;
    assignContext.element = element;
    assignContext.window = window;
    try {
      windows = windowFn.assignWindows(assignContext);
    } catch (Exception e) {
      throw new RuntimeException("WindowFn of " + context.stepName() + " failed", e);
    } finally {
      assignContext.element = null;
    }
    output.accept(BeamElements.inWindows(element, windows));
  }

  /** The mutable assign context, reused for every element. */
  private final class Context extends WindowFn<T, W>.AssignContext {
    WindowedValue<T> element;
    BoundedWindow window;

    Context(WindowFn<T, W> fn) {
      fn.super();
    }

    @Override
    public T element() {
      return element.getValue();
    }

    @Override
    public Instant timestamp() {
      return element.getTimestamp();
    }

    @Override
    public BoundedWindow window() {
      return window;
    }
  }
}
