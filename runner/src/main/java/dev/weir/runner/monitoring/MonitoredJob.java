package dev.weir.runner.monitoring;

import dev.weir.runner.checkpoint.CheckpointStats;
import dev.weir.runner.metrics.StepMetrics;
import java.util.List;
import java.util.function.Supplier;

/**
 * What the monitoring HTTP server reads of one running job, handed once to {@link PrometheusMetrics}
 * and {@link JobPageData}: read-only views of counters the job keeps anyway.
 *
 * @param name the job's name (unique in the JVM)
 * @param stateBackend the {@code --stateBackend} value, e.g. {@code rocksdb}
 * @param startTimeMs when the job started, epoch ms
 * @param containers its containers, in container order
 * @param stages its stages' views, in plan order, each with its tasks
 * @param streams its streams between stages, in plan order
 * @param metrics its Beam metrics and elements in/out per PTransform
 * @param metricsEnabled whether Beam metrics are collected ({@code --metricsEnabled})
 * @param checkpoints its checkpoint statistics, any thread
 */
record MonitoredJob(String name, String stateBackend, long startTimeMs, List<? extends ContainerStatus> containers,
    List<MBeanViews.StageView> stages, List<? extends StreamStatus> streams, StepMetrics metrics,
    boolean metricsEnabled, Supplier<CheckpointStats> checkpoints) {}
