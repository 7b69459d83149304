package dev.weir.runner.checkpoint;

import dev.weir.runner.state.CellLayout;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.state.KeyGroups;
import dev.weir.runner.state.WatermarkHolds;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.StagePlan;
import dev.weir.state.StateBackend;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StateStorage;
import dev.weir.state.store.StoreIterator;
import dev.weir.state.store.rocksdb.RocksDbSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.samza.storage.kv.Entry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Restores a checkpoint into a job that runs on another number of containers, or at another
 * {@code --parallelism} (keyed stages with another number of partitions), than the job that wrote
 * it: every stored entry is read from the checkpoint's container stores and written into the store
 * of the container that now runs the task owning it, and the tasks' heap parts are dealt out anew.
 *
 * <h2>Why entries can be routed</h2>
 *
 * A container's store holds the state of the tasks assigned to it. Since state format 3
 * ({@link CellLayout}) every key names what it belongs to without the container: a state cell, a
 * timer slot and a timer index key start with the id of their PTransform, then hold the encoded
 * key. The PTransform names the stage (each PTransform is in one stage), the key's
 * {@linkplain KeyGroups key group} (a hash of its bytes) names the stage's partition
 * ({@link KeyGroups#partitionOf}), and the partition names the task and its container (tasks in
 * plan order, dealt out round-robin: {@code dev.weir.runner.executor.JobExecutor}). A timer index
 * key also carries the task's partition, re-derived here from its key.
 *
 * <h2>Heap parts</h2>
 *
 * The tasks' parts in the commit metadata (watermarks, source positions, metrics, operators'
 * snapshots) are dealt out by the task layer ({@link TaskParts}), which knows their formats; this
 * class hands it the watermark holds of keyed state, rebuilt from the stores' hold cells (their own
 * cell kind, {@link CellLayout#holdOfCell}) per new task.
 *
 * <p>The same routing with equal counts reproduces the checkpoint's stores; it is used only when
 * the counts differ, because a checkpoint's stores are otherwise restored as files
 * (hard links, {@link CheckpointStore}).
 *
 * <h2>Cost</h2>
 *
 * One full read of the checkpoint (each old container's files are linked into a scratch directory
 * and opened read-only by RocksDB there, so the checkpoint itself is never written) and one write of
 * every entry, without a write-ahead log; memory is RocksDB's write buffers. Seconds per GB on an
 * SSD; a restore at the same size runs in milliseconds instead.
 *
 * <p>Source: Flink's key-group-based rescaling (state of a key group moves whole to the subtask
 * owning it; FLIP-8's design), done here by re-addressing store entries rather than by key-group
 * ranges of files.
 *
 * <p>Threading: runs once, on the thread that starts the job, before any container does.
 * Errors: an entry of another format, or of a PTransform the job does not have, fails the restore
 * naming it ({@link IllegalStateException}); I/O failures name the path.
 */
@Internal
public final class RescaledRestore {
  private static final Logger LOG = LoggerFactory.getLogger(RescaledRestore.class);

  private final KeyGroups keyGroups;
  private final int containers;
  /** Stage index by the int id of each of its PTransforms' key spaces. */
  private final Map<Integer, Integer> stageOfOperator = new HashMap<>();
  /** Per stage index: its partitions. */
  private final int[] partitions;
  /** Per stage index: the plan-order index of its partition 0's task. */
  private final int[] firstTask;
  /** Per stage index, the node index of each PTransform's state id: where its holds part goes. */
  private final List<Map<Integer, Integer>> nodeOfStateId = new ArrayList<>();
  /** Watermark holds of keyed state, rebuilt from hold cells: by (stage, partition, node). */
  private final Map<List<Integer>, WatermarkHolds> holds = new HashMap<>();
  private final TaskParts taskParts;
  private final JobPlan plan;
  private final boolean allowNonRestoredState;
  /** The checkpoint's plan matched to the job's, for the restore under way. */
  private PlanUpgrade upgrade;
  /** Entries dropped (--allowNonRestoredState), by the PTransform they belonged to. */
  private final Map<String, Long> droppedEntries = new java.util.TreeMap<>();

  /**
   * Deals a checkpoint's task parts (commit metadata {@code task/<task>/...}) out to the tasks of
   * the restored job; implemented by the task layer, which knows the parts' formats
   * ({@code task.RescaledTaskParts}).
   */
  @FunctionalInterface
  public interface TaskParts {
    /**
     * @param committed every old container's commit metadata, merged
     * @param upgrade the checkpoint's plan matched to the job's by PTransform name
     * @param holds the watermark holds of keyed state, rebuilt from the stores' hold cells, by
     *     (stage index, new partition, node index)
     * @param containerOf the container that runs a (stage index, partition)'s task
     * @param metadata per new container, the metadata it commits: filled in here
     * @return the stages restored at another number of partitions, as {@code name old -> new}
     * @throws IllegalStateException naming the checkpoint's part that cannot be dealt out
     */
    List<String> route(Map<String, byte[]> committed, PlanUpgrade upgrade, Map<List<Integer>, WatermarkHolds> holds,
        java.util.function.IntBinaryOperator containerOf, List<Map<String, byte[]>> metadata);
  }

  /**
   * @param plan the starting job's plan
   * @param containers the starting job's containers
   * @param keyGroups the job's key groups (equal to the checkpoint's: the fingerprint says so)
   * @param taskParts deals the tasks' heap parts out
   * @param allowNonRestoredState drop the state of PTransforms the job does not have, or whose
   *     state schema changed, instead of failing ({@link PlanUpgrade})
   * @throws IllegalStateException if two PTransforms of the plan have the same state id
   */
  RescaledRestore(JobPlan plan, int containers, KeyGroups keyGroups, TaskParts taskParts,
      boolean allowNonRestoredState) {
    this.plan = plan;
    this.allowNonRestoredState = allowNonRestoredState;
    this.keyGroups = keyGroups;
    this.containers = containers;
    this.taskParts = taskParts;
    List<StagePlan> stages = plan.stages();
    this.partitions = new int[stages.size()];
    this.firstTask = new int[stages.size()];
    Map<Integer, String> names = new HashMap<>();
    int task = 0;
    for (int s = 0; s < stages.size(); s++) {
      StagePlan stage = stages.get(s);
      partitions[s] = stage.partitions();
      firstTask[s] = task;
      task += stage.partitions();
      nodeOfStateId.add(new HashMap<>());
      for (NodeSpec node : stage.nodes()) {
        for (String space : CellLayout.OPERATOR_SPACES) {
          stageOfOperator.put(CellLayout.claimOperatorId(names, node.stepName(), space), s);
        }
        nodeOfStateId.get(s).put(CellLayout.operatorIdValue(node.stepName(), "state"), node.index());
      }
    }
  }

  /**
   * Writes checkpoint {@code checkpoint}'s state, taken by {@code oldContainers} containers, into
   * fresh stores in {@code working(c)} for each of the job's containers, committed with each
   * container's tasks' metadata. The checkpoint's plan {@code written} may differ from the job's in
   * more than parallelism: state is matched to PTransforms by name ({@link PlanUpgrade}), which
   * is checked before anything is written.
   *
   * @param copy links or copies container {@code i}'s part of the checkpoint into a directory
   *     (so that RocksDB may open it without changing the checkpoint)
   * @param scratch a directory for those copies, deleted at the end
   * @throws IllegalStateException naming the PTransforms whose state has no place in the job (unless
   *     {@code --allowNonRestoredState}), or the entry's store and checkpoint if an entry cannot be routed
   * @throws UncheckedIOException naming the path on I/O failures
   */
  void restore(Path checkpoint, PlanFingerprint written, int oldContainers, CopyPart copy, Path scratch,
      IntFunction<Path> working) {
    long t0 = System.nanoTime();
    upgrade = new PlanUpgrade(written.shape(), plan, allowNonRestoredState);
    upgrade.check(checkpoint);
    droppedEntries.clear();
    List<StateStorage> targets = new ArrayList<>(containers);
    List<Map<String, byte[]>> metadata = new ArrayList<>(containers);
    List<String> rescaledStages = List.of();
    Map<String, byte[]> oldMetadata = new LinkedHashMap<>();
    long entries = 0;
    try {
      for (int c = 0; c < containers; c++) {
        Path to = working.apply(c);
        CheckpointStore.deleteTree(to);
        Files.createDirectories(to);
        targets.add(StateBackend.ROCKSDB.open(to,
            RocksDbSettings.defaults().withWriteAheadLog(false).withStagedWrites(false)));
        metadata.add(new LinkedHashMap<>());
      }
      for (int old = 0; old < oldContainers; old++) {
        Path part = scratch.resolve("container-" + old);
        copy.copy(old, part);
        try (StateStorage source = StateBackend.ROCKSDB.open(part,
            RocksDbSettings.defaults().withWriteAheadLog(false).withStagedWrites(false))) {
          entries += routeStore(source, ContainerState.STORE, targets, checkpoint, false);
          entries += routeStore(source, ContainerState.TIMER_STORE, targets, checkpoint, true);
          oldMetadata.putAll(source.committedMetadata());
        }
        CheckpointStore.deleteTree(part);
      }
      rescaledStages = taskParts.route(oldMetadata, upgrade, holds,
          (stage, partition) -> (firstTask[stage] + partition) % containers, metadata);
      for (int c = 0; c < containers; c++) {
        targets.get(c).commit(metadata.get(c));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot restore checkpoint " + checkpoint + " into " + containers
          + " containers (" + e + ")", e);
    } finally {
      for (StateStorage target : targets) {
        target.close();
      }
      try {
        CheckpointStore.deleteTree(scratch);
      } catch (IOException e) {
        LOG.warn("Cannot delete the scratch directory {} of a rescaled restore", scratch, e);
      }
    }
    LOG.info("Restored checkpoint {} of {} container(s) into {} container(s){}: {} entries re-addressed in {} ms",
        checkpoint, oldContainers, containers,
        rescaledStages.isEmpty() ? "" : ", partitions " + String.join(", ", rescaledStages), entries,
        (System.nanoTime() - t0) / 1_000_000);
    if (!upgrade.summary().isEmpty()) {
      LOG.info("Checkpoint {} restored into an upgraded pipeline, state matched by PTransform name: {}", checkpoint,
          upgrade.summary());
    }
    upgrade.dropped().forEach((transform, why) -> LOG.warn("Dropped the state of PTransform '{}' ({} store "
        + "entries; --allowNonRestoredState=true): {}", transform, droppedEntries.getOrDefault(transform, 0L), why));
    droppedEntries.forEach((transform, n) -> {
      if (!upgrade.drops(transform)) {
        LOG.warn("Dropped {} store entries of PTransform '{}', which the job does not have "
            + "(--allowNonRestoredState=true)", n, transform);
      }
    });
  }

  /** Links or copies one old container's part of the checkpoint into a directory. */
  @FunctionalInterface
  interface CopyPart {
    void copy(int oldContainer, Path into) throws IOException;
  }

  private long routeStore(StateStorage source, String name, List<StateStorage> targets, Path checkpoint,
      boolean timerIndex) {
    if (!source.storeNames().contains(name)) {
      return 0;
    }
    SortedByteStore from = source.store(name);
    List<SortedByteStore> to = new ArrayList<>(targets.size());
    for (StateStorage target : targets) {
      to.add(target.store(name));
    }
    long n = 0;
    try (StoreIterator<byte[], byte[]> it = from.all()) {
      while (it.hasNext()) {
        Entry<byte[], byte[]> e = it.next();
        byte[] key = e.getKey();
        if (CellLayout.formatOf(key) != CellLayout.FORMAT_VERSION) {
          throw new IllegalStateException("Cannot rescale checkpoint " + checkpoint + ": store " + name
              + " holds a key of state format " + CellLayout.formatOf(key) + ", not " + CellLayout.FORMAT_VERSION);
        }
        int operator = timerIndex ? CellLayout.operatorOfTimerIndexKey(key) : CellLayout.operatorOfCell(key);
        if (dropped(operator)) {
          continue;
        }
        int stage = stageOf(operator, name, checkpoint);
        int partition;
        if (timerIndex) {
          byte[] keyBytes = CellLayout.decodeTimerIndexKey(key, CellLayout.TIMER_INDEX_PREFIX_BYTES).keyBytes();
          partition = keyGroups.partitionOfKey(keyBytes, partitions[stage]);
          if (CellLayout.partitionOfTimerIndexKey(key) != partition) {
            key = CellLayout.withTimerIndexPartition(key, partition);
          }
        } else {
          partition = keyGroups.partitionOfKey(CellLayout.keyBytesOfCell(key), partitions[stage]);
          long hold = CellLayout.holdOfCell(key, e.getValue());
          Integer node = nodeOfStateId.get(stage).get(operator);
          if (hold != Long.MIN_VALUE && node != null) {
            holds.computeIfAbsent(List.of(stage, partition, node), k -> new WatermarkHolds())
                .replace(null, new org.joda.time.Instant(hold));
          }
        }
        to.get((firstTask[stage] + partition) % containers).put(key, e.getValue());
        n++;
      }
    }
    return n;
  }

  /**
   * Whether an entry of {@code operator}'s key spaces is dropped: its PTransform's state is dropped
   * ({@link PlanUpgrade#drops}), or the job lacks it and {@code --allowNonRestoredState} is on.
   */
  private boolean dropped(int operator) {
    String name = upgrade.oldOperatorName(operator);
    boolean drop = name != null && upgrade.drops(name)
        || allowNonRestoredState && !stageOfOperator.containsKey(operator);
    if (drop) {
      droppedEntries.merge(name != null ? CellLayout.stateIdentity(name) : "id " + Integer.toHexString(operator), 1L,
          Long::sum);
    }
    return drop;
  }

  private int stageOf(int operator, String store, Path checkpoint) {
    Integer stage = stageOfOperator.get(operator);
    if (stage == null) {
      String name = upgrade.oldOperatorName(operator);
      throw new IllegalStateException("Cannot restore checkpoint " + checkpoint + ": store " + store
          + " holds state of " + (name != null ? "PTransform '" + name + "'" : "a PTransform (id "
          + Integer.toHexString(operator) + ")") + ", which the job does not have. Start with "
          + "--allowNonRestoredState=true to drop that state and restore the rest, or with --restoreMode=NONE to "
          + "discard every checkpoint and start fresh");
    }
    return stage;
  }
}
