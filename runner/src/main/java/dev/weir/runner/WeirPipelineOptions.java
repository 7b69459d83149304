package dev.weir.runner;

import dev.weir.state.StateBackend;
import org.apache.beam.sdk.metrics.MetricsOptions;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.DefaultValueFactory;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.StreamingOptions;

/**
 * Options of {@link WeirRunner}: how many partitions and container threads a job gets, how
 * bundles are cut, where state lives, whether Beam metrics are collected, how a streaming job
 * checkpoints and restores, and where the translated job runs (embedded or on Apache Samza).
 * The user's guide to them: docs/running-your-pipeline.md and docs/fault-tolerance.md.
 *
 * <p>Every value is checked once, at {@code run()}, by {@link WeirSettings#from}: a value out of
 * range fails there with an {@link IllegalArgumentException} naming the option and what is
 * allowed. Translator and executor read the resulting {@link WeirSettings}, never these getters.
 *
 * <p>Beam's {@link MetricsOptions} are Weir's too ({@code --metricsSink}, {@code --metricsPushPeriod}
 * and the sinks' own options), as they are the Flink runner's: the job pushes its Beam metrics to
 * the sink ({@code monitoring.MetricsPush}).
 *
 * <p>Threading: an options proxy is read on the submitting thread, once, at {@code run()}.
 */
public interface WeirPipelineOptions extends PipelineOptions, StreamingOptions, MetricsOptions {

  @Description("Number of partitions of every shuffled stage (tasks per stage after a GroupByKey), at "
      + "least 1. Source stages get one partition per split the source returns when asked for this many "
      + "(some return more: Nexmark's generator returns one per event generator, 100 by default); on "
      + "the Samza execution environments a source that returns more splits than this is read by this many "
      + "partitions, each reading a group of splits in turn. Default: the number of available processors.")
  @Default.InstanceFactory(AvailableProcessors.class)
  int getParallelism();

  void setParallelism(int parallelism);

  @Description("Number of key groups that keyed state, timers and shuffles are addressed by: the largest "
      + "--parallelism a job can ever be restored at. Fixed for a job's life (a restore with another value "
      + "fails); from --parallelism to 32768. Weir keeps nothing per key group, so the maximum costs no more "
      + "than a small value. Default: 32768.")
  @Default.Integer(32768)
  int getMaxParallelism();

  void setMaxParallelism(int maxParallelism);

  @Description("Number of containers, i.e. run-loop threads that tasks are spread over, at least 1 "
      + "(never more than the job's tasks). "
      + "Default: the number of available processors.")
  @Default.InstanceFactory(AvailableProcessors.class)
  int getContainers();

  void setContainers(int containers);

  @Description("Maximum number of elements a task processes in one bundle before it calls "
      + "finishBundle (count of input elements), at least 1.")
  @Default.Integer(1000)
  int getMaxBundleSize();

  void setMaxBundleSize(int maxBundleSize);

  @Description("Maximum time in milliseconds a bundle stays open before it is finished, "
      + "measured on the run loop's clock; at least 1.")
  @Default.Long(1000L)
  long getMaxBundleTimeMs();

  void setMaxBundleTimeMs(long maxBundleTimeMs);

  @Description("Worker threads per container on which ParDos run @ProcessElement concurrently, for DoFns "
      + "that wait on a service (an HTTP call, a database lookup) per element; 0 to 10000. 0 (the default): every "
      + "ParDo runs on its container's thread, exactly as without this option. Above 0: the ParDos without side "
      + "inputs (or those named by --concurrentParDos) run up to --taskMaxConcurrency elements per task at a time "
      + "on these threads, each on its own DoFn instance; a stateful DoFn's elements and timers of one key run one "
      + "at a time, in order. Samza's job.container.thread.pool.size; "
      + "Beam's Samza runner calls it numThreadsForProcessElement. See docs/concurrency.md.")
  @Default.Integer(0)
  int getContainerThreadPoolSize();

