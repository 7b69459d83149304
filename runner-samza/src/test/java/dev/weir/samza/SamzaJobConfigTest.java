package dev.weir.samza;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.ExecutionEnvironment;
import dev.weir.runner.ExecutionEnvironmentProvider;
import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.samza.Partition;
import org.apache.samza.config.MapConfig;
import org.apache.samza.container.TaskName;
import org.apache.samza.system.SystemStreamPartition;
import org.junit.jupiter.api.Test;

/**
 * The config Weir generates for a SAMZA_LOCAL run, its grouping of input partitions into tasks,
 * the service lookup, and what the environment rejects before anything starts (no broker needed).
 */
class SamzaJobConfigTest {

  private static WeirSettings settings(String... args) {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs(args).as(WeirPipelineOptions.class);
    options.setRunner(WeirRunner.class);
    return WeirSettings.from(options);
  }

  /** Words counted per element: a source stage and a shuffled stage. */
  private static JobPlan countPlan(WeirSettings settings) {
    Pipeline p = Pipeline.create(settings.pipelineOptions());
    p.apply(Create.of("a", "b", "a")).apply(Count.perElement());
    return WeirRunner.translate(p, settings);
  }

  @Test
  void generatedConfig_passthroughCoordinatorWeirGrouperTopicsAndTheUsersKeys() {
    WeirSettings settings = settings("--executionEnvironment=SAMZA_LOCAL", "--parallelism=3", "--jobName=My Job",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,task.commit.ms=500,weir.kafka.client.linger.ms=7");
    JobPlan plan = countPlan(settings);
    SamzaJobConfig config = new SamzaJobConfig(plan, settings, "job-1");
    Map<String, String> c = config.config();
    assertThat(c).containsEntry("job.name", "my_job")
        .containsEntry("job.coordinator.factory", "org.apache.samza.standalone.PassthroughJobCoordinatorFactory")
        .containsEntry("processor.id", "0")
        .containsEntry("job.systemstreampartition.grouper.factory", WeirStreamGrouperFactory.class.getName())
        .containsEntry("systems.weir-kafka.bootstrap.servers", "h:1")
        .containsEntry("systems.weir-kafka.client.linger.ms", "7")
        .containsEntry("systems.weir-source.weir.job.id", "job-1")
        // Samza stores (--stateBackend=rocksdb, the default): the tasks commit themselves every 500 ms
        .containsEntry("task.commit.ms", "-1")
        .containsEntry("stores.weir-state.factory", "org.apache.samza.storage.kv.RocksDbKeyValueStorageEngineFactory")
        .containsEntry("stores.weir-state.key.serde", "weir-bytes")
        .containsEntry("stores.weir-state.msg.serde", "weir-bytes")
        .containsEntry("stores.weir-state.object.cache.size", "0")
        .containsEntry("task.window.ms", "-1")
        .containsEntry("stores.weir-state.changelog", "weir-kafka.weir-my_job-" + config.runId() + "-weir-state-changelog")
        .containsEntry("task.name.grouper.factory",
            "org.apache.samza.container.grouper.task.SingleContainerGrouperFactory");
    assertThat(config.commitMs()).isEqualTo(500);
    assertThat(config.samzaStores()).isTrue();
    assertThat(config.standalone()).isFalse();
    assertThat(config.planTopic()).as("one process: no plan topic").isNull();
    assertThat(config.topics()).hasSize(plan.streams().size());
    for (StreamPlan stream : plan.streams()) {
      String topic = config.topics().get(stream.name());
      assertThat(topic).isEqualTo("weir.my_job." + config.runId() + "." + stream.name());
      assertThat(c).containsEntry(SamzaJobConfig.GROUPER_PREFIX + topic, stream.consumer().name());
    }
  }

  @Test
  void zookeeper_standaloneRunsSamzasZkCoordinator_withItsCoordinatorStreamOnWeirsKafkaAndAGeneratedProcessorId() {
    WeirSettings settings = settings("--executionEnvironment=SAMZA_STANDALONE", "--jobName=zk",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,job.coordinator.zk.connect=z:2181,job.id=7");
    SamzaJobConfig config = new SamzaJobConfig(countPlan(settings), settings, "job-1");
    Map<String, String> c = config.config();
    assertThat(config.zookeeper()).isEqualTo("z:2181");
    assertThat(c).containsEntry("job.coordinator.factory", "org.apache.samza.zk.ZkJobCoordinatorFactory")
        .containsEntry("job.coordinator.zk.connect", "z:2181")
        .containsEntry("job.coordinator.zk.connection.timeout.ms", "30000")
        .containsEntry("job.coordinator.system", SamzaJobConfig.KAFKA_SYSTEM)
        .containsEntry("task.name.grouper.factory",
            "org.apache.samza.container.grouper.task.GroupByContainerIdsFactory")
        .containsEntry("job.systemstreampartition.grouper.factory", WeirStreamGrouperFactory.class.getName())
        .containsEntry("job.id", "7")
        .doesNotContainKey("job.container.count");
    // a processor id per process start: host, pid and a random part
    assertThat(config.processorId()).contains("-" + ProcessHandle.current().pid() + "-");
    assertThat(c).containsEntry("processor.id", config.processorId());
    assertThat(new SamzaJobConfig(countPlan(settings), settings, "job-1").processorId())
        .as("another start, another id").isNotEqualTo(config.processorId());

    WeirSettings named = settings("--executionEnvironment=SAMZA_STANDALONE", "--samzaConfigOverride="
        + "weir.kafka.bootstrap.servers=h:1,job.coordinator.zk.connect=z:2181,processor.id=worker-a,"
        + "job.coordinator.zk.connection.timeout.ms=5000");
    SamzaJobConfig withId = new SamzaJobConfig(countPlan(named), named, "job-1");
    assertThat(withId.config()).containsEntry("processor.id", "worker-a")
        .containsEntry("job.coordinator.zk.connection.timeout.ms", "5000");

    WeirSettings generator = settings("--executionEnvironment=SAMZA_STANDALONE", "--samzaConfigOverride="
        + "weir.kafka.bootstrap.servers=h:1,job.coordinator.zk.connect=z:2181,"
        + "app.processor-id-generator.class=org.apache.samza.runtime.UUIDGenerator");
    SamzaJobConfig generated = new SamzaJobConfig(countPlan(generator), generator, "job-1");
    assertThat(generated.processorId()).as("the user's generator makes it").isNull();
    assertThat(generated.config()).doesNotContainKey("processor.id");
  }

  @Test
  void zookeeper_rejectsAFixedContainerCount_aLocalRun_andTheCoordinatorSystem_namingTheKey() {
    WeirSettings count = settings("--executionEnvironment=SAMZA_STANDALONE", "--samzaConfigOverride="
        + "weir.kafka.bootstrap.servers=h:1,job.coordinator.zk.connect=z:2181,job.container.count=3");
    assertThatThrownBy(() -> new SamzaJobConfig(countPlan(count), count, "job-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("job.container.count=3 makes no sense with job.coordinator.zk.connect");
    WeirSettings local = settings("--executionEnvironment=SAMZA_LOCAL", "--samzaConfigOverride="
        + "weir.kafka.bootstrap.servers=h:1,job.coordinator.zk.connect=z:2181");
    assertThatThrownBy(() -> new SamzaJobConfig(countPlan(local), local, "job-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("job.coordinator.zk.connect=z:2181 makes no sense with --executionEnvironment=SAMZA_LOCAL");
    WeirSettings system = settings("--executionEnvironment=SAMZA_STANDALONE", "--samzaConfigOverride="
        + "weir.kafka.bootstrap.servers=h:1,job.coordinator.zk.connect=z:2181,job.coordinator.system=other");
    assertThatThrownBy(() -> new SamzaJobConfig(countPlan(system), system, "job-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("job.coordinator.system is Weir's to set");
    WeirSettings passthrough = settings("--executionEnvironment=SAMZA_STANDALONE", "--samzaConfigOverride="
        + "weir.kafka.bootstrap.servers=h:1");
    assertThatThrownBy(() -> new SamzaJobConfig(countPlan(passthrough), passthrough, "job-1"))
        .as("without ZooKeeper the passthrough coordinator needs both").hasMessageContaining("job.coordinator.zk.connect");
  }

  @Test
  void withoutTheKafkaAddress_failsNamingTheKey() {
    WeirSettings settings = settings("--executionEnvironment=SAMZA_LOCAL", "--samzaConfigOverride=task.commit.ms=5");
    assertThatThrownBy(() -> new SamzaJobConfig(countPlan(settings), settings, "job-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--executionEnvironment=SAMZA_LOCAL needs weir.kafka.bootstrap.servers (the Kafka brokers that "
            + "carry the job's intermediate streams) in --samzaConfig or --samzaConfigOverride");
  }

  @Test
  void samzaCoresTimerMetrics_areOffUnlessTheUserTurnsThemOn() {
    WeirSettings plain = settings("--executionEnvironment=SAMZA_LOCAL",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1");
    assertThat(new SamzaJobConfig(countPlan(plain), plain, "job-1").config())
        .containsEntry("metrics.timer.enabled", "false");
    WeirSettings on = settings("--executionEnvironment=SAMZA_LOCAL",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,metrics.timer.enabled=true");
    assertThat(new SamzaJobConfig(countPlan(on), on, "job-1").config()).containsEntry("metrics.timer.enabled", "true");
  }

  @Test
  void watermarkInterval_defaultsTo100Ms_takesTheUsersWholeNumber_andRejectsTheRestNamingKeyValueAndRange() {
    WeirSettings plain = settings("--executionEnvironment=SAMZA_LOCAL",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1");
    assertThat(new SamzaJobConfig(countPlan(plain), plain, "job-1").watermarkIntervalMs()).isEqualTo(100);
    WeirSettings set = settings("--executionEnvironment=SAMZA_LOCAL",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,weir.watermark.interval.ms=250");
    SamzaJobConfig config = new SamzaJobConfig(countPlan(set), set, "job-1");
    assertThat(config.watermarkIntervalMs()).isEqualTo(250);
    assertThat(config.config()).containsEntry("weir.watermark.interval.ms", "250"); // the user's, passed on
    WeirSettings one = settings("--executionEnvironment=SAMZA_LOCAL",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,weir.watermark.interval.ms=1");
    assertThat(new SamzaJobConfig(countPlan(one), one, "job-1").watermarkIntervalMs()).isEqualTo(1);
    for (String bad : new String[] {"0", "-5", "1.5", "abc", "", "9223372036855"}) {
      WeirSettings settings = settings("--executionEnvironment=SAMZA_LOCAL",
          "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,weir.watermark.interval.ms=" + bad);
      assertThatThrownBy(() -> new SamzaJobConfig(countPlan(settings), settings, "job-1"))
          .as("weir.watermark.interval.ms=" + bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("weir.watermark.interval.ms=" + bad + " is out of range; allowed: 1 to 9223372036854");
    }
  }

  @Test
  void badReplicationFactor_failsNamingTheKey() {
    WeirSettings settings = settings("--executionEnvironment=SAMZA_LOCAL",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,weir.kafka.replication.factor=0");
    assertThatThrownBy(() -> new SamzaJobConfig(countPlan(settings), settings, "job-1"))
        .hasMessage("weir.kafka.replication.factor=0 is out of range; allowed: 1 to 32767");
  }

  @Test
  void grouper_putsPartitionPOfEveryStreamOfAStageIntoItsTaskP() {
    WeirSettings settings = settings("--executionEnvironment=SAMZA_LOCAL", "--parallelism=2",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1");
    JobPlan plan = countPlan(settings);
    SamzaJobConfig config = new SamzaJobConfig(plan, settings, "job-1");
    Set<SystemStreamPartition> ssps = new HashSet<>();
    Set<TaskName> expected = new HashSet<>();
    for (StagePlan stage : plan.stages()) {
      for (int p = 0; p < stage.partitions(); p++) {
        expected.add(new TaskName(JobPlan.taskName(stage, p)));
        if (stage.source() != null) {
          ssps.add(new SystemStreamPartition("weir-source", JobPlan.sourceStreamName(stage), new Partition(p)));
        }
      }
    }
    for (StreamPlan stream : plan.streams()) {
      for (int p = 0; p < stream.partitions(); p++) {
        ssps.add(new SystemStreamPartition("weir-kafka", config.topics().get(stream.name()), new Partition(p)));
      }
    }
    Map<TaskName, Set<SystemStreamPartition>> groups = new WeirStreamGrouperFactory()
        .getSystemStreamPartitionGrouper(new MapConfig(config.config())).group(ssps);
    assertThat(groups.keySet()).isEqualTo(expected);
    for (StreamPlan stream : plan.streams()) {
      for (int p = 0; p < stream.partitions(); p++) {
        assertThat(groups.get(new TaskName(JobPlan.taskName(stream.consumer(), p))))
            .contains(new SystemStreamPartition("weir-kafka", config.topics().get(stream.name()), new Partition(p)));
      }
    }
    assertThatThrownBy(() -> new WeirStreamGrouperFactory().getSystemStreamPartitionGrouper(new MapConfig(config.config()))
        .group(Set.of(new SystemStreamPartition("weir-kafka", "other", new Partition(0)))))
        .hasMessageStartingWith("Weir's grouper knows no stage reading stream other");
  }

  @Test
  void serviceLoader_findsTheSamzaEnvironmentForBothSamzaValues() {
    for (ExecutionEnvironment environment : new ExecutionEnvironment[] {ExecutionEnvironment.SAMZA_LOCAL,
        ExecutionEnvironment.SAMZA_STANDALONE}) {
      assertThat(ExecutionEnvironmentProvider.find(environment, getClass().getClassLoader()))
          .isInstanceOf(SamzaExecutionEnvironment.class);
    }
  }

  @Test
  void standalone_processorIdAndContainerCountFromTheUser_groupByContainerCount_kafkaCheckpoints() {
    WeirSettings settings = settings("--executionEnvironment=SAMZA_STANDALONE", "--parallelism=3", "--jobName=J",
        "--stateDirectory=/tmp/st", "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,processor.id=2,"
            + "job.container.count=3,job.id=run7");
    SamzaJobConfig config = new SamzaJobConfig(countPlan(settings), settings, "job-1");
    assertThat(config.config()).containsEntry("processor.id", "2")
        .containsEntry("job.container.count", "3")
        .containsEntry("job.id", "run7")
        .containsEntry("task.name.grouper.factory", "org.apache.samza.container.grouper.task.GroupByContainerCountFactory")
        .containsEntry("task.checkpoint.factory", WeirKafkaCheckpointManagerFactory.class.getName())
        .containsEntry("weir.checkpoint.topic", "weir-j-run7-checkpoints")
        .containsEntry("task.checkpoint.write.versions", "1")
        .containsEntry("job.logged.store.base.dir", "/tmp/st/samza-j-run7/samza-logged-stores")
        .containsEntry("task.commit.ms", "-1");
    assertThat(config.runId()).isEqualTo("run7");
    assertThat(config.standalone()).isTrue();
    // exactly-once by default here: transactions per task, a commit every second
    assertThat(config.exactlyOnce()).isTrue();
    assertThat(config.transactionalIdPrefix()).isEqualTo("weir-j-run7");
    assertThat(config.config()).containsEntry("systems.weir-kafka.transactional.id.prefix", "weir-j-run7")
        .containsEntry("task.commit.max.delay.ms", "0");
    assertThat(config.commitMs()).isEqualTo(SamzaJobConfig.DEFAULT_EXACTLY_ONCE_COMMIT_MS);
    assertThat(config.checkpointDirectory()).isNull();
    // the source split plan: a topic of the job beside its checkpoints
    assertThat(config.planTopic()).isEqualTo("weir-j-run7-plan");
    assertThat(config.planFile()).isNull();
    assertThat(config.checkpointTopic()).isEqualTo("weir-j-run7-checkpoints");
    // samza-core's file checkpoints instead, when the user picks them
    WeirSettings files = settings("--executionEnvironment=SAMZA_STANDALONE", "--stateDirectory=/tmp/st", "--jobName=J",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,processor.id=0,job.container.count=1,"
            + "task.checkpoint.factory=org.apache.samza.checkpoint.file.FileSystemCheckpointManagerFactory");
    SamzaJobConfig fileConfig = new SamzaJobConfig(countPlan(files), files, "job-1");
    assertThat(fileConfig.checkpointDirectory()).isEqualTo("/tmp/st/samza-j-1/checkpoints");
    assertThat(fileConfig.config()).containsEntry("task.checkpoint.path", "/tmp/st/samza-j-1/checkpoints")
        .containsEntry("task.checkpoint.write.versions", "1");
    assertThat(fileConfig.checkpointTopic()).isNull();
    // a plan file the user stages instead of the plan topic
    WeirSettings planFile = settings("--executionEnvironment=SAMZA_STANDALONE", "--jobName=J",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,processor.id=0,job.container.count=1,"
            + "weir.source.plan.file=/shared/j.plan");
    SamzaJobConfig planFileConfig = new SamzaJobConfig(countPlan(planFile), planFile, "job-1");
    assertThat(planFileConfig.planFile()).isEqualTo("/shared/j.plan");
    assertThat(planFileConfig.planTopic()).isNull();
    // the same config in another process: the same topics (no random run id)
    assertThat(new SamzaJobConfig(countPlan(settings), settings, "job-2").topics()).isEqualTo(config.topics());
  }

  @Test
  void standalone_withoutProcessorId_orOutOfRange_failsNamingTheKeys() {
    WeirSettings missing = settings("--executionEnvironment=SAMZA_STANDALONE",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1");
    assertThatThrownBy(() -> new SamzaJobConfig(countPlan(missing), missing, "job-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("missing processor.id and job.container.count (--executionEnvironment=SAMZA_STANDALONE");
    WeirSettings outOfRange = settings("--executionEnvironment=SAMZA_STANDALONE",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,processor.id=3,job.container.count=3");
    assertThatThrownBy(() -> new SamzaJobConfig(countPlan(outOfRange), outOfRange, "job-1"))
        .hasMessageStartingWith("processor.id=3 is out of range; allowed: 0 to 2 (job.container.count=3)");
  }

  @Test
  void processorId_withSamzaLocal_isRejectedAsWeirs() {
    assertThatThrownBy(() -> settings("--executionEnvironment=SAMZA_LOCAL",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,processor.id=1"))
        .hasMessageStartingWith("--samzaConfigOverride sets processor.id, which Weir generates itself with "
            + "--executionEnvironment=SAMZA_LOCAL");
  }

  @Test
  void memoryBackend_keepsWeirsHeapStateAndSamzasCommits() {
    WeirSettings settings = settings("--executionEnvironment=SAMZA_LOCAL", "--stateBackend=memory",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,task.commit.ms=500");
    SamzaJobConfig config = new SamzaJobConfig(countPlan(settings), settings, "job-1");
    assertThat(config.samzaStores()).isFalse();
    assertThat(config.config()).containsEntry("task.commit.ms", "500").doesNotContainKey("stores.weir-state.factory");
  }

  @Test
  void testStream_isRejectedNamingTheTransform() {
    Pipeline p = Pipeline.create(PipelineOptionsFactory.fromArgs("--runner=WeirRunner",
        "--executionEnvironment=SAMZA_LOCAL", "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1").create());
    p.apply("Events", TestStream.create(StringUtf8Coder.of()).addElements("a").advanceWatermarkToInfinity());
    assertThatThrownBy(p::run)
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("Events is a TestStream, which only --executionEnvironment=EMBEDDED replays");
  }

  @Test
  void processingGuarantee_exactlyOnceByDefaultOnlyWhereItHolds_atLeastOnceOnRequest_badValueNamed() {
    String standalone = "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,processor.id=0,job.container.count=1";
    WeirSettings eos = settings("--executionEnvironment=SAMZA_STANDALONE", "--stateDirectory=/tmp/st", standalone);
    SamzaJobConfig config = new SamzaJobConfig(countPlan(eos), eos, "job-1");
    assertThat(config.guarantee()).startsWith("exactly_once (the default");
    KafkaSettings kafka = KafkaSettings.of(SamzaJobConfig.KAFKA_SYSTEM, new MapConfig(config.config()));
    assertThat(kafka.exactlyOnce()).isTrue();
    assertThat(kafka.consumer()).containsEntry("isolation.level", "read_committed");

    WeirSettings alo = settings("--executionEnvironment=SAMZA_STANDALONE", "--stateDirectory=/tmp/st",
        standalone + ",weir.processing.guarantee=at_least_once,task.commit.ms=5000");
    SamzaJobConfig atLeastOnce = new SamzaJobConfig(countPlan(alo), alo, "job-1");
    assertThat(atLeastOnce.exactlyOnce()).isFalse();
    assertThat(atLeastOnce.commitMs()).isEqualTo(5000);
    assertThat(atLeastOnce.config()).doesNotContainKey("systems.weir-kafka.transactional.id.prefix");
    assertThat(atLeastOnce.transactionalIdPrefix()).isNull();
    KafkaSettings plain = KafkaSettings.of(SamzaJobConfig.KAFKA_SYSTEM, new MapConfig(atLeastOnce.config()));
    assertThat(plain.consumer()).containsEntry("isolation.level", "read_uncommitted");

    // where it cannot hold: at-least-once by default, saying why; asked for, a clear error
    WeirSettings memory = settings("--executionEnvironment=SAMZA_STANDALONE", "--stateDirectory=/tmp/st",
        "--stateBackend=memory", standalone);
    assertThat(new SamzaJobConfig(countPlan(memory), memory, "job-1").guarantee())
        .isEqualTo("at_least_once (exactly_once is not possible here: --stateBackend=memory loses the tasks' state "
            + "with their process)");
    WeirSettings memoryEos = settings("--executionEnvironment=SAMZA_STANDALONE", "--stateDirectory=/tmp/st",
        "--stateBackend=memory", standalone + ",weir.processing.guarantee=exactly_once");
    assertThatThrownBy(() -> new SamzaJobConfig(countPlan(memoryEos), memoryEos, "job-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("weir.processing.guarantee=exactly_once is not possible here: --stateBackend=memory");
    WeirSettings local = settings("--executionEnvironment=SAMZA_LOCAL",
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=h:1,weir.processing.guarantee=exactly_once");
    assertThatThrownBy(() -> new SamzaJobConfig(countPlan(local), local, "job-1"))
        .hasMessageContaining("SAMZA_LOCAL takes no checkpoints");
    WeirSettings files = settings("--executionEnvironment=SAMZA_STANDALONE", "--stateDirectory=/tmp/st", standalone
        + ",task.checkpoint.factory=org.apache.samza.checkpoint.file.FileSystemCheckpointManagerFactory");
    assertThat(new SamzaJobConfig(countPlan(files), files, "job-1").exactlyOnce()).isFalse();
    WeirSettings skipping = settings("--executionEnvironment=SAMZA_STANDALONE", "--stateDirectory=/tmp/st",
        standalone + ",task.commit.max.delay.ms=60000");
    assertThatThrownBy(() -> new SamzaJobConfig(countPlan(skipping), skipping, "job-1"))
        .hasMessageStartingWith("task.commit.max.delay.ms=60000 is Weir's to set with weir.processing.guarantee="
            + "exactly_once");
    WeirSettings bad = settings("--executionEnvironment=SAMZA_STANDALONE", "--stateDirectory=/tmp/st",
        standalone + ",weir.processing.guarantee=once");
    assertThatThrownBy(() -> new SamzaJobConfig(countPlan(bad), bad, "job-1"))
        .hasMessage("weir.processing.guarantee=once is not a processing guarantee; allowed: exactly_once, "
            + "at_least_once");
  }
}
