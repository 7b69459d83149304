package dev.weir.runner.operators;

import dev.weir.runner.state.KeyGroups;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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
 * restored job of the same plan opens the same operator at the same node; one of another plan (an
 * upgraded pipeline) gets its parts moved to the node of the same PTransform name
 * ({@code task.RescaledTaskParts}), in the rescaled form below.
 *
 * <h2>Rescaled restores</h2>
 *
 * Restored at another number of partitions ({@code checkpoint.RescaledRestore}), a task gets the
 * parts of <em>every</em> instance of its operator in the checkpoint, each under
 * {@code <part>@<old partition>} ({@link #all}), and keeps what it now owns: the entries of keys
 * whose key group its partition owns ({@link #owns}), and unkeyed entries of the old partitions
 * that map to it ({@link #ownsUnkeyed}: old partition modulo the new partition count). Parts that
 * every instance holds alike (side-input contents) or that the restore rebuilt from the store
 * (watermark holds) come under their plain name ({@link #get}).
 *
 * <p>Threading: confined to the task's container thread.
 */
@Internal
public final class OperatorSnapshot {
  /** An operator with nothing restored (a fresh start). */
  public static final OperatorSnapshot EMPTY = new OperatorSnapshot(Map.of());

  /**
   * The task part (beside its nodes' parts) that marks a task restored at another number of
   * partitions than it was written at; its value is the old number (decimal, UTF-8).
   */
  public static final String RESCALED = "rescaled";

  /** Separates a part's name from the old partition it came from, in a rescaled restore. */
  public static final char FROM = '@';

  private final Map<String, byte[]> parts;
  /** The task's partition, and the stage's partitions, in a rescaled restore; else -1 and 0. */
  private final int partition;
  private final int partitions;
  /** The job's key groups, in a rescaled restore; else null. */
  private final KeyGroups keyGroups;

  /** A snapshot of {@code parts} (taken, not copied). */
  public OperatorSnapshot(Map<String, byte[]> parts) {
    this(parts, -1, 0, null);
  }

  /**
   * A rescaled restore's snapshot of {@code parts} (taken, not copied) for the task of
   * {@code partition} of {@code partitions}.
   */
  public static OperatorSnapshot rescaled(Map<String, byte[]> parts, int partition, int partitions,
      KeyGroups keyGroups) {
    return new OperatorSnapshot(parts, partition, partitions, keyGroups);
  }

  private OperatorSnapshot(Map<String, byte[]> parts, int partition, int partitions, KeyGroups keyGroups) {
    this.parts = parts;
    this.partition = partition;
    this.partitions = partitions;
    this.keyGroups = keyGroups;
  }

  /**
   * One instance's part.
   *
   * @param from the old partition it was written by in a rescaled restore; -1 otherwise
   * @param bytes the part
   */
  public record Part(int from, byte[] bytes) {}

  /**
   * Every instance's part {@code name}: the one part this instance wrote (or none), or in a
   * rescaled restore every old instance's, in old partition order. Filter their entries with
   * {@link #owns} and {@link #ownsUnkeyed}.
   */
  public List<Part> all(String name) {
    if (keyGroups == null) {
      byte[] own = parts.get(name);
      return own == null ? List.of() : List.of(new Part(-1, own));
    }
    TreeMap<Integer, byte[]> found = new TreeMap<>();
    String prefix = name + FROM;
    for (Map.Entry<String, byte[]> e : parts.entrySet()) {
      if (e.getKey().startsWith(prefix)) {
        found.put(Integer.parseInt(e.getKey().substring(prefix.length())), e.getValue());
      }
    }
    List<Part> result = new ArrayList<>(found.size());
    found.forEach((from, bytes) -> result.add(new Part(from, bytes)));
    return result;
  }

  /** Whether this instance owns the key encoded as {@code keyBytes}: always, unless rescaled. */
  public boolean owns(byte[] keyBytes) {
    return keyGroups == null || keyGroups.partitionOfKey(keyBytes, partitions) == partition;
  }

  /** Whether this instance takes the unkeyed entries of {@code part}: always, unless rescaled. */
  public boolean ownsUnkeyed(Part part) {
    return keyGroups == null || part.from() % partitions == partition;
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