  void setContainerThreadPoolSize(int containerThreadPoolSize);

  @Description("Elements one task may have in flight in each concurrent ParDo at a time (and DoFn instances it "
      + "keeps for them), 1 to 100000; only with --containerThreadPoolSize above 0. Samza's task.max.concurrency.")
  @Default.Integer(1)
  int getTaskMaxConcurrency();

  void setTaskMaxConcurrency(int taskMaxConcurrency);

  @Description("With --containerThreadPoolSize above 0, the ParDos that run concurrently: full transform names, "
      + "each also naming the transforms inside a composite of that name (e.g. Enrich covers Enrich/ParMultiDo(Lookup)). "
      + "Unset: every ParDo that may (not with side inputs, @RequiresTimeSortedInput, @RequiresStableInput, or a "
      + "splittable DoFn). A name that selects no ParDo that may fails the job at start.")
  java.util.List<String> getConcurrentParDos();

  void setConcurrentParDos(java.util.List<String> concurrentParDos);

  @Description("Where keyed state lives (the user state and timers of stateful DoFns, GroupByKey and "
      + "Combine accumulators, watermark holds): ROCKSDB (one RocksDB instance per container under "
      + "--stateDirectory, behind the object cache; a streaming job on it takes checkpoints) or MEMORY "
      + "(the Java heap; nothing survives the process). Accepted in any case (rocksdb, memory).")
  @Default.Enum("ROCKSDB")
  StateBackend getStateBackend();

  void setStateBackend(StateBackend stateBackend);

  @Description("Directory for RocksDB state. A streaming job keeps its state in the sub-directory "
      + "<jobName> (locked while the job runs; kept after a failure or cancel, deleted after a normal end); "
      + "a batch job gets a temporary sub-directory, deleted when it ends. With ROCKSDB it must be, or be "
      + "creatable as, a writable directory. Default: java.io.tmpdir/weir-state.")
  @Default.InstanceFactory(TempStateDirectory.class)
  String getStateDirectory();

  void setStateDirectory(String stateDirectory);

  @Description("Maximum number of decoded state values the object cache keeps per container "
      + "(entries), at least 1; see also --objectCacheBytes. Evicted dirty values are written back to the backend. "
      + "Larger is not faster: values that outlive a young collection cost the GC more than a RocksDB read "
      + "(runner/benchmarks/HISTORY.md, issue 14, item 8).")
  @Default.Long(10_000L)
  long getObjectCacheSize();

  void setObjectCacheSize(long objectCacheSize);

  @Description("Maximum estimated bytes of the decoded state values the object cache keeps per container, "
      + "at least 1; bounds the cache together with --objectCacheSize (whichever is reached first evicts). "
      + "An entry counts as its encoded size when it was last read from or written back to the backend "
      + "(never written back: its store's mean; a bag's chunk still filling: its elements' estimated "
      + "encoded size), plus its key and 128 bytes of bookkeeping, and at least "
      + "objectCacheBytes/objectCacheSize. Decoded objects usually take 2-4x their encoded size on the "
      + "heap; a bag's full chunks are held encoded, at their exact size, until they are read. "
      + "Default: 64 MiB (67108864).")
  @Default.Long(64L << 20)
  long getObjectCacheBytes();

  void setObjectCacheBytes(long objectCacheBytes);

  @Description("Which entries the object cache evicts when it is over --objectCacheSize or --objectCacheBytes. "
      + "LRU: the least recently read or written one (keeps the cells the next elements of a key touch, "
      + "including the new cells merging windows move a session to). W_TINY_LFU: Caffeine's admission by "
      + "recent frequency (keeps often-read cells; turns away new ones seen once). Default: LRU.")
  @Default.Enum("LRU")
  dev.weir.state.cache.ObjectCacheSettings.Eviction getObjectCacheEviction();

  void setObjectCacheEviction(dev.weir.state.cache.ObjectCacheSettings.Eviction objectCacheEviction);

