package dev.weir.samza;

import dev.weir.runner.WeirSettings;
import dev.weir.runner.application.WeirTaskApplication;
import dev.weir.runner.samza.WeirJobs;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
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
 * a job ends normally, default true) and Kafka client settings under {@value #USER_CLIENT_PREFIX}.
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
  /** Config prefix of Weir's grouping: physical stream name to the stage that reads it. */
  static final String GROUPER_PREFIX = "weir.grouper.stage-of.";
  /** Milliseconds between two ticks of a task (bundle time-outs, processing-time timers). */
  static final int TICK_MS = 10;

  private final String jobName;
  private final String runId;
  private final Map<String, String> topics = new LinkedHashMap<>();
  private final Map<String, String> config;
  private final short replication;
  private final boolean deleteTopics;
  private final java.nio.file.Path runDirectory;

  /**
   * @param jobId the id under which the job's sources are bound in this JVM ({@link WeirJobs})
   * @throws IllegalArgumentException naming the key if the user config lacks the Kafka address or
   *     a value is out of range
   */
  SamzaJobConfig(JobPlan plan, WeirSettings settings, String jobId) {
    Map<String, String> user = settings.samzaConfig();
    this.jobName = sanitize(settings.pipelineOptions().getJobName());
    this.runId = UUID.randomUUID().toString().substring(0, 8);
    String servers = user.get(USER_BOOTSTRAP_SERVERS);
    if (servers == null || servers.isBlank()) {
      throw new IllegalArgumentException("--executionEnvironment=" + settings.executionEnvironment() + " needs "
          + USER_BOOTSTRAP_SERVERS + " (the Kafka brokers that carry the job's intermediate streams) in --samzaConfig "
          + "or --samzaConfigOverride");
    }
    this.replication = (short) positive(user, USER_REPLICATION, "1", Short.MAX_VALUE);
    long timeoutMs = positive(user, USER_TIMEOUT_MS, Long.toString(KafkaSettings.DEFAULT_TIMEOUT_MS), Long.MAX_VALUE);
    this.deleteTopics = !"false".equalsIgnoreCase(user.getOrDefault(USER_DELETE_TOPICS, "true").trim());
    this.runDirectory = settings.stateDirectory().resolve("samza-" + jobName + "-" + runId).toAbsolutePath();
    String prefix = sanitize(user.getOrDefault(USER_TOPIC_PREFIX, "weir"));
    for (StreamPlan stream : plan.streams()) {
      topics.put(stream.name(), prefix + "." + jobName + "." + runId + "." + stream.name());
    }
    Map<String, String> c = new TreeMap<>(user);
    c.put("job.name", jobName);
    c.put("job.id", runId);
    c.put("job.coordinator.factory", "org.apache.samza.standalone.PassthroughJobCoordinatorFactory");
    c.put("processor.id", "0");
    c.put("task.name.grouper.factory", "org.apache.samza.container.grouper.task.SingleContainerGrouperFactory");
    c.put("job.systemstreampartition.grouper.factory", WeirStreamGrouperFactory.class.getName());
    c.put("task.window.ms", Integer.toString(TICK_MS));
    // Samza's own store directories (Weir keeps no state in Samza stores yet): under the run's
    // directory rather than the working directory, unless the user chose them
    c.putIfAbsent("job.jmx.enabled", "false"); // Weir registers its own MBeans; a JMX server per run costs ~1 s
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

  /** Replication factor of the run's topics. */
  short replication() {
    return replication;
  }

  /** Whether a normally ended run deletes its topics. */
  boolean deleteTopics() {
    return deleteTopics;
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
