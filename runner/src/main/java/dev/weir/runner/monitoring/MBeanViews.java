package dev.weir.runner.monitoring;

import dev.weir.runner.checkpoint.CheckpointStats;
import dev.weir.runner.metrics.RunLoopMetrics;
import dev.weir.runner.task.ContainerCommit;
import dev.weir.runner.task.StageWatermarks;
import dev.weir.runner.task.TaskStats;
import dev.weir.state.cache.ObjectCacheStats;
import java.util.List;
import java.util.function.Supplier;

/**
 * The MBeans of a container, a stage and a task ({@link WeirMXBeans} names their attributes), each
 * a thin read of counters kept elsewhere: a {@link ContainerStatus}, a task's {@link TaskStats},
 * the job's {@link CheckpointStats}. A stage's values are its tasks' summed (events, bundles) or
 * their minimum (watermarks). Nothing here is cached: each attribute read is a fresh read.
 *
 * <p>Threading: any thread (JMX, the metrics log); no locks.
 */
final class MBeanViews {
  private MBeanViews() {}

  static final class ContainerView implements WeirMXBeans.ContainerMXBean {
    private static final ObjectCacheStats NO_CACHE = new ObjectCacheStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1);
    private final ContainerStatus container;
    private final Supplier<CheckpointStats> checkpoints;

    ContainerView(ContainerStatus container, Supplier<CheckpointStats> checkpoints) {
      this.container = container;
      this.checkpoints = checkpoints;
    }

    private RunLoopMetrics.Snapshot loop() {
      return container.runLoop();
    }

    private ObjectCacheStats cache() {
      ObjectCacheStats stats = container.cache();
      return stats == null ? NO_CACHE : stats;
    }

    private ContainerCommit.CommitStats commits() {
      return container.commits();
    }

    @Override
    public int getTasks() {
      return container.tasks().size();
    }

    @Override
    public long getIterations() {
      return loop().iterations();
    }

    @Override
    public double getUtilization() {
      return loop().utilization();
    }

    @Override
    public long getMailboxNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.MAILBOX);
    }

    @Override
    public long getDrainOutboxesNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.DRAIN_OUTBOXES);
    }

    @Override
    public long getFireTimersNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.FIRE_TIMERS);
    }

    @Override
    public long getProcessEnvelopesNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.PROCESS_ENVELOPES);
    }

    @Override
    public long getTickNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.TICK);
    }

    @Override
    public long getCommitPhaseNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.COMMIT);
    }

    @Override
    public long getIdleNs() {
      return loop().phaseNs(RunLoopMetrics.Phase.IDLE);
    }

    @Override
    public long getCommits() {
      return commits().commits();
    }

    @Override
    public long getCommitNs() {
      return commits().totalNs();
    }

    @Override
    public long getLastCommitNs() {
      return commits().lastNs();
    }

    @Override
    public long getCheckpoints() {
      return checkpoints.get().completed();
    }

    @Override
    public long getLastCheckpointNs() {
      return checkpoints.get().lastPauseNs();
    }

    @Override
    public long getCacheHits() {
      return cache().hits();
    }

    @Override
    public long getCacheMisses() {
      return cache().misses();
    }

    @Override
    public double getCacheHitRate() {
      return cache().hitRate();
    }

    @Override
    public long getCacheEvictions() {
      return cache().evictions();
    }

    @Override
    public long getCacheDirtyWriteBacks() {
      return cache().dirtyWriteBacks();
    }

    @Override
    public long getCacheEntries() {
      return cache().entries();
    }

    @Override
    public long getCacheEstimatedBytes() {
      return cache().estimatedBytes();
    }

    @Override
    public long getCacheDirtyEntries() {
      return cache().dirtyEntries();
    }

    @Override
    public long getCacheFlushes() {
      return cache().flushes();
    }

    @Override
    public long getCacheFlushNs() {
      return cache().flushNanos();
    }

    @Override
    public long getCacheBytesEncoded() {
      return cache().bytesEncoded();
    }

    @Override
    public long getCacheBytesDecoded() {
      return cache().bytesDecoded();
    }
  }

  record StageView(String name, List<TaskView> tasks) implements WeirMXBeans.StageMXBean {
    @Override
    public int getPartitions() {
      return tasks.size();
    }

    @Override
    public long getEventsIn() {
      return tasks.stream().mapToLong(TaskView::getEventsIn).sum();
    }

    @Override
    public long getEventsOut() {
      return tasks.stream().mapToLong(TaskView::getEventsOut).sum();
    }

    @Override
    public long getBundles() {
      return tasks.stream().mapToLong(TaskView::getBundles).sum();
    }

    @Override
    public double getMeanBundleSize() {
      long bundles = getBundles();
      return bundles == 0 ? 0 : (double) getEventsIn() / bundles;
    }

    @Override
    public long getMaxBundleSize() {
      return tasks.stream().mapToLong(TaskView::getMaxBundleSize).max().orElse(0);
    }

    @Override
    public long getInputWatermarkMs() {
      return tasks.stream().mapToLong(TaskView::getInputWatermarkMs).min().orElse(StageWatermarks.MIN_WATERMARK_MS);
    }

    @Override
    public long getOutputWatermarkMs() {
      return tasks.stream().mapToLong(TaskView::getOutputWatermarkMs).min().orElse(StageWatermarks.MIN_WATERMARK_MS);
    }
  }

  static final class TaskView implements WeirMXBeans.TaskMXBean {
    private final String name;
    private final TaskStats stats;
    private final int container;

    TaskView(ContainerStatus.TaskStatus task, int container) {
      this.name = task.name();
      this.stats = task.stats();
      this.container = container;
    }

    @Override
    public String getTaskName() {
      return name;
    }

    @Override
    public int getContainer() {
      return container;
    }

    @Override
    public long getEventsIn() {
      return stats.eventsIn();
    }

    @Override
    public long getEventsOut() {
      return stats.eventsOut();
    }

    @Override
    public long getBundles() {
      return stats.bundles();
    }

    @Override
    public long getLastBundleSize() {
      return stats.lastBundleSize();
    }

    @Override
    public long getMaxBundleSize() {
      return stats.maxBundleSize();
    }

    @Override
    public double getMeanBundleSize() {
      long bundles = getBundles();
      return bundles == 0 ? 0 : (double) getEventsIn() / bundles;
    }

    @Override
    public long getInputWatermarkMs() {
      return stats.inputWatermarkMs();
    }

    @Override
    public long getOutputWatermarkMs() {
      return stats.outputWatermarkMs();
    }
  }
}
