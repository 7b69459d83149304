package dev.weir.runner.state;

import java.nio.charset.StandardCharsets;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;

/**
 * The encoded names of recently used state namespaces: the UTF-8 bytes of runners-core's
 * {@link StateNamespace#stringKey()}, which {@link CellLayout} puts into every cell and timer key.
 *
 * <p>Why: a window namespace's {@code stringKey()} encodes its window with the window coder and
 * base64 on every call. Every key of a windowed operator names the same few windows (fixed and
 * sliding windows are shared by all keys), so one table per operator, found by window
 * ({@link NamespaceMap}), turns that into one encoding per window instead of one per key and
 * window: on Nexmark Q5 (sliding windows over thousands of keys) the per-key encodings were 4.4%
 * of the bytes the job allocated. Windows that belong to one key only (sessions) gain nothing and
 * lose nothing but the lookup.
 *
 * <p>Bound: cleared when it reaches {@value #MAX_NAMESPACES} namespaces, so a job with many
 * live windows keeps at most that many arrays (a few tens of bytes each) per operator.
 *
 * <p>Threading: not thread-safe; confined to the task thread of the operator that owns it, like
 * the state whose keys it names.
 */
@Internal
public final class NamespaceNames {
  static final int MAX_NAMESPACES = 1024;

  private final NamespaceMap<byte[]> names;

  /**
   * @param windowCoder the coder of the operator's windows, by which window namespaces are found;
   *     null to find every namespace by itself
   */
  public NamespaceNames(Coder<? extends BoundedWindow> windowCoder) {
    this.names = new NamespaceMap<>(windowCoder);
  }

  /**
   * UTF-8 of {@code namespace.stringKey()}. The array is shared: callers copy it into keys and
   * never modify it.
   */
  public byte[] utf8(StateNamespace namespace) {
    byte[] bytes = names.get(namespace);
    if (bytes == null) {
      if (names.size() >= MAX_NAMESPACES) {
        names.clear();
      }
      bytes = namespace.stringKey().getBytes(StandardCharsets.UTF_8);
      names.put(namespace, bytes);
    }
    return bytes;
  }
}
