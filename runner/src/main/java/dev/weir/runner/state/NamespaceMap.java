package dev.weir.runner.state;

import java.util.Arrays;
import java.util.HashMap;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
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
 * array; any other namespace falls back to a map keyed by the namespace. Windows are kept in a
 * small open-addressing table that hashes an {@link IntervalWindow} (and its subclasses) by its
 * bounds, so that windows whose own {@code hashCode} boxes (Nexmark's auction-or-bid window calls
 * {@code Objects.hash}: 6% of Q4's bytes) are found without allocating; equality is still the
 * window's {@code equals}, so a subclass with more fields only shares a probe sequence.
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
  private final WindowTable windows = new WindowTable();
  /** Per window: values by trigger index (null where absent). */
  private final WindowTable triggers = new WindowTable();
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
    Object window = windowOf(namespace);
    if (window == null) {
      return namespace instanceof StateNamespaces.GlobalNamespace ? global : others.get(namespace);
    }
    if (namespace instanceof StateNamespaces.WindowNamespace<?>) {
      return (V) windows.get(window);
    }
    Object[] byIndex = (Object[]) triggers.get(window);
    int index = ((StateNamespaces.WindowAndTriggerNamespace<?>) namespace).getTriggerIndex();
    return byIndex != null && index < byIndex.length ? (V) byIndex[index] : null;
  }

  /** Sets the value of {@code namespace}. */
  @SuppressWarnings("unchecked")
  public void put(StateNamespace namespace, V value) {
    if (value == null) {
      throw new NullPointerException("null value for " + namespace);
    }
    Object window = windowOf(namespace);
    V previous;
    if (window == null) {
      if (namespace instanceof StateNamespaces.GlobalNamespace) {
        previous = global;
        global = value;
      } else {
        previous = others.put(namespace, value);
      }
    } else if (namespace instanceof StateNamespaces.WindowNamespace<?>) {
      previous = (V) windows.put(window, value);
    } else {
      int index = ((StateNamespaces.WindowAndTriggerNamespace<?>) namespace).getTriggerIndex();
      Object[] byIndex = (Object[]) triggers.get(window);
      if (byIndex == null || index >= byIndex.length) {
        byIndex = byIndex == null ? new Object[Math.max(4, index + 1)] : Arrays.copyOf(byIndex, index + 1);
        triggers.put(window, byIndex);
      }
      previous = (V) byIndex[index];
      byIndex[index] = value;
    }
    if (previous == null) {
      size++;
    }
  }

  /** Removes the value of {@code namespace}, if any. */
  public void remove(StateNamespace namespace) {
    Object window = windowOf(namespace);
    Object removed;
    if (window == null) {
      if (namespace instanceof StateNamespaces.GlobalNamespace) {
        removed = global;
        global = null;
      } else {
        removed = others.remove(namespace);
      }
    } else if (namespace instanceof StateNamespaces.WindowNamespace<?>) {
      removed = windows.remove(window);
    } else {
      Object[] byIndex = (Object[]) triggers.get(window);
      int index = ((StateNamespaces.WindowAndTriggerNamespace<?>) namespace).getTriggerIndex();
      removed = byIndex != null && index < byIndex.length ? byIndex[index] : null;
      if (removed != null) {
        byIndex[index] = null;
      }
    }
    if (removed != null) {
      size--;
    }
  }

  /**
   * The key a window or window-and-trigger namespace is found by (see {@link #structural}), or
   * null for any other namespace and for windows kept by their namespace instead.
   */
  private Object windowOf(StateNamespace namespace) {
    if (namespace instanceof StateNamespaces.WindowNamespace<?> w) {
      return structural(w.getWindow());
    }
    if (namespace instanceof StateNamespaces.WindowAndTriggerNamespace<?> t) {
      return structural(t.getWindow());
    }
    return null;
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

  /**
   * Window to value, open addressing with linear probing (deletion by backward shift), at most
   * half full. Keys are compared with {@code equals}; an {@link IntervalWindow} hashes by its
   * bounds without allocating, anything else by its {@code hashCode}.
   */
  private static final class WindowTable {
    private static final int INITIAL_CAPACITY = 16;
    private static final Object[] NONE = new Object[1];
    /** Allocated at the first put: most keys' state never sees a window of some kind. */
    private Object[] keys = NONE;
    private Object[] values = NONE;
    private int size;

    static int hash(Object key) {
      int h;
      if (key instanceof IntervalWindow w) {
        h = Long.hashCode(w.start().getMillis() * 0x9E3779B97F4A7C15L + w.end().getMillis());
      } else {
        h = key.hashCode();
      }
      return h ^ (h >>> 16);
    }

    Object get(Object key) {
      int mask = keys.length - 1;
      for (int i = hash(key) & mask; ; i = (i + 1) & mask) {
        Object k = keys[i];
        if (k == null) {
          return null;
        }
        if (k == key || k.equals(key)) {
          return values[i];
        }
      }
    }

    /** Sets the value of {@code key}; returns the previous one or null. */
    Object put(Object key, Object value) {
      if (keys == NONE) {
        keys = new Object[INITIAL_CAPACITY];
        values = new Object[INITIAL_CAPACITY];
      }
      int mask = keys.length - 1;
      int i = hash(key) & mask;
      for (; keys[i] != null; i = (i + 1) & mask) {
        if (keys[i] == key || keys[i].equals(key)) {
          Object previous = values[i];
          values[i] = value;
          return previous;
        }
      }
      keys[i] = key;
      values[i] = value;
      if (++size * 2 > keys.length) {
        resize(keys.length * 2);
      }
      return null;
    }

    /** Removes {@code key}; returns its value or null. */
    Object remove(Object key) {
      int mask = keys.length - 1;
      int i = hash(key) & mask;
      while (keys[i] != null && keys[i] != key && !keys[i].equals(key)) {
        i = (i + 1) & mask;
      }
      if (keys[i] == null) {
        return null;
      }
      Object removed = values[i];
      // backward shift: move later entries of the probe run into the gap where their probe allows
      int gap = i;
      for (int j = (gap + 1) & mask; keys[j] != null; j = (j + 1) & mask) {
        int home = hash(keys[j]) & mask;
        // the entry at j may move to the gap unless its home lies cyclically in (gap, j]
        boolean homeAfterGap = gap <= j ? gap < home && home <= j : gap < home || home <= j;
        if (!homeAfterGap) {
          keys[gap] = keys[j];
          values[gap] = values[j];
          gap = j;
        }
      }
      keys[gap] = null;
      values[gap] = null;
      size--;
      return removed;
    }

    void clear() {
      if (keys.length > 4 * INITIAL_CAPACITY) {
        keys = NONE;
        values = NONE;
      } else if (size > 0) {
        Arrays.fill(keys, null);
        Arrays.fill(values, null);
      }
      size = 0;
    }

    private void resize(int capacity) {
      Object[] oldKeys = keys;
      Object[] oldValues = values;
      keys = new Object[capacity];
      values = new Object[capacity];
      int mask = capacity - 1;
      for (int n = 0; n < oldKeys.length; n++) {
        if (oldKeys[n] != null) {
          int i = hash(oldKeys[n]) & mask;
          while (keys[i] != null) {
            i = (i + 1) & mask;
          }
          keys[i] = oldKeys[n];
          values[i] = oldValues[n];
        }
      }
    }
  }
}