  @Description("Whether a bag's full chunks (which a buffering GroupByKey or stateful DoFn will not change "
      + "again) are encoded off the container that filled them: by any container whose run loop found no "
      + "work, and by one thread per core beyond the job's containers (--containers), at most one per "
      + "container. At most 256 chunks per container wait as objects; beyond that the container encodes "
      + "them itself. False: always on the container's own thread.")
  @Default.Boolean(true)
  boolean getBackgroundSealing();

  void setBackgroundSealing(boolean backgroundSealing);

  @Description("Whether Beam metrics (counters, distributions, gauges) are collected per "
      + "PTransform. Off makes metrics() empty and disables PAssert's success-counter check.")
  @Default.Boolean(true)
  boolean getMetricsEnabled();

  void setMetricsEnabled(boolean metricsEnabled);

  @Description("Interval in milliseconds at which a running job logs a summary of its live metrics at INFO "
      + "(per container: run loop, commits, object cache; per stage: events, bundles, watermarks; per "
      + "PTransform: Beam user metrics), and once more when it ends; 0 (the default) turns the log off. "
      + "The same metrics are always readable over JMX (MBeans under dev.weir:type=...,job=<jobName>).")
  @Default.Long(0L)
  long getMetricsLogIntervalMs();

  void setMetricsLogIntervalMs(long metricsLogIntervalMs);

  @Description("Port of the job's monitoring HTTP server: /metrics for Prometheus (text and OpenMetrics "
      + "formats), / for the live job page (graph, events/s, watermarks, back-pressure, checkpoints, object "
      + "cache, run-loop phases) and /api/job for its data. Unset (the default): no server, nothing listens. "
      + "0: any free port (logged at start). Allowed: 0 to 65535. A port in use fails the job's start.")
  Integer getMetricsHttpPort();

  void setMetricsHttpPort(Integer metricsHttpPort);

  @Description("Address the monitoring HTTP server (--metricsHttpPort) binds: 127.0.0.1 (the default, "
      + "reachable from this machine only), a host name or address, or 0.0.0.0 for every interface.")
  @Default.String("127.0.0.1")
  String getMetricsHttpHost();

  void setMetricsHttpHost(String metricsHttpHost);

  @Description("Whether every element of every PCollection goes through its coder (encoded and "
      + "decoded) before its consumers see it, as Beam's Direct runner does (its enforceEncodability): "
      + "finds coders that cannot encode their values or lose fields, at the cost of a copy per element. "
      + "Off (the default), elements pass to their consumers by reference, except those of the "
      + "PCollections whose coder may change what a consumer sees (a SchemaCoder of Rows, a user coder, "
      + "a coder that drops fields): those always round-trip. See runner/ARCHITECTURE.md, 'The path of "
      + "one element', step 2.")
  // Not named enforceEncodability: Beam's DirectOptions owns that property with default true, and
  // Beam rejects one property declared with two defaults (the Direct runner is often on a test
  // classpath next to Weir).
  @Default.Boolean(false)
  boolean getWeirEnforceEncodability();

  void setWeirEnforceEncodability(boolean weirEnforceEncodability);

  @Description("Interval in milliseconds between two checkpoints of a streaming job on the RocksDB backend: "
      + "a consistent cut of every source position, state value, timer, watermark and side input, kept "
      + "under <stateDirectory>/<jobName>/checkpoints, from which a restarted job with the same --jobName "
      + "resumes. 0 turns checkpoints off. Beam's Flink runner calls the same option checkpointingInterval.")
  @Default.Long(10_000L)
  long getCheckpointingIntervalMs();

  void setCheckpointingIntervalMs(long checkpointingIntervalMs);

  @Description("A checkpoint or savepoint directory (…/checkpoints/chk-<id>, holding its checkpoint.json) "
      + "to start the streaming job from, whatever --jobName and --stateDirectory wrote it: the job resumes "
      + "there, at any --parallelism, and takes its own checkpoints under its own <stateDirectory>/<jobName>, "
      + "whose earlier checkpoints are deleted. Default: none (--restoreMode decides).")
  @Default.String("")
  String getRestoreFrom();

