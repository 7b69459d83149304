package dev.weir.runner.state;

import java.util.Arrays;
import java.util.HashMap;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;

/**
 * A map from runners-core {@link StateNamespace}s to values that finds window namespaces by their
 * window, without hashing the namespace object.
 *
 * <p>Why: runners-core builds a new namespace object for every state access and timer
 * ({@code StateNamespaces.window(coder, window)}), and its {@code hashCode} is
 * {@code Objects.hash(kind, window[, triggerIndex])}, which allocates an argument array (and boxes
 * the trigger index) on every call; its {@code equals} compares the windows' structural values.
 * Per-key state views and timer slots look namespaces up several times per element, and those
 * arrays were 4–6% of the bytes Nexmark Q4 and Q11 allocated. Here the global namespace has one
 * slot, a window namespace is found by its window's structural value (the window itself for
 * coders consistent with equals and for windows whose coder says so, as runners-core's namespace
 * equality does), and a window-and-trigger namespace by that and its trigger index in a small
 * array; any other namespace falls back to a map keyed by the namespace.
 *
 * <p>The window coder must be the one the namespaces were built with (a keyed operator's windows);
 * a namespace whose window the coder cannot handle is kept in the fallback map.
 *
 * <p>Threading: not thread-safe; confined to one task thread like the state it indexes.
 *
 * @param <V> the value type; values are non-null
 */
@Internal
public final class NamespaceMap<V> {
  private final Coder<BoundedWindow> windowCoder;
  private V global;
  private final HashMap<Object, V> windows = new HashMap<>();
  /** Per window: values by trigger index (null where absent). */
  private final HashMap<Object, Object[]> triggers = new HashMap<>();
  private final HashMap<StateNamespace, V> others = new HashMap<>();
  private int size;

  /**
   * @param windowCoder the coder of the windows of the namespaces this map will hold, or null to
   *     key every namespace by itself
   */
  @SuppressWarnings("unchecked")
  public NamespaceMap(Coder<? extends BoundedWindow> windowCoder) {
    this.windowCoder = (Coder<BoundedWindow>) windowCoder;
  }

  /** The value of {@code namespace}, or null. */
  @SuppressWarnings("unchecked")
  public V get(StateNamespace namespace) {
    if (namespace instanceof StateNamespaces.WindowNamespace<?> w) {
      Object window = structural(w.getWindow());
      return window != null ? windows.get(window) : others.get(namespace);
    }
    if (namespace instanceof StateNamespaces.WindowAndTriggerNamespace<?> t) {
      Object window = structural(t.getWindow());
      if (window == null) {
        return others.get(namespace);
      }
      Object[] byIndex = triggers.get(window);
      int index = t.getTriggerIndex();
      return byIndex != null && index < byIndex.length ? (V) byIndex[index] : null;
    }
    if (namespace instanceof StateNamespaces.GlobalNamespace) {
      return global;
    }
    return others.get(namespace);
  }

  /** Sets the value of {@code namespace}. */
  public void put(StateNamespace namespace, V value) {
    if (value == null) {
      throw new NullPointerException("null value for " + namespace);
    }
    V previous;
    if (namespace instanceof StateNamespaces.WindowNamespace<?> w && structural(w.getWindow()) != null) {
      previous = windows.put(structural(w.getWindow()), value);
    } else if (namespace instanceof StateNamespaces.WindowAndTriggerNamespace<?> t
        && structural(t.getWindow()) != null) {
      Object window = structural(t.getWindow());
      int index = t.getTriggerIndex();
      Object[] byIndex = triggers.get(window);
      if (byIndex == null || index >= byIndex.length) {
        byIndex = byIndex == null ? new Object[Math.max(4, index + 1)] : Arrays.copyOf(byIndex, index + 1);
        triggers.put(window, byIndex);
      }
      @SuppressWarnings("unchecked")
      V old = (V) byIndex[index];
      previous = old;
      byIndex[index] = value;
    } else if (namespace instanceof StateNamespaces.GlobalNamespace) {
      previous = global;
      global = value;
    } else {
      previous = others.put(namespace, value);
    }
    if (previous == null) {
      size++;
    }
  }

  /** Removes the value of {@code namespace}, if any. */
  public void remove(StateNamespace namespace) {
    Object removed;
    if (namespace instanceof StateNamespaces.WindowNamespace<?> w && structural(w.getWindow()) != null) {
      removed = windows.remove(structural(w.getWindow()));
    } else if (namespace instanceof StateNamespaces.WindowAndTriggerNamespace<?> t
        && structural(t.getWindow()) != null) {
      Object[] byIndex = triggers.get(structural(t.getWindow()));
      int index = t.getTriggerIndex();
      removed = byIndex != null && index < byIndex.length ? byIndex[index] : null;
      if (removed != null) {
        byIndex[index] = null;
      }
    } else if (namespace instanceof StateNamespaces.GlobalNamespace) {
      removed = global;
      global = null;
    } else {
      removed = others.remove(namespace);
    }
    if (removed != null) {
      size--;
    }
  }

  /** Number of namespaces with a value. */
  public int size() {
    return size;
  }

  /** Removes every value. */
  public void clear() {
    global = null;
    windows.clear();
    triggers.clear();
    others.clear();
    size = 0;
  }

  /**
   * The key a window namespace's window is found by: its structural value under the map's coder
   * (the window itself for most window coders), or null if the map has no coder or the coder
   * cannot take this window.
   */
  private Object structural(BoundedWindow window) {
    if (windowCoder == null) {
      return null;
    }
    try {
      return windowCoder.structuralValue(window);
    } catch (ClassCastException e) {
      return null; // a window of another type than the map's: keyed by its namespace instead
    }
  }
}
