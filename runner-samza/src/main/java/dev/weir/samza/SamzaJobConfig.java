package dev.weir.samza;

import dev.weir.runner.ExecutionEnvironment;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.application.WeirTaskApplication;
import dev.weir.runner.samza.WeirJobs;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import dev.weir.state.StateBackend;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The Samza config Weir generates for one run of a translated job on samza-core, on top of the
 * user's ({@code --samzaConfig}, {@code --samzaConfigOverride}, which may not set these keys; see
 * {@code SamzaUserConfig}): job name, passthrough coordinator with one processor, Weir's grouping
 * of input partitions into tasks ({@link WeirStreamGrouperFactory}), the tick interval, and the
 * two systems: the job's Beam sources ({@value WeirTaskApplication#SOURCE_SYSTEM}, served in this
 * JVM) and Weir's Kafka system ({@value #KAFKA_SYSTEM}) for the intermediate streams, one topic per
 * stream, named {@code <prefix>.<job>.<run>.<stream>} so that two runs never share a topic.
 *
 * <p>User keys read here: {@value #USER_BOOTSTRAP_SERVERS} (required), {@value #USER_TIMEOUT_MS}
 * (Kafka client time-out, ms, default 30000), {@value #USER_TOPIC_PREFIX} (default {@code weir}),
 * {@value #USER_REPLICATION} (default 1), {@value #USER_DELETE_TOPICS} (delete the run's topics when
 * a job ends normally, default true), Kafka client settings under {@value #USER_CLIENT_PREFIX},
 * {@value #USER_WATERMARK_INTERVAL_MS} (ms between two watermarks a task sends to one output
 * partition, default {@value #DEFAULT_WATERMARK_INTERVAL_MS}, 1 or more),
 * {@value #USER_PROCESSING_GUARANTEE} ({@code exactly_once}, the default where it is possible:
 * SAMZA_STANDALONE with Samza stores and Weir's Kafka checkpoint manager; else
 * {@code at_least_once}; asking for exactly-once where it is not possible fails naming why), and
 * {@value SourceSplitPlan#PLAN_FILE_CONFIG} (a source split plan file; without it a SAMZA_STANDALONE
 * job keeps its plan on the topic {@code <prefix>-<job>-<job.id>-plan}, see {@link SourceSplitPlan}).
 *
 * <p>SAMZA_STANDALONE with {@value #ZK_CONNECT}: samza-core's ZooKeeper coordinator ({@value
 * #ZK_COORDINATOR}) in place of the passthrough one, its coordinator stream on Weir's Kafka system
 * ({@code job.coordinator.system}, Weir's), samza-core's {@value #ZK_TASK_GROUPER} (tasks over the
 * live processors, any number), a processor id per process start unless the user sets {@code
 * processor.id} or {@code app.processor-id-generator.class}, and {@value #ZK_CONNECTION_TIMEOUT_MS}
 * {@value #DEFAULT_ZK_CONNECTION_TIMEOUT_MS} ms unless set; {@code job.container.count} is rejected
 * there, and {@value #ZK_CONNECT} with SAMZA_LOCAL.
 *
 * <p>Threading: immutable once built.
 */
final class SamzaJobConfig {
  /** samza-api system name of Weir's Kafka streams. */
  static final String KAFKA_SYSTEM = "weir-kafka";
  /** User key: Kafka's bootstrap servers. */
  static final String USER_BOOTSTRAP_SERVERS = "weir.kafka.bootstrap.servers";
  /** User key: Kafka client time-out in ms. */
  static final String USER_TIMEOUT_MS = "weir.kafka.timeout.ms";
  /** User key prefix: Kafka client settings (producer, consumer, admin). */
  static final String USER_CLIENT_PREFIX = "weir.kafka.client.";
  /** User key: the first part of every topic name. */
  static final String USER_TOPIC_PREFIX = "weir.kafka.topic.prefix";
  /** User key: replication factor of the topics Weir creates. */
  static final String USER_REPLICATION = "weir.kafka.replication.factor";
  /** User key: whether a normally ended job deletes its topics. */
  static final String USER_DELETE_TOPICS = "weir.kafka.delete.topics";
  /** samza-core's key: how long a commit may be skipped while the task's previous one is written, ms. */
  static final String COMMIT_MAX_DELAY_MS = "task.commit.max.delay.ms";
  /** User key: the processing guarantee, {@code exactly_once} or {@code at_least_once}. */
  static final String USER_PROCESSING_GUARANTEE = "weir.processing.guarantee";
  /**
   * Default commit interval with exactly-once, ms: a task's output reaches the next stage only when
   * its transaction commits, so the interval is also each stage's added latency (Kafka Streams
   * commits every 100 ms under exactly-once; a Weir commit also flushes the object cache).
   */
  static final long DEFAULT_EXACTLY_ONCE_COMMIT_MS = 1_000L;
  /** User key: the least time between two watermarks a task sends to one output partition, ms. */
  static final String USER_WATERMARK_INTERVAL_MS = "weir.watermark.interval.ms";
  /** Default of {@value #USER_WATERMARK_INTERVAL_MS}, ms. */
  static final long DEFAULT_WATERMARK_INTERVAL_MS = 100;
  /** Largest {@value #USER_WATERMARK_INTERVAL_MS}, ms: the throttle counts in ns, a long. */
  static final long MAX_WATERMARK_INTERVAL_MS = Long.MAX_VALUE / 1_000_000L;
  /** Config prefix of Weir's grouping: physical stream name to the stage that reads it. */
  static final String GROUPER_PREFIX = "weir.grouper.stage-of.";
  private static final String FILE_CHECKPOINTS = "org.apache.samza.checkpoint.file.FileSystemCheckpointManagerFactory";
  /** User key: ZooKeeper's connect string; with it SAMZA_STANDALONE runs samza-core's ZooKeeper coordinator. */
  static final String ZK_CONNECT = "job.coordinator.zk.connect";
  /** samza-core's ZooKeeper connection time-out key, ms; Weir's default {@value #DEFAULT_ZK_CONNECTION_TIMEOUT_MS}. */
  static final String ZK_CONNECTION_TIMEOUT_MS = "job.coordinator.zk.connection.timeout.ms";
  /** Weir's default of {@value #ZK_CONNECTION_TIMEOUT_MS}, ms (samza-core's is 60000): an unreachable ZooKeeper fails the start sooner. */
  static final long DEFAULT_ZK_CONNECTION_TIMEOUT_MS = 30_000L;
  /** samza-core's ZooKeeper job coordinator. */
  static final String ZK_COORDINATOR = "org.apache.samza.zk.ZkJobCoordinatorFactory";
  /** samza-core's grouper of tasks over the processors the ZooKeeper leader sees alive (any count). */
  static final String ZK_TASK_GROUPER = "org.apache.samza.container.grouper.task.GroupByContainerIdsFactory";
  /** The Samza store of every task's Weir state. */
  static final String STATE_STORE = "weir-state";
  /** Samza's default commit interval, ms; the tasks' own commit interval unless the user sets task.commit.ms. */
  static final long DEFAULT_COMMIT_MS = 60_000L;
  /**
   * Milliseconds between two ticks of a task (bundle time-outs, processing-time timers), through
   * samza-core's callback scheduler ({@link SamzaStageTaskFactory}); samza-core's own windowing
   * ({@code task.window.ms}) is off.
   */
  static final int TICK_MS = 10;

  private final String jobName;
  private final String runId;
  private final Map<String, String> topics = new LinkedHashMap<>();
  private final Map<String, String> config;
  private final short replication;
  private final boolean deleteTopics;
  private final java.nio.file.Path runDirectory;
  private final boolean standalone;
  private final boolean samzaStores;
  private final long commitMs;
  private final long watermarkIntervalMs;
  private final String checkpointDirectory;
  private final String changelogTopic;
  private final String planTopic;
  private final String planFile;
  private final String checkpointTopic;
  private final String zookeeper;
  private final String processorId;
  private final boolean exactlyOnce;
  private final String guaranteeReason;
  private final String transactionalIdPrefix;

  /**
   * @param jobId the id under which the job's sources are bound in this JVM ({@link WeirJobs})
   * @throws IllegalArgumentException naming the key if the user config lacks the Kafka address or
   *     a value is out of range
   */
  SamzaJobConfig(JobPlan plan, WeirSettings settings, String jobId) {
    Map<String, String> user = settings.samzaConfig();
    this.jobName = sanitize(settings.pipelineOptions().getJobName());
    this.standalone = settings.executionEnvironment() == ExecutionEnvironment.SAMZA_STANDALONE;
    this.samzaStores = settings.stateBackend() == StateBackend.ROCKSDB;
    this.runId = standalone ? sanitize(user.getOrDefault("job.id", "1")) : UUID.randomUUID().toString().substring(0, 8);
    long containers = 1;
    long processor = 0;
    String zk = user.get(ZK_CONNECT);
    this.zookeeper = zk == null || zk.isBlank() ? null : zk.trim();
    if (zookeeper != null && !standalone) {
      throw new IllegalArgumentException(ZK_CONNECT + "=" + zookeeper + " makes no sense with --executionEnvironment="
          + settings.executionEnvironment() + " (one process, samza-core's passthrough coordinator); ZooKeeper "
          + "coordination needs --executionEnvironment=SAMZA_STANDALONE");
    }
    if (user.containsKey("job.coordinator.system")) {
      throw new IllegalArgumentException("job.coordinator.system is Weir's to set (with " + ZK_CONNECT
          + ", the coordinator stream is on Weir's Kafka system " + KAFKA_SYSTEM + "); remove it from --samzaConfig "
          + "and --samzaConfigOverride");
    }
    String zkProcessor = null;
    if (zookeeper != null) {
      if (user.containsKey("job.container.count")) {
        throw new IllegalArgumentException("job.container.count=" + user.get("job.container.count") + " makes no sense "
            + "with " + ZK_CONNECT + " (samza-core's ZooKeeper coordinator spreads the tasks over the processes that "
            + "are alive, whatever their number); remove it");
      }
      String given = user.get("processor.id");
      if (given != null && !given.isBlank()) {
        zkProcessor = given.trim();
      } else if (!user.containsKey("app.processor-id-generator.class")) {
        // unique per process start: a restarted process is a new member (its old ZooKeeper session may linger)
        zkProcessor = hostName() + "-" + ProcessHandle.current().pid() + "-"
            + UUID.randomUUID().toString().substring(0, 4);
      }
    } else if (standalone) {
      String where = " (--executionEnvironment=SAMZA_STANDALONE: every process runs the same main with its own "
          + "processor.id, 0 .. job.container.count - 1, in --samzaConfig or --samzaConfigOverride; or "
          + ZK_CONNECT + " for samza-core's ZooKeeper coordinator, which needs neither)";
      if (!user.containsKey("processor.id") || !user.containsKey("job.container.count")) {
        throw new IllegalArgumentException("missing " + java.util.stream.Stream.of("processor.id", "job.container.count")
            .filter(k -> !user.containsKey(k)).collect(java.util.stream.Collectors.joining(" and ")) + where);
      }
      containers = positive(user, "job.container.count", "1", 10_000);
      processor = nonNegative(user, "processor.id");
      if (processor >= containers) {
        throw new IllegalArgumentException("processor.id=" + processor + " is out of range; allowed: 0 to "
            + (containers - 1) + " (job.container.count=" + containers + ")" + where);
      }
    }
    this.watermarkIntervalMs = positive(user, USER_WATERMARK_INTERVAL_MS, Long.toString(DEFAULT_WATERMARK_INTERVAL_MS),
        MAX_WATERMARK_INTERVAL_MS);
    String servers = user.get(USER_BOOTSTRAP_SERVERS);
    if (servers == null || servers.isBlank()) {
      throw new IllegalArgumentException("--executionEnvironment=" + settings.executionEnvironment() + " needs "
          + USER_BOOTSTRAP_SERVERS + " (the Kafka brokers that carry the job's intermediate streams) in --samzaConfig "
          + "or --samzaConfigOverride");
    }
    this.replication = (short) positive(user, USER_REPLICATION, "1", Short.MAX_VALUE);
    long timeoutMs = positive(user, USER_TIMEOUT_MS, Long.toString(KafkaSettings.DEFAULT_TIMEOUT_MS), Long.MAX_VALUE);
    this.deleteTopics = !"false".equalsIgnoreCase(user.getOrDefault(USER_DELETE_TOPICS, "true").trim());
    String prefix = sanitize(user.getOrDefault(USER_TOPIC_PREFIX, "weir"));
    this.runDirectory = settings.stateDirectory().resolve("samza-" + jobName + "-" + runId).toAbsolutePath();
    for (StreamPlan stream : plan.streams()) {
      topics.put(stream.name(), prefix + "." + jobName + "." + runId + "." + stream.name());
    }
    // the job's source split plan: a file the user names, else (several processes) a topic of the job
    String file = user.get(SourceSplitPlan.PLAN_FILE_CONFIG);
    this.planFile = file == null || file.isBlank() ? null : file.trim();
    this.planTopic = standalone && planFile == null ? prefix + "-" + jobName + "-" + runId + "-plan" : null;
    Map<String, String> c = new TreeMap<>(user);
    c.put("job.name", jobName);
    c.put("job.id", runId);
    if (zookeeper != null) {
      c.put("job.coordinator.factory", ZK_COORDINATOR);
      c.put(ZK_CONNECT, zookeeper);
      c.putIfAbsent(ZK_CONNECTION_TIMEOUT_MS, Long.toString(DEFAULT_ZK_CONNECTION_TIMEOUT_MS));
      // samza-core's ZooKeeper coordinator keeps its job model versions and the changelog
      // partition mapping on a coordinator stream: a topic on Weir's Kafka system
      c.put("job.coordinator.system", KAFKA_SYSTEM);
      if (zkProcessor != null) {
        c.put("processor.id", zkProcessor);
      }
      c.put("task.name.grouper.factory", ZK_TASK_GROUPER);
    } else {
      c.put("job.coordinator.factory", "org.apache.samza.standalone.PassthroughJobCoordinatorFactory");
      c.put("processor.id", Long.toString(processor));
    }
    this.processorId = c.get("processor.id");
    if (standalone) {
      if (zookeeper == null) {
        c.put("job.container.count", Long.toString(containers));
        c.put("task.name.grouper.factory", "org.apache.samza.container.grouper.task.GroupByContainerCountFactory");
      }
      c.putIfAbsent("task.checkpoint.factory", WeirKafkaCheckpointManagerFactory.class.getName());
      c.put(WeirKafkaCheckpointManagerFactory.TOPIC_CONFIG, prefix + "-" + jobName + "-" + runId + "-checkpoints");
      if (FILE_CHECKPOINTS.equals(c.get("task.checkpoint.factory"))) {
        c.putIfAbsent("task.checkpoint.path", runDirectory.resolve("checkpoints").toString());
      }
    } else {
      c.put("task.name.grouper.factory", "org.apache.samza.container.grouper.task.SingleContainerGrouperFactory");
    }
    this.checkpointTopic = WeirKafkaCheckpointManagerFactory.class.getName().equals(c.get("task.checkpoint.factory"))
        ? c.get(WeirKafkaCheckpointManagerFactory.TOPIC_CONFIG) : null;
    this.checkpointDirectory = FILE_CHECKPOINTS.equals(c.get("task.checkpoint.factory"))
        ? c.get("task.checkpoint.path") : null;
    String whyNot = !standalone ? "SAMZA_LOCAL takes no checkpoints (one process, nothing to restart)"
        : !samzaStores ? "--stateBackend=memory loses the tasks' state with their process"
        : checkpointTopic == null ? "task.checkpoint.factory=" + c.get("task.checkpoint.factory") + " is not Weir's "
            + "Kafka checkpoint manager, whose checkpoints commit in the tasks' Kafka transactions"
        : null;
    String guarantee = user.get(USER_PROCESSING_GUARANTEE);
    if (guarantee == null || guarantee.isBlank()) {
      this.exactlyOnce = whyNot == null;
      this.guaranteeReason = whyNot == null ? "the default with SAMZA_STANDALONE, Samza stores and Weir's checkpoints"
          : "exactly_once is not possible here: " + whyNot;
    } else if ("exactly_once".equalsIgnoreCase(guarantee.trim())) {
      if (whyNot != null) {
        throw new IllegalArgumentException(USER_PROCESSING_GUARANTEE + "=" + guarantee.trim() + " is not possible "
            + "here: " + whyNot + "; remove it or set " + USER_PROCESSING_GUARANTEE + "=at_least_once");
      }
      this.exactlyOnce = true;
      this.guaranteeReason = USER_PROCESSING_GUARANTEE + "=exactly_once";
    } else if ("at_least_once".equalsIgnoreCase(guarantee.trim())) {
      this.exactlyOnce = false;
      this.guaranteeReason = USER_PROCESSING_GUARANTEE + "=at_least_once";
    } else {
      throw new IllegalArgumentException(USER_PROCESSING_GUARANTEE + "=" + guarantee.trim() + " is not a processing "
          + "guarantee; allowed: exactly_once, at_least_once");
    }
    this.commitMs = positive(user, "task.commit.ms",
        Long.toString(exactlyOnce ? DEFAULT_EXACTLY_ONCE_COMMIT_MS : DEFAULT_COMMIT_MS), Long.MAX_VALUE);
    if (checkpointDirectory != null
        || WeirKafkaCheckpointManagerFactory.class.getName().equals(c.get("task.checkpoint.factory"))) {
      c.putIfAbsent("task.checkpoint.write.versions", "1"); // both managers write version 1 only
    }
    if (samzaStores) {
      String store = "stores." + STATE_STORE + ".";
      c.put(store + "factory", "org.apache.samza.storage.kv.RocksDbKeyValueStorageEngineFactory");
      c.put(store + "key.serde", "weir-bytes");
      c.put(store + "msg.serde", "weir-bytes");
      // No samza-kv CachedStore: Weir's object cache sits above the store, and CachedStore keys its
      // LRU map by the byte[] itself (identity), so with byte keys it never hits and writes through on
      // every put (SAMZA-505; it logs "Using arrays as keys results in unpredictable behavior").
      c.putIfAbsent(store + "object.cache.size", "0");
      // no dots: samza-core writes a store's changelog partition as system.stream.partition into the
      // store directory's OFFSET file and cannot read a stream name with dots back
      this.changelogTopic = prefix + "-" + jobName + "-" + runId + "-" + STATE_STORE + "-changelog";
      c.put(store + "changelog", KAFKA_SYSTEM + "." + changelogTopic);
      c.put("serializers.registry.weir-bytes.class", "org.apache.samza.serializers.ByteSerdeFactory");
      c.put("task.commit.ms", "-1"); // the tasks commit themselves, after flushing Weir's object cache
    } else {
      this.changelogTopic = null;
    }
    c.put("job.systemstreampartition.grouper.factory", WeirStreamGrouperFactory.class.getName());
    // Off: after every window() call samza-core 1.8's run loop averages a snapshot of its window-ns
    // timer, a sliding 5-minute reservoir that holds every window call of the container in that time;
    // with hundreds of tasks ticking every 10 ms each snapshot copied millions of values and the job
    // crawled (Nexmark Q7 and Q13 stalled). Ticks come from the callback scheduler instead.
    c.put("task.window.ms", "-1");
    // Samza's own store directories: under the run's directory rather than the working directory,
    // unless the user chose them
    c.putIfAbsent("job.jmx.enabled", "false"); // Weir registers its own MBeans; a JMX server per run costs ~1 s
    // Off unless the user turns them on: samza-core's per-message timers (process-ns and the like)
    // record every sample into sliding reservoirs that Weir never reads (it keeps its own run-loop
    // metrics); in a profile of Nexmark Q13 at 200,000 events they were 4.8% of CPU samples, and
    // turning them off took that run from 3.0K to 4.5K events/s (runner-samza/README.md).
    c.putIfAbsent("metrics.timer.enabled", "false");
    c.putIfAbsent("job.logged.store.base.dir", runDirectory.resolve("samza-logged-stores").toString());
    c.putIfAbsent("job.non-logged.store.base.dir", runDirectory.resolve("samza-stores").toString());
    String source = "systems." + WeirTaskApplication.SOURCE_SYSTEM + ".";
    c.put(source + "samza.factory", WeirTaskApplication.SOURCE_SYSTEM_FACTORY);
    c.put(source + WeirJobs.JOB_ID_CONFIG, jobId);
    String kafka = "systems." + KAFKA_SYSTEM + ".";
    c.put(kafka + "samza.factory", WeirKafkaSystemFactory.class.getName());
    c.put(kafka + KafkaSettings.BOOTSTRAP_SERVERS, servers.trim());
    c.put(kafka + KafkaSettings.TIMEOUT_MS, Long.toString(timeoutMs));
    c.put(kafka + "samza.offset.default", "oldest");
    this.transactionalIdPrefix = exactlyOnce ? prefix + "-" + jobName + "-" + runId : null;
    if (exactlyOnce) {
      c.put(kafka + KafkaSettings.TRANSACTIONAL_ID_PREFIX, transactionalIdPrefix);
      // samza-core skips a commit asked for while the task's previous one is still being written
      // (for up to task.commit.max.delay.ms); a skipped last commit would leave the task's last
      // transaction open for good, blocking every read_committed reader of its partitions. With 0
      // such a commit waits for the previous one instead.
      if (user.containsKey(COMMIT_MAX_DELAY_MS) && !"0".equals(user.get(COMMIT_MAX_DELAY_MS).trim())) {
        throw new IllegalArgumentException(COMMIT_MAX_DELAY_MS + "=" + user.get(COMMIT_MAX_DELAY_MS).trim()
            + " is Weir's to set with " + USER_PROCESSING_GUARANTEE + "=exactly_once (0: a commit never skips an "
            + "earlier one still being written, which would leave its Kafka transaction open); remove it");
      }
      c.put(COMMIT_MAX_DELAY_MS, "0");
    }
    user.forEach((k, v) -> {
      if (k.startsWith(USER_CLIENT_PREFIX)) {
        c.put(kafka + KafkaSettings.CLIENT_PREFIX + k.substring(USER_CLIENT_PREFIX.length()), v);
      }
    });
    for (StagePlan stage : plan.stages()) {
      if (stage.source() != null) {
        c.put(GROUPER_PREFIX + JobPlan.sourceStreamName(stage), stage.name());
      }
    }
    for (StreamPlan stream : plan.streams()) {
      c.put(GROUPER_PREFIX + topics.get(stream.name()), stream.consumer().name());
    }
    this.config = Map.copyOf(c);
  }

  /**
   * ZooKeeper's connect string ({@value #ZK_CONNECT}) when SAMZA_STANDALONE runs samza-core's
   * ZooKeeper coordinator, else null (passthrough coordinator).
   */
  String zookeeper() {
    return zookeeper;
  }

  /** This process's Samza processor id ({@code processor.id}), or null when a user's generator makes it. */
  String processorId() {
    return processorId;
  }

  /** The generated config with the user's, as samza-core gets it (descriptors add streams and serdes). */
  Map<String, String> config() {
    return config;
  }

  /** The Kafka topic of each intermediate stream, by stream name, in plan order. */
  Map<String, String> topics() {
    return topics;
  }

  /** The job name samza-core runs under. */
  String jobName() {
    return jobName;
  }

  /** This run's id, part of every topic name. */
  String runId() {
    return runId;
  }

  /**
   * The run's own directory under {@code --stateDirectory} ({@code samza-<job>-<run>}): Weir's task
   * state (RocksDB backend) and Samza's store directories; deleted when the run ends.
   */
  java.nio.file.Path runDirectory() {
    return runDirectory;
  }

  /** Whether this is a SAMZA_STANDALONE run (several processes; topics and directories kept). */
  boolean standalone() {
    return standalone;
  }

  /** Whether the tasks keep their state in the Samza store {@value #STATE_STORE} (with a changelog). */
  boolean samzaStores() {
    return samzaStores;
  }

  /**
   * Whether the tasks run exactly-once ({@value #USER_PROCESSING_GUARANTEE}): each task's outputs,
   * changelog writes and checkpoint commit in one Kafka transaction ({@link TaskTransaction}).
   */
  boolean exactlyOnce() {
    return exactlyOnce;
  }

  /**
   * With exactly-once, the first part of every task's {@code transactional.id} (also in the Kafka
   * system's config, {@link KafkaSettings#transactionalIdPrefix()}); else null.
   */
  String transactionalIdPrefix() {
    return transactionalIdPrefix;
  }

  /** The processing guarantee and why, for the run's start line, e.g. {@code exactly_once (the default ...)}. */
  String guarantee() {
    return (exactlyOnce ? "exactly_once" : "at_least_once") + " (" + guaranteeReason + ")";
  }

  /**
   * The tasks' commit interval, ms (the user's {@code task.commit.ms}; default
   * {@value #DEFAULT_EXACTLY_ONCE_COMMIT_MS} with exactly-once, else {@value #DEFAULT_COMMIT_MS}).
   */
  long commitMs() {
    return commitMs;
  }

  /**
   * The least time between two watermarks a task sends to one output partition, ms
   * ({@value #USER_WATERMARK_INTERVAL_MS}, default {@value #DEFAULT_WATERMARK_INTERVAL_MS};
   * {@link WatermarkThrottle}).
   */
  long watermarkIntervalMs() {
    return watermarkIntervalMs;
  }

  /** The Kafka topic of the state store's changelog (samza-core creates it), or null without Samza stores. */
  String changelogTopic() {
    return changelogTopic;
  }

  /**
   * The Kafka topic of the job's source split plan ({@code <prefix>-<job>-<job.id>-plan}): with
   * SAMZA_STANDALONE unless {@link #planFile()} is set; else null.
   */
  String planTopic() {
    return planTopic;
  }

  /** The user's split plan file ({@value SourceSplitPlan#PLAN_FILE_CONFIG}), or null. */
  String planFile() {
    return planFile;
  }

  /** The job's checkpoint topic if Weir's Kafka checkpoint manager keeps its checkpoints, else null. */
  String checkpointTopic() {
    return checkpointTopic;
  }

  /** The directory of samza-core's file checkpoint manager (created before the run), or null. */
  String checkpointDirectory() {
    return checkpointDirectory;
  }

  /** Replication factor of the run's topics. */
  short replication() {
    return replication;
  }

  /** Whether a normally ended run deletes its topics. */
  boolean deleteTopics() {
    return deleteTopics;
  }

  private static String hostName() {
    try {
      return sanitize(java.net.InetAddress.getLocalHost().getHostName());
    } catch (java.io.IOException | SecurityException e) {
      return "host";
    }
  }

  private static long positive(Map<String, String> user, String key, String dflt, long max) {
    String value = user.getOrDefault(key, dflt).trim();
    long parsed;
    try {
      parsed = Long.parseLong(value);
    } catch (NumberFormatException e) {
      parsed = -1;
    }
    if (parsed < 1 || parsed > max) {
      throw new IllegalArgumentException(key + "=" + value + " is out of range; allowed: 1 to " + max);
    }
    return parsed;
  }

  private static long nonNegative(Map<String, String> user, String key) {
    String value = user.get(key).trim();
    try {
      long parsed = Long.parseLong(value);
      if (parsed >= 0 && parsed <= Integer.MAX_VALUE) {
        return parsed;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new IllegalArgumentException(key + "=" + value + " is not a processor id; allowed: an integer from 0");
  }

  /** A Kafka-topic- and Samza-safe name: letters, digits, '-' and '_', at most 80 characters. */
  static String sanitize(String name) {
    StringBuilder b = new StringBuilder();
    String source = name == null || name.isBlank() ? "weir" : name;
    for (int i = 0; i < source.length() && b.length() < 80; i++) {
      char c = source.charAt(i);
      b.append(c < 128 && (Character.isLetterOrDigit(c) || c == '-' || c == '_') ? c : '_');
    }
    return b.toString().toLowerCase(Locale.ROOT);
  }
}