  void setRestoreFrom(String restoreFrom);

  @Description("Whether a restore may drop state the restored job cannot take: state of a PTransform the "
      + "pipeline no longer has (by full name), or of one whose key, state, window or accumulator coders changed. "
      + "false (the default): such a restore fails at start naming each transform; true: their state is dropped, "
      + "each named in a WARN line, and the rest restores. Flink calls the same option --allowNonRestoredState.")
  @Default.Boolean(false)
  boolean getAllowNonRestoredState();

  void setAllowNonRestoredState(boolean allowNonRestoredState);

  @Description("What a streaming job does with checkpoints left in <stateDirectory>/<jobName> by an earlier "
      + "run: LATEST (the default) resumes from the newest complete checkpoint (at any parallelism; "
      + "state matched to PTransforms by name, and the job fails at start naming any stateful PTransform it lacks "
      + "or whose coders changed, see --allowNonRestoredState); NONE deletes them and starts fresh.")
  @Default.Enum("LATEST")
  RestoreMode getRestoreMode();

  void setRestoreMode(RestoreMode restoreMode);

  @Description("How many complete checkpoints a streaming job keeps (the newest ones), at least 1.")
  @Default.Integer(3)
  int getRetainCheckpoints();

  void setRetainCheckpoints(int retainCheckpoints);

  /** Values of {@code --restoreMode}. */
  enum RestoreMode {
    /** Resume from the newest complete checkpoint, if there is one. */
    LATEST,
    /** Ignore (delete) checkpoints of an earlier run and start fresh. */
    NONE
  }

  @Description("Where the translated job runs: EMBEDDED (Weir's own executor in this JVM, the default), "
      + "SAMZA_LOCAL (Apache Samza's LocalApplicationRunner in this JVM, intermediate streams on Kafka topics) "
      + "or SAMZA_STANDALONE (several processes that all run the same main, on samza-core's passthrough "
      + "coordinator, each with its own processor.id, or on its ZooKeeper coordinator with "
      + "job.coordinator.zk.connect, which moves a dead process's tasks to the others). Both SAMZA_* values "
      + "need the artifact dev.weir:weir-runner-samza and a Kafka broker (see runner-samza/README.md). "
      + "Accepted in any case.")
  @Default.Enum("EMBEDDED")
  ExecutionEnvironment getExecutionEnvironment();

  void setExecutionEnvironment(ExecutionEnvironment executionEnvironment);

  @Description("A Java properties file of Samza config for a SAMZA_* execution environment (e.g. "
      + "weir.kafka.bootstrap.servers, task.commit.ms). Weir generates the job's systems, streams, serdes, "
      + "grouper and coordinator; a file that sets one of those keys is rejected. Not allowed with EMBEDDED. "
      + "Default: none.")
  @Default.String("")
  String getSamzaConfig();

  void setSamzaConfig(String samzaConfig);

  @Description("Samza config on top of --samzaConfig: comma-separated key=value pairs, e.g. "
      + "weir.kafka.bootstrap.servers=127.0.0.1:9092,task.commit.ms=1000. Same rules as --samzaConfig. "
      + "Default: none.")
  @Default.String("")
  String getSamzaConfigOverride();

  void setSamzaConfigOverride(String samzaConfigOverride);

  /** Default for counts that should follow the machine: the number of available processors. */
  class AvailableProcessors implements DefaultValueFactory<Integer> {
    @Override
    public Integer create(PipelineOptions options) {
      return Runtime.getRuntime().availableProcessors();
    }
  }

  /** Default state directory: {@code java.io.tmpdir/weir-state}. */
  class TempStateDirectory implements DefaultValueFactory<String> {
    @Override
    public String create(PipelineOptions options) {
      return System.getProperty("java.io.tmpdir") + "/weir-state";
    }
  }
}
