package dev.weir.runner.monitoring;


import org.apache.beam.sdk.annotations.Internal;

/**
 * The JMX face of a running Weir job: the MXBean interfaces its MBeans implement and the scheme of
 * their {@code ObjectName}s. One MBean per metric group, as Samza's {@code JmxReporter} registers
 * one per metrics group; all on the JDK's platform MBean server, registered when the job starts
 * and unregistered when its last container exits (end, failure or cancel). Nothing listens on a
 * network socket: a local {@code jconsole} or {@code jcmd <pid> VM.*} attaches to the process;
 * remote JMX needs the JDK's own {@code -Dcom.sun.management.jmxremote.port} set by the user.
 *
 * <p>Names ({@code <job>} is {@code --jobName}, made unique in the JVM with a {@code -2},
 * {@code -3}, ... suffix if another running job has it; values with JMX-special characters are
 * quoted by {@link javax.management.ObjectName#quote}):
 *
 * <ul>
 *   <li>{@code dev.weir:type=Job,job=<job>}: the plan, backend, start time ({@link JobMXBean});
 *   <li>{@code dev.weir:type=Container,job=<job>,container=<n>}: one per run-loop thread: phase
 *       times and utilization, commits, object-cache counters ({@link ContainerMXBean});
 *   <li>{@code dev.weir:type=Stage,job=<job>,stage=stage-<n>}: events and watermarks over the
 *       stage's tasks ({@link StageMXBean});
 *   <li>{@code dev.weir:type=Task,job=<job>,stage=stage-<n>,partition=<p>}: one per task
 *       ({@link TaskMXBean});
 *   <li>{@code dev.weir:type=Transform,job=<job>,transform=<quoted full name>}: one PTransform's
 *       elements in and out ({@code ElementsIn}, {@code ElementsOut}) and its Beam user metrics,
 *       one attribute per metric (a dynamic MBean, see {@code TransformMetricsMBean}); only with
 *       {@code --metricsEnabled}.
 * </ul>
 *
 * <p>Reading is cheap and never blocks the run loop: every attribute is read from counters the
 * container threads publish with opaque writes (see {@link dev.weir.runner.task.TaskStats}, {@link dev.weir.runner.metrics.RunLoopMetrics},
 * {@code ObjectCache.stats()}), so values of one MBean may come from adjacent iterations.
 * Watermarks are epoch milliseconds; Beam's minimum timestamp ({@code -9223372036854775}) means
 * "no watermark yet", its maximum ({@code 9223372036854775}) "end of input".
 */
@Internal
public final class WeirMXBeans {
  /** The JMX domain of every Weir MBean. */
  public static final String DOMAIN = "dev.weir";

  private WeirMXBeans() {}

  /** The job as a whole. */
  public interface JobMXBean {
    /**
     * Operation: stops the job with a savepoint (a checkpoint taken now, after which the job ends;
     * started again under the same name it resumes there), waiting up to {@code timeoutMs} ms.
     *
     * @return the savepoint's directory
     * @throws Exception if the job takes no checkpoints, ended first, or no checkpoint completed in
     *     time (the stop stays requested)
     */
    String stopWithSavepoint(long timeoutMs) throws Exception;

    /**
     * Operation: drains the job (its sources end, every window and timer fires, then it ends);
     * returns at once.
     */
    void drain();

    /** Checkpoints completed (0 for a job without checkpoints: batch, --checkpointingIntervalMs=0, memory backend). */
    long getCheckpointsCompleted();

    /** Checkpoint attempts given up because the job did not become quiescent in time. */
    long getCheckpointsSkipped();

    /** The id of the newest complete checkpoint (also one restored at start), 0 if none. */
    long getLastCheckpointId();

    /** The last checkpoint's pause, ms: sources paused until it completed. */
    long getLastCheckpointPauseMs();

    /** The longest checkpoint pause so far, ms. */
    long getMaxCheckpointPauseMs();

    /** Bytes of the last checkpoint's files (RocksDB checkpoints, hard-linked files counted in full). */
    long getLastCheckpointBytes();

    /** The job's name as registered in the MBean names (--jobName, maybe with a suffix). */
    String getJobName();

    /** Stages of the plan. */
    int getStages();

    /** Tasks over all stages (the sum of their partitions). */
    int getTasks();

    /** Container threads. */
    int getContainers();

    /** The state backend, as --stateBackend takes it. */
    String getStateBackend();

    /** The base state directory (RocksDB: each job under its own job-* sub-directory). */
    String getStateDirectory();

    /** When the job started, epoch ms. */
    long getStartTimeMs();

