package dev.weir.runner.sideinput;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.core.InMemoryMultimapSideInputView;
import org.apache.beam.runners.core.ReadyCheckingSideInputReader;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.transforms.Materializations;
import org.apache.beam.sdk.transforms.ViewFn;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.transforms.windowing.Trigger;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowingStrategy;

/**
 * The side inputs of one ParDo task: the contents of every view per window, as broadcast to this
 * task, and each view's side-input watermark.
 *
 * <p><b>Readiness.</b> The view of window {@code w} is ready once the view's side-input watermark
 * (the minimum over the producers of the broadcast stream) has passed {@code w.maxTimestamp()}:
 * then every element of that window has arrived (late data excepted). A window with no data at
 * all is ready the same way and reads as the ViewFn of an empty view (e.g. a singleton's default).
 *
 * <p><b>Triggered views</b> ({@link #isTriggered}: the view's PCollection has a non-default
 * trigger) follow Beam's rule that a main input sees "the value from the latest trigger firing",
 * as on the Direct runner: the translator groups such a view into panes by one GroupByKey, so each
 * broadcast element is a whole pane ({@code KV<Void, Iterable<T>>}); a pane replaces the window's
 * contents if its index is higher than that of the pane held, and the window is ready as soon as
 * it holds a pane (or, with none, once the watermark guarantees the trigger would have fired:
 * {@code Trigger#getWatermarkThatGuaranteesFiring}, the window's end for a watermark trigger, the
 * end of input for {@code Never.ever()} or a count trigger, as on Beam's Direct runner).
 *
 * <p><b>Materialisation.</b> {@link #get} applies the view's {@link ViewFn} once per (view,
 * window) and caches the result; new data for that window drops the cached value, so the next
 * read rebuilds it. A main-input element therefore pays a hash lookup per side-input read,
 * whatever the size of the view (Beam's {@code SideInputHandler} rebuilt a map side input on every
 * read, which made Nexmark's side-input join slow on Beam's Samza runner).
 *
 * <p><b>Memory.</b> The contents are kept on the heap, by reference (the in-process broadcast
 * hands every consumer task the same element objects). Windows are not garbage-collected yet. A
 * checkpoint encodes them ({@link #snapshot()}): the broadcast that filled them is not replayed
 * after a restore.
 *
 * <p>Threading: confined to the owning task's container thread.
 */
@Internal
public final class SideInputs implements ReadyCheckingSideInputReader {
  private static final Object NULL_VIEW = new Object();

  /** What is known about one view. */
  private static final class View {
    final PCollectionView<?> view;
    final boolean multimap;
    /** Whether elements are whole panes that replace a window's contents. */
    final boolean triggered;
    /** Triggered views: per window, the index of the pane held. */
    final Map<BoundedWindow, Long> paneIndex;
    /** Triggered views: the view's trigger (when its firing is guaranteed, see isReady). */
    final Trigger trigger;
    final Coder<?> keyCoder;
    final Map<BoundedWindow, List<Object>> contents = new HashMap<>();
    final Map<BoundedWindow, Object> materialized = new HashMap<>();
    long watermarkMs = BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis();

    View(PCollectionView<?> view) {
      this.view = view;
      String urn = view.getViewFn().getMaterialization().getUrn();
      this.multimap = Materializations.MULTIMAP_MATERIALIZATION_URN.equals(urn);
      if (!multimap && !Materializations.ITERABLE_MATERIALIZATION_URN.equals(urn)) {
        throw new UnsupportedOperationException("side input materialization " + urn + " is not supported");
      }
      Coder<?> coder = view.getPCollection().getCoder();
      this.keyCoder = multimap ? ((KvCoder<?, ?>) coder).getKeyCoder() : null;
      this.triggered = isTriggered(view.getPCollection().getWindowingStrategy());
      this.paneIndex = triggered ? new HashMap<>() : null;
      this.trigger = triggered ? view.getPCollection().getWindowingStrategy().getTrigger() : null;
    }
  }

  private final View[] views;

  /** @param views the ParDo's side inputs, in the order of their broadcast streams */
  public SideInputs(List<PCollectionView<?>> views) {
    this.views = new View[views.size()];
    for (int i = 0; i < this.views.length; i++) {
      this.views[i] = new View(views.get(i));
    }
  }

  /** The views, in index order. */
  public List<PCollectionView<?>> views() {
    List<PCollectionView<?>> result = new ArrayList<>(views.length);
    for (View v : views) {
      result.add(v.view);
    }
    return result;
  }

  /**
   * Whether a view over a PCollection with {@code windowing} is a triggered side input: its
   * trigger is not the default one, so the view of a window may change with each firing. The
   * translator and this class must agree on it (the translator groups such views into panes).
   */
  public static boolean isTriggered(WindowingStrategy<?, ?> windowing) {
    return !(windowing.getTrigger() instanceof DefaultTrigger);
  }

  /**
   * Adds one broadcast element of view {@code index} to each of its windows; for a triggered
   * view the element is a pane ({@code KV<Void, Iterable<T>>}) that replaces the window's
   * contents unless a later pane is already held.
   *
   * @return whether this may have made a window of the view ready (a triggered view took a pane),
   *     so that pushed-back main-input elements are worth retrying
   */
  @SuppressWarnings("unchecked")
  public boolean add(int index, WindowedValue<?> element) {
    View v = views[index];
    if (v.triggered) {
      long pane = element.getPaneInfo().getIndex();
      Iterable<Object> values = ((KV<Void, Iterable<Object>>) element.getValue()).getValue();
      boolean replaced = false;
      for (BoundedWindow window : element.getWindows()) {
        Long held = v.paneIndex.get(window);
        if (held != null && held >= pane) {
          continue; // an older (or the same) firing: the latest one wins
        }
        List<Object> contents = new ArrayList<>();
        values.forEach(contents::add);
        v.contents.put(window, contents);
        v.paneIndex.put(window, pane);
        v.materialized.remove(window);
        replaced = true;
      }
      return replaced;
    }
    for (BoundedWindow window : element.getWindows()) {
      v.contents.computeIfAbsent(window, w -> new ArrayList<>()).add(element.getValue());
      v.materialized.remove(window);
    }
    return false;
  }

