package dev.weir.samza;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.testservices.KafkaBroker;
import dev.weir.testservices.KafkaBrokerExtension;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Source splits planned once and shared by every process (issue 15): two SAMZA_STANDALONE processes
 * (child JVMs, the same main, {@link SplitPlanMain}, {@code processor.id} 0 and 1,
 * {@code job.container.count=2}) run a batch job over {@link ProcessDependentSource}, whose
 * {@code split()} cuts its range at different points in each process (system property
 * {@value ProcessDependentSource#SEED_PROPERTY} = the processor id), then shuffle the elements
 * (GroupByKey on a real broker, test-services' {@link KafkaBroker}) and write them. Every element of
 * {@code [0, N)} must be written exactly once over both processes' output files.
 *
 * <p>Each process reads the splits of its own source tasks (stage-0-p0..p3 spread over the two
 * containers), so when each process split the source itself, process 0 read its tasks' ranges of
 * its own cut and process 1 its tasks' ranges of another cut: some ranges twice, others never. Run
 * once before the split plan existed (this test and its source, on af14fa3's runner), it failed:
 * 421 elements never written and 842 written twice (20,421 lines for 20,000 elements). With the
 * plan, both processes read the splits of the one plan on the job's plan topic
 * ({@link SourceSplitPlan}, {@link KafkaSplitPlanStore}); the two processes start at once, so both
 * usually find the topic empty and publish, and the logs show the loser reading the winner's plan
 * ("the first record wins"). The stage-mismatch and version/checksum failures are unit-tested
 * ({@code SourceSplitPlanTest}).
 *
 * <p>A second method tests the Kafka plan store itself on the broker: first record wins between
 * two stores, the topic is compacted, and an empty plan topic beside a checkpoint topic holding
 * checkpoints (a deleted plan) fails the start instead of planning anew.
 *
 * <p>A third method starts process 1 after process 0 published the plan, with a source that splits
 * into 3 where process 0's split into 4: it adopts the plan's 4 (see that method).
 *
 * <p>Measured on 2 cores (failsafe, the broker's ~7 s start included): 15-22 s for the class with
 * two methods (the two-process method alone, failing before the plan: 12 s); 17-43 s with the third
 * (its own 6-13 s; 43 s on a machine shared with other builds, 17 s in the final verify build).
 */
class SamzaSplitPlanIT {
  private static final long N = 20_000;
  private static final int PROCESSES = 2;
  private static final long TIMEOUT_MS = 150_000;

  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  @Test
  void twoProcesses_whoseSourcesSplitDifferently_readEveryElementExactlyOnce() throws Exception {
    Path dir = runTwo("cuts", new int[] {ProcessDependentSource.SPLITS, ProcessDependentSource.SPLITS}, false);
    for (int i = 0; i < PROCESSES; i++) {
      assertThat(Files.readString(dir.resolve("process-" + i + ".log"), StandardCharsets.UTF_8))
          .as("process " + i + "'s log names the split plan it used")
          .contains("split plan");
    }
  }

  /**
   * A late process whose source splits into another NUMBER of splits (3, where the first process's
   * split into 4, as a file pattern matching more or fewer files by then) adopts the plan's count:
   * it is translated again with the plan's splits, so both processes run the same task layout. With
   * the second translation switched off (as before it existed, main at 2ad2cab) this method failed:
   * the late process's start failed ("stage-0 ('Read') has 4 split(s) in the plan and 3 in this
   * process's translation") and process 0 waited for its tasks until the 150 s time-out.
   */
  @Test
  void lateProcess_whoseSourceSplitsIntoAnotherCount_adoptsThePlansCount() throws Exception {
    Path dir = runTwo("counts", new int[] {ProcessDependentSource.SPLITS, ProcessDependentSource.SPLITS - 1}, true);
    assertThat(Files.readString(dir.resolve("process-1.log"), StandardCharsets.UTF_8))
        .as("the late process's log says it adopted the plan's count")
        .contains("source stage stage-0 ('Read'): the plan has 4 splits, this process's source split into 3; "
            + "using the plan's");
  }

  /**
   * Runs the job on two processes whose sources split into {@code splits[i]} splits (process i's
   * seed: i), process 1 only after process 0 logged its split plan if {@code late}, and checks that
   * every element of {@code [0, N)} was written exactly once. Returns the run's directory.
   */
  private static Path runTwo(String name, int[] splits, boolean late) throws Exception {
    KafkaBroker broker = KAFKA.broker();
    Path dir = Path.of("target", "samza-split-plan-it", name + "-" + System.currentTimeMillis()).toAbsolutePath();
    Files.createDirectories(dir);
    String jobId = "r" + System.currentTimeMillis();
    Process[] processes = new Process[PROCESSES];
    try {
      long deadline = System.currentTimeMillis() + TIMEOUT_MS;
      for (int i = 0; i < PROCESSES; i++) {
        if (late && i > 0) {
          Path previous = dir.resolve("process-" + (i - 1) + ".log");
          while (!(Files.exists(previous) && Files.readString(previous, StandardCharsets.UTF_8).contains("split plan"))) {
            assertThat(System.currentTimeMillis()).as("process " + (i - 1) + " logged its split plan; see " + previous)
                .isLessThan(deadline);
            assertThat(processes[i - 1].isAlive()).as("process " + (i - 1) + " is running; see " + previous).isTrue();
            Thread.sleep(200);
          }
        }
        processes[i] = start(i, splits[i], dir, broker.bootstrapServers(), jobId);
      }
      for (int i = 0; i < PROCESSES; i++) {
        long left = Math.max(1, deadline - System.currentTimeMillis());
        assertThat(processes[i].waitFor(left, TimeUnit.MILLISECONDS))
            .as("process " + i + " ended within " + TIMEOUT_MS + " ms; see " + dir.resolve("process-" + i + ".log"))
            .isTrue();
        assertThat(processes[i].exitValue()).as("exit code of process " + i + "; see "
            + dir.resolve("process-" + i + ".log")).isZero();
      }
      Map<Long, Integer> seen = new TreeMap<>();
      for (int i = 0; i < PROCESSES; i++) {
        Path out = dir.resolve("out-" + i + ".txt");
        if (Files.exists(out)) {
          for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
              seen.merge(Long.parseLong(line.trim()), 1, Integer::sum);
            }
          }
        }
      }
      List<Long> twice = new ArrayList<>();
      List<Long> missing = new ArrayList<>();
      for (long v = 0; v < N; v++) {
        int count = seen.getOrDefault(v, 0);
        if (count == 0) {
          missing.add(v);
        } else if (count > 1) {
          twice.add(v);
        }
      }
      assertThat(seen.keySet()).as("elements outside the source's range").allMatch(v -> v >= 0 && v < N);
      assertThat(missing).as(missing.size() + " element(s) never written; logs in " + dir).isEmpty();
      assertThat(twice).as(twice.size() + " element(s) written more than once; logs in " + dir).isEmpty();
      return dir;
    } finally {
      for (Process p : processes) {
        if (p != null) {
          p.destroyForcibly();
          p.waitFor();
        }
      }
    }
  }

  /**
   * The Kafka plan store on the real broker: two stores (two processes) that both found the topic
   * empty both append, and both read the first record; the topic is compacted and keeps both
   * records; a job whose plan topic is empty but whose checkpoint topic holds checkpoints (its plan
   * was deleted) fails instead of planning anew.
   */
  @Test
  void kafkaStore_firstRecordWins_andAnEmptyPlanTopicWithCheckpointsFails() throws Exception {
    KafkaBroker broker = KAFKA.broker();
    String job = "store" + System.currentTimeMillis();
    KafkaSettings settings = KafkaSettings.of(SamzaJobConfig.KAFKA_SYSTEM, new org.apache.samza.config.MapConfig(
        Map.of("systems." + SamzaJobConfig.KAFKA_SYSTEM + ".bootstrap.servers", broker.bootstrapServers(),
            "systems." + SamzaJobConfig.KAFKA_SYSTEM + ".timeout.ms", "10000")));
    WeirKafkaAdmin admin = new WeirKafkaAdmin(SamzaJobConfig.KAFKA_SYSTEM, settings);
    try {
      String checkpoints = "weir-" + job + "-checkpoints";
      KafkaSplitPlanStore a = new KafkaSplitPlanStore("weir-" + job + "-plan", settings, (short) 1, checkpoints, "p0");
      KafkaSplitPlanStore b = new KafkaSplitPlanStore("weir-" + job + "-plan", settings, (short) 1, checkpoints, "p1");
      a.create(admin);
      b.create(admin); // exists: no error
      assertThat(a.first()).isNull();
      assertThat(b.first()).isNull();
      assertThat(a.progressWithoutPlan()).as("no checkpoint topic yet").isNull();
      byte[] first = "plan of p0".getBytes(StandardCharsets.UTF_8);
      a.append(first);
      b.append("plan of p1".getBytes(StandardCharsets.UTF_8));
      assertThat(a.first()).isEqualTo(first);
      assertThat(b.first()).isEqualTo(first);
      try (var kafka = org.apache.kafka.clients.admin.Admin.create(settings.admin())) {
        var configs = kafka.describeConfigs(List.of(new org.apache.kafka.common.config.ConfigResource(
            org.apache.kafka.common.config.ConfigResource.Type.TOPIC, "weir-" + job + "-plan")))
            .all().get(10, TimeUnit.SECONDS);
        assertThat(configs.values().iterator().next().get("cleanup.policy").value()).isEqualTo("compact");
      }

      // the job checkpointed, then its plan topic was deleted (here: a new, empty one)
      admin.createTopics(Map.of(checkpoints, 1), (short) 1, true);
      admin.awaitTopics(Map.of(checkpoints, 1));
      try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]>(settings.producer())) {
        producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(checkpoints, 0,
            "stage-0-p0".getBytes(StandardCharsets.UTF_8), "{}".getBytes(StandardCharsets.UTF_8)))
            .get(10, TimeUnit.SECONDS);
      }
      KafkaSplitPlanStore deleted =
          new KafkaSplitPlanStore("weir-" + job + "-plan2", settings, (short) 1, checkpoints, "p0");
      deleted.create(admin);
      assertThat(deleted.progressWithoutPlan()).contains(checkpoints);
      SourceSplitPlan mine = SourceSplitPlan.of(planOfOneSource(), job, "p0");
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> SourceSplitPlan.resolve(deleted, mine))
          .hasMessageContaining("topic weir-" + job + "-plan2 on Kafka at " + broker.bootstrapServers()
              + " holds no split plan, but its checkpoint topic " + checkpoints + " holds checkpoints");
      assertThat(deleted.first()).as("nothing published").isNull();
    } finally {
      admin.stop();
    }
  }

  private static dev.weir.runner.translation.JobPlan planOfOneSource() {
    dev.weir.runner.WeirPipelineOptions options = org.apache.beam.sdk.options.PipelineOptionsFactory
        .fromArgs("--parallelism=2").as(dev.weir.runner.WeirPipelineOptions.class);
    options.setRunner(dev.weir.runner.WeirRunner.class);
    dev.weir.runner.WeirSettings settings = dev.weir.runner.WeirSettings.from(options);
    org.apache.beam.sdk.Pipeline p = org.apache.beam.sdk.Pipeline.create(options);
    p.apply(org.apache.beam.sdk.io.Read.from(new ProcessDependentSource(0, 100)));
    return dev.weir.runner.WeirRunner.translate(p, settings);
  }

  private static Process start(int processor, int splits, Path dir, String bootstrap, String jobId)
      throws IOException {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-D" + ProcessDependentSource.SEED_PROPERTY + "=" + processor,
        "-D" + ProcessDependentSource.COUNT_PROPERTY + "=" + splits,
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-Dorg.slf4j.simpleLogger.log.dev.weir.samza.SourceSplitPlan=info",
        "-Dorg.slf4j.simpleLogger.log.dev.weir.samza.SamzaExecutionEnvironment=info",
        "-cp", System.getProperty("java.class.path"),
        SplitPlanMain.class.getName(),
        dir.resolve("out-" + processor + ".txt").toString(), Long.toString(N),
        "--runner=WeirRunner", "--executionEnvironment=SAMZA_STANDALONE", "--streaming=false",
        "--parallelism=" + ProcessDependentSource.SPLITS, "--jobName=splitplan", "--stateBackend=memory",
        "--stateDirectory=" + dir.resolve("state-" + processor),
        "--samzaConfigOverride=weir.kafka.bootstrap.servers=" + bootstrap + ",processor.id=" + processor
            + ",job.container.count=" + PROCESSES + ",job.id=" + jobId + ",weir.kafka.timeout.ms=10000"));
    File log = dir.resolve("process-" + processor + ".log").toFile();
    return new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log)).start();
  }
}
