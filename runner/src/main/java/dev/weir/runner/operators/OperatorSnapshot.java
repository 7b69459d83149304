package dev.weir.runner.operators;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.beam.sdk.annotations.Internal;

/**
 * The parts of one operator instance's state that live on the heap rather than in the
 * container's store (processing-time timers, side-input contents), as named byte arrays: written
 * by {@link Operator#snapshot} into a checkpoint, and handed back to the operator when it opens
 * on a restored checkpoint ({@link OperatorContext#restored()}). Keyed state, event-time timers
 * and watermark holds are in the store and need no part here.
 *
 * <p>A part's format is its operator's business; the checkpoint stores the bytes under the task,
 * the node and the part name, so an operator reads back exactly what its own instance wrote. A
 * restored job has the same plan as the one that wrote the checkpoint (the checkpoint's plan
 * fingerprint is checked at start), so the same operator opens at the same node.
 *
 * <p>Threading: confined to the task's container thread.
 */
@Internal
public final class OperatorSnapshot {
  /** An operator with nothing restored (a fresh start). */
  public static final OperatorSnapshot EMPTY = new OperatorSnapshot(Map.of());

  private final Map<String, byte[]> parts;

  /** A snapshot of {@code parts} (taken, not copied). */
  public OperatorSnapshot(Map<String, byte[]> parts) {
    this.parts = parts;
  }

  /** An empty snapshot to write into. */
  public static OperatorSnapshot writable() {
    return new OperatorSnapshot(new LinkedHashMap<>());
  }

  /**
   * Stores {@code bytes} under {@code name}; a null {@code bytes} stores nothing.
   *
   * @throws UnsupportedOperationException on a restored (read-only) snapshot
   */
  public void put(String name, byte[] bytes) {
    if (bytes != null) {
      parts.put(name, bytes);
    }
  }

  /** The bytes stored under {@code name}, or null. */
  public byte[] get(String name) {
    return parts.get(name);
  }

  /** Every part, by name (read-only view). */
  public Map<String, byte[]> parts() {
    return Collections.unmodifiableMap(parts);
  }
}
