package dev.weir.runner.samza;

import dev.weir.runner.task.WeirTaskFactory;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.samza.config.Config;

/**
 * The JVM-wide registry through which Weir's Samza system factories find their job. samza-core
 * creates a {@code SystemFactory} by reflection and hands it only a {@link Config}; Weir's systems
 * read splits and in-process streams that exist as objects of the translating JVM, so the config
 * carries a job id ({@code systems.<system>.}{@value #JOB_ID_CONFIG}, written by
 * {@code WeirTaskApplication.describe}) and the factories resolve it here.
 *
 * <p>Honest scope: this only works when the Samza container runs in the JVM that translated the
 * job and bound it ({@code WeirTaskApplication.bindSystems()}), e.g. samza-core's
 * {@code LocalApplicationRunner} with one processor. A multi-process deployment (runner-samza's
 * SAMZA_STANDALONE) binds its job in every process, with systems that carry data across processes
 * (Kafka instead of the in-process streams) and a task factory that reads the job's one shared
 * split plan (runner-samza's {@code SourceSplitPlan}) instead of this JVM's own splits.
 *
 * <p>The embedded executor does not bind its jobs (it reads splits and streams directly), so
 * nothing is registered per job unless a caller binds it.
 *
 * <p>Threading: thread-safe; {@link #bind}, {@link Binding#close} and {@link #lookup} may be called
 * from any thread.
 */
@Internal
public final class WeirJobs {
  /** Key, under {@code systems.<system name>.}, of the job id a Weir system serves. */
  public static final String JOB_ID_CONFIG = "weir.job.id";

  private static final Map<String, Job> JOBS = new ConcurrentHashMap<>();

  private WeirJobs() {}

  /**
   * A bound job: its plan and the task factory that holds its splits and streams.
   *
   * @param id the job id written into the config
   * @param plan the translated job
   * @param tasks the job's task factory (source splits, in-process streams, clock, metrics)
   */
  public record Job(String id, JobPlan plan, WeirTaskFactory tasks) {
    /**
     * The source stage whose samza-api input stream is {@code streamName}.
     *
     * @throws IllegalArgumentException if the job has no such source stream
     */
    public StagePlan sourceStage(String streamName) {
      for (StagePlan stage : plan.stages()) {
        if (stage.source() != null && JobPlan.sourceStreamName(stage).equals(streamName)) {
          return stage;
        }
      }
      throw new IllegalArgumentException("job " + id + " has no source stream '" + streamName + "'; its source streams: "
          + sourcePartitionCounts().keySet());
    }

    /**
     * The in-process stream named {@code streamName}.
     *
     * @throws IllegalArgumentException if the job has no such stream
     */
    public StreamPlan stream(String streamName) {
      for (StreamPlan stream : plan.streams()) {
        if (stream.name().equals(streamName)) {
          return stream;
        }
      }
      throw new IllegalArgumentException("job " + id + " has no in-process stream '" + streamName + "'; its streams: "
          + streamPartitionCounts().keySet());
    }

    /** Partition count of every source stream (one per split), by stream name, in plan order. */
    public Map<String, Integer> sourcePartitionCounts() {
      Map<String, Integer> counts = new LinkedHashMap<>();
      for (StagePlan stage : plan.stages()) {
        if (stage.source() != null) {
          counts.put(JobPlan.sourceStreamName(stage), stage.partitions());
        }
      }
      return counts;
    }

    /** Partition count of every in-process stream, by stream name, in plan order. */
    public Map<String, Integer> streamPartitionCounts() {
      Map<String, Integer> counts = new LinkedHashMap<>();
      for (StreamPlan stream : plan.streams()) {
        counts.put(stream.name(), stream.partitions());
      }
      return counts;
    }
  }

  /** A registration; {@link #close} removes it. Idempotent. */
  public static final class Binding implements AutoCloseable {
    private final Job job;

    private Binding(Job job) {
      this.job = job;
    }

    /** The bound job. */
    public Job job() {
      return job;
    }

    @Override
    public void close() {
      JOBS.remove(job.id(), job);
    }
  }

  /**
   * Makes job {@code id} resolvable by the system factories until the binding is closed.
   *
   * @throws IllegalStateException if a job with this id is already bound
   */
  public static Binding bind(String id, JobPlan plan, WeirTaskFactory tasks) {
    Job job = new Job(id, plan, tasks);
    if (JOBS.putIfAbsent(id, job) != null) {
      throw new IllegalStateException("a Weir job with id " + id + " is already bound");
    }
    return new Binding(job);
  }

  /**
   * The job that system {@code systemName} serves according to {@code config}.
   *
   * @throws IllegalArgumentException if the config names no job for the system
   * @throws IllegalStateException if the named job is not bound in this JVM
   */
  public static Job lookup(String systemName, Config config) {
    String key = "systems." + systemName + "." + JOB_ID_CONFIG;
    String id = config.get(key);
    if (id == null || id.isEmpty()) {
      throw new IllegalArgumentException("the config has no " + key + ": Weir's systems are configured by "
          + "WeirTaskApplication.describe, which writes the job id there");
    }
    Job job = JOBS.get(id);
    if (job == null) {
      throw new IllegalStateException("no Weir job '" + id + "' is bound in this JVM (system " + systemName
          + "): Weir's Samza systems serve the JVM that translated the job, after WeirTaskApplication.bindSystems()");
    }
    return job;
  }
}