  /**
   * Advances the side-input watermark of view {@code index}.
   *
   * @return whether it advanced (so that pushed-back elements may now be ready)
   */
  public boolean advanceWatermark(int index, long watermarkMs) {
    View v = views[index];
    if (watermarkMs <= v.watermarkMs) {
      return false;
    }
    v.watermarkMs = watermarkMs;
    return true;
  }

  private View find(PCollectionView<?> view) {
    for (View v : views) { // few views: a scan beats hashing the tag
      if (v.view == view) {
        return v;
      }
    }
    for (View v : views) {
      if (v.view.getTagInternal().equals(view.getTagInternal())) {
        return v;
      }
    }
    throw new IllegalArgumentException("unknown side input " + view);
  }

  /**
   * Every view's contents and side-input watermark as bytes for a checkpoint: per view its
   * watermark, then per window the window (the view's window coder), the index of the pane held
   * (triggered views; else -1) and the elements (the view's PCollection coder, nullable).
   *
   * @throws IllegalStateException naming the view if an element or window cannot be encoded
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public byte[] snapshot() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    for (View v : views) {
      try {
        Coder window = v.view.getPCollection().getWindowingStrategy().getWindowFn().windowCoder();
        Coder element = NullableCoder.of(v.view.getPCollection().getCoder());
        out.writeLong(v.watermarkMs);
        out.writeInt(v.contents.size());
        for (Map.Entry<BoundedWindow, List<Object>> e : v.contents.entrySet()) {
          window.encode(e.getKey(), out);
          Long pane = v.triggered ? v.paneIndex.get(e.getKey()) : null;
          out.writeLong(pane == null ? -1 : pane);
          out.writeInt(e.getValue().size());
          for (Object value : e.getValue()) {
            element.encode(value, out);
          }
        }
      } catch (IOException | RuntimeException e) {
        throw new IllegalStateException("cannot write side input " + v.view.getTagInternal().getId()
            + " into a checkpoint (" + e + ")", e);
      }
    }
    return bytes.toByteArray();
  }

  /**
   * Replaces every view's contents and watermark with those of a {@link #snapshot()} written by
   * the same ParDo.
   *
   * @throws IllegalStateException naming the view if the bytes cannot be decoded
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public void restore(byte[] snapshot) {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(snapshot));
    for (View v : views) {
      try {
        Coder window = v.view.getPCollection().getWindowingStrategy().getWindowFn().windowCoder();
        Coder element = NullableCoder.of(v.view.getPCollection().getCoder());
        v.contents.clear();
        v.materialized.clear();
        v.watermarkMs = in.readLong();
        int windows = in.readInt();
        for (int w = 0; w < windows; w++) {
          BoundedWindow key = (BoundedWindow) window.decode(in);
          long pane = in.readLong();
          int n = in.readInt();
          List<Object> contents = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            contents.add(element.decode(in));
          }
          v.contents.put(key, contents);
          if (v.triggered && pane >= 0) {
            v.paneIndex.put(key, pane);
          }
        }
      } catch (IOException | RuntimeException e) {
        throw new IllegalStateException("cannot restore side input " + v.view.getTagInternal().getId()
            + " from the checkpoint (" + e + ")", e);
      }
    }
  }

  @Override
  public boolean isReady(PCollectionView<?> view, BoundedWindow window) {
    View v = find(view);
    if (!v.triggered) {
      return v.watermarkMs > window.maxTimestamp().getMillis();
    }
    // A triggered view's window without a pane is ready (as empty) only once the watermark
    // guarantees its trigger would have fired (Beam's Trigger#getWatermarkThatGuaranteesFiring,
    // what Beam's Direct runner waits for): for Never.ever(), as in Wait.on's signal view, that is
    // the end of input, not the end of the window: its one pane comes at garbage-collection time
    // and may hold late signals.
    return v.paneIndex.containsKey(window) || v.watermarkMs >= BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis()
        || v.watermarkMs > v.trigger.getWatermarkThatGuaranteesFiring(window).getMillis();
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public <T> T get(PCollectionView<T> view, BoundedWindow window) {
    View v = find(view);
    Object cached = v.materialized.get(window);
    if (cached == null) {
      List<Object> contents = v.contents.getOrDefault(window, List.of());
      ViewFn fn = view.getViewFn();
      Object value;
      if (v.multimap) {
        List<KV<Object, Object>> kvs = (List) contents;
        value = fn.apply(InMemoryMultimapSideInputView.fromIterable((Coder) v.keyCoder, kvs));
      } else {
        value = fn.apply((Materializations.IterableView<Object>) () -> contents);
      }
      cached = value == null ? NULL_VIEW : value;
      v.materialized.put(window, cached);
    }
    return cached == NULL_VIEW ? null : (T) cached;
  }

  @Override
  public <T> boolean contains(PCollectionView<T> view) {
    for (View v : views) {
      if (v.view == view || v.view.getTagInternal().equals(view.getTagInternal())) {
        return true;
      }
    }
    return false;
  }

  @Override
  public boolean isEmpty() {
    return views.length == 0;
  }
}