    /** The plan, one line per stage, node and stream. */
    String getPlan();
  }

  /** One container: its run loop, its commits and its object cache. */
  public interface ContainerMXBean {
    /** Tasks the container runs. */
    int getTasks();

    /** Run-loop iterations completed. */
    long getIterations();

    /** Busy time over busy plus idle time of the run loop so far, 0 to 1. */
    double getUtilization();

    /** Cumulative ns running letters other threads handed the loop (elements completed on worker threads). */
    long getMailboxNs();

    /** Cumulative ns moving blocked tasks' output downstream. */
    long getDrainOutboxesNs();

    /** Cumulative ns firing slices of ready timers. */
    long getFireTimersNs();

    /** Cumulative ns polling and processing input envelopes. */
    long getProcessEnvelopesNs();

    /** Cumulative ns in periodic ticks (timed-out bundles, processing-time timers). */
    long getTickNs();

    /** Cumulative ns at the commit point of each iteration (state, metrics, finalizers). */
    long getCommitPhaseNs();

    /** Cumulative ns idling (spin, yield, park) after iterations without work. */
    long getIdleNs();

    /**
     * State commits (object-cache flush plus atomic storage commit) at commit points; 0 in a job
     * that takes checkpoints, whose state is committed by its checkpoints ({@link #getCheckpoints()}).
     */
    long getCommits();

    /** Cumulative ns in state commits. */
    long getCommitNs();

    /** The last state commit's duration, ns. */
    long getLastCommitNs();

    /** Checkpoints of the job completed so far (every container takes part in each); 0 without checkpoints. */
    long getCheckpoints();

    /** The pause of the last completed checkpoint (drain, commit, RocksDB checkpoint, manifest), ns. */
    long getLastCheckpointNs();

    /** Object-cache reads answered without decoding. */
    long getCacheHits();

    /** Object-cache reads that went to the byte store. */
    long getCacheMisses();

    /** Hits over hits plus misses, 0 to 1 (0 before any read). */
    double getCacheHitRate();

    /** Entries the object cache evicted for its size bound. */
    long getCacheEvictions();

    /** Evicted entries that were dirty and so were written back first. */
    long getCacheDirtyWriteBacks();

    /** Entries in the object cache now (estimate). */
    long getCacheEntries();

    /**
     * The object cache's byte estimate now (encoded sizes plus a fixed overhead per entry, see
     * {@code --objectCacheBytes}), in bytes.
     */
    long getCacheEstimatedBytes();

    /** Dirty entries waiting for the next commit (the write-back backlog). */
    long getCacheDirtyEntries();

    /** Object-cache flushes (each commit flushes). */
    long getCacheFlushes();

    /** Cumulative ns in object-cache flushes, encoding included. */
    long getCacheFlushNs();

    /** Bytes produced by encoding state values. */
    long getCacheBytesEncoded();

    /** Bytes consumed by decoding state values. */
    long getCacheBytesDecoded();
  }

  /** One stage: sums and minimums over its tasks. */
  public interface StageMXBean {
    /** Partitions (tasks) of the stage. */
    int getPartitions();

    /** Input elements of the tasks' finished bundles. */
    long getEventsIn();

    /** Elements the tasks sent downstream (0 for a stage with no downstream stage). */
    long getEventsOut();

    /** Finished bundles holding input elements. */
    long getBundles();

    /** Events in per bundle, on average (0 before the first bundle). */
    double getMeanBundleSize();

    /** The largest bundle of any task, in input elements. */
    long getMaxBundleSize();

    /** The minimum input watermark over the tasks, epoch ms. */
    long getInputWatermarkMs();

    /** The minimum output watermark over the tasks, epoch ms. */
    long getOutputWatermarkMs();
  }

  /** One task: one partition of one stage. */
  public interface TaskMXBean {
    /** The task's name, e.g. stage-1-p0. */
    String getTaskName();

    /** The container running the task. */
    int getContainer();

    /** Input elements of finished bundles (an open bundle counts when it finishes). */
    long getEventsIn();

    /** Elements sent downstream (a broadcast element counts once). */
    long getEventsOut();

    /** Finished bundles holding input elements. */
    long getBundles();

    /** Input elements of the last finished bundle. */
    long getLastBundleSize();

    /** The largest finished bundle, in input elements. */
    long getMaxBundleSize();

    /** Events in per bundle, on average (0 before the first bundle). */
    double getMeanBundleSize();

    /** The task's input watermark, epoch ms. */
    long getInputWatermarkMs();

    /** The watermark the task last sent downstream (a task of a sink stage: its nodes' minimum output), epoch ms. */
    long getOutputWatermarkMs();
  }
}
