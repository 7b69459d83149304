package dev.weir.runner.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.testservices.KafkaBroker;
import dev.weir.testservices.KafkaBrokerExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue #13's "Kafka, for real": a streaming job reading a real Kafka broker (test-services'
 * {@link KafkaBroker}, a child JVM on loopback) with Beam's {@code KafkaIO} (the primitive
 * {@code Read.from(UnboundedSource)} expansion, {@code --experiments=use_deprecated_read}; no
 * consumer group, so each partition's position lives only in Weir's checkpoints, as the
 * source's checkpoint marks) and counting per key in a {@code ValueState}
 * ({@link KafkaCrashPipelineMain}; RocksDB, two containers, a checkpoint every
 * {@value #CHECKPOINT_INTERVAL_MS} ms, a fixed {@code --jobName}) runs in a child JVM
 * ({@link ChildJob}) that is killed with SIGKILL {@value #KILLS} times at seeded random moments
 * and restarted each time with the same job name and state directory.
 *
 * <p>The topic ({@value #PARTITIONS} partitions, keys {@code k0..k6} and partitions drawn by the
 * seed) keeps growing while the job runs: {@value #FIRST_BATCH} records before the first run, then
 * {@value #BATCH} per run, produced in paced chunks from the moment the run is started (so kills
 * land while records are read, and a batch goes on after its run was killed), and a last batch
 * of {@value #BATCH} only after the final run started, so the final counts can only come from
 * that run. Kills are of two kinds, three of each, shuffled by the seed, timed from the moment the
 * first KafkaIO reader logged its start offsets: <b>plain</b> (0.3-2.8 s after it) and
 * <b>checkpoint</b> (armed 0.3-2 s after it, then 0-20 ms after a new entry appears under
 * {@code checkpoints/}, seen through inotify: mid-checkpoint or right after one); never later than
 * {@value #SEGMENT_CAP_MS} ms after it.
 *
 * <p>Asserted: every key's final count file equals the number of records produced for it (nothing
 * lost, nothing counted twice; the final run is done when every file shows its count and nothing
 * changed for {@value #GRACE_MS} ms, then the test kills it; a count past its key's records fails
 * at once); every run started after a complete checkpoint existed logged
 * {@code restored from checkpoint <id>}, with ids that never go back; the offsets each
 * partition's reader started from (KafkaIO's {@code reading from <topic>-<p> starting at offset
 * <n>}) never go back from run to run and are past 0 in every partition of the final run. Counts
 * alone cannot tell a job that silently started over (fresh state, offsets from 0: exact counts
 * again); the restore and offset checks do. Both mutations were tried once by hand: with
 * {@code --restoreMode=NONE} the counts came out exact and the restore and offset checks failed;
 * with the readers created without their restored marks (state restored, offsets from 0) the
 * counts doubled (k0 4,043 instead of 1,792).
 *
 * <p>The seed is printed and named in every failure; rerun with {@code -Dweir.crash.seed=<seed>}.
 * Child logs: {@code target/crash-it/KafkaCrashRecoveryIT/children.log}.
 *
 * <p>Runtime, measured on the 2-core build machine while other builds ran (load average 4-7; five runs):
 * 39-52 s for the test class (failsafe's "Time elapsed"), of which ~7 s start the broker, 7 child
 * JVMs start in 2-4 s each, and the final run settles 3.4-4.7 s after the last batch (2 s of it the
 * grace period); 12,500 records.
 */
class KafkaCrashRecoveryIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  static final int PARTITIONS = 4;
  static final int KEYS = 7;
  static final int KILLS = 6;
  static final int FIRST_BATCH = 2_000;
  static final int BATCH = 1_500;
  static final long CHECKPOINT_INTERVAL_MS = 200;
  static final long SEGMENT_CAP_MS = 3_500;
  static final long GRACE_MS = 2_000;
  static final long STALL_MS = 15_000;
  private static final String JOB = "kafka-crash-it";
  private static final String TOPIC = "clicks";
  private static final Pattern OFFSET = Pattern.compile("reading from (\\S+)-(\\d+) starting at offset (\\d+)");

  enum Kind { PLAIN, CHECKPOINT }

  /** What one kill did. */
  record Kill(int segment, Kind kind, String trigger, long msAfterReaderStart, boolean midCheckpoint) {}

  /** One run of the child: its output and whether a complete checkpoint existed when it started. */
  record Run(String name, List<String> lines, boolean checkpointBefore) {}

  @Test
  void aKafkaJobKilledSixTimesResumesFromItsOffsetsWithExactCounts() throws Exception {
    long seed = Long.getLong("weir.crash.seed", new SecureRandom().nextLong());
    String seedNote = "seed " + seed + " (rerun with -Dweir.crash.seed=" + seed + ")";
    System.out.println("KafkaCrashRecoveryIT " + seedNote);
    Random random = new Random(seed);
    long startedNanos = System.nanoTime();

    KafkaBroker broker = KAFKA.broker();
    broker.createTopic(TOPIC, PARTITIONS);
    Path dir = CrashRuns.freshDirectory("KafkaCrashRecoveryIT");
    Path log = dir.resolve("children.log");
    Path out = dir.resolve("out");
    Path state = dir.resolve("state");
    Path checkpoints = CrashRuns.checkpointsDirectory(state, JOB);
    System.out.println("KafkaCrashRecoveryIT files and child logs in " + dir);
    List<String> args = List.of(out.toString(), broker.bootstrapServers(), TOPIC,
        "--runner=WeirRunner", "--streaming=true", "--experiments=use_deprecated_read",
        "--stateBackend=rocksdb", "--containers=2", "--parallelism=2", "--jobName=" + JOB,
        "--stateDirectory=" + state, "--checkpointingIntervalMs=" + CHECKPOINT_INTERVAL_MS);

    List<Kind> kinds = new ArrayList<>();
    for (int i = 0; i < KILLS; i++) {
      kinds.add(Kind.values()[i % Kind.values().length]);
    }
    Collections.shuffle(kinds, random);

    List<Kill> kills = new ArrayList<>();
    List<Run> runs = new ArrayList<>();
    ExecutorService producing = Executors.newSingleThreadExecutor();
    Map<String, String> expected;
    ChildJob last = null;
    try (Producer producer = new Producer(broker, new Random(random.nextLong()))) {
      producer.produce(FIRST_BATCH);
      List<Future<?>> batches = new ArrayList<>();
      for (int segment = 0; segment < KILLS; segment++) {
        boolean checkpointBefore = !CrashRuns.completeCheckpoints(checkpoints).isEmpty();
        ChildJob child = ChildJob.start("segment-" + segment, log, KafkaCrashPipelineMain.class, args);
        try {
          batches.add(producing.submit(() -> producer.produce(BATCH)));
          Kill kill = killAtTheChosenMoment(child, segment, kinds.get(segment), random, checkpoints);
          assertThat(child.isAlive())
              .as("%s: segment %d ended before its kill (%s)\n%s", seedNote, segment, kill, child.tail(40))
              .isTrue();
          child.kill();
          kills.add(kill);
          System.out.println("KafkaCrashRecoveryIT kill " + kill);
        } finally {
          child.close();
        }
        runs.add(new Run("segment-" + segment, child.lines(), checkpointBefore));
      }
      for (Future<?> batch : batches) {
        batch.get(60, TimeUnit.SECONDS);
      }

      // the final run: the last batch arrives only after it started
      boolean checkpointBefore = !CrashRuns.completeCheckpoints(checkpoints).isEmpty();
      last = ChildJob.start("final", log, KafkaCrashPipelineMain.class, args);
      int startedLine = last.awaitLine(0, "STARTED"::equals, System.nanoTime() + TimeUnit.SECONDS.toNanos(60));
      assertThat(startedLine).as("%s: the final run started\n%s", seedNote, last.tail(40)).isGreaterThanOrEqualTo(0);
      producer.produce(BATCH);
      expected = producer.expectedFiles();
      long lastBatchNanos = System.nanoTime();
      String settled = awaitSettled(last, out, expected);
      System.out.println("KafkaCrashRecoveryIT the final run settled " + (System.nanoTime() - lastBatchNanos) / 1_000_000
          + " ms after the last batch was acknowledged (" + GRACE_MS + " ms of it the grace period)");
      runs.add(new Run("final", last.lines(), checkpointBefore));
      assertThat(settled).as("%s: the final run's result files\n%s", seedNote, last.tail(40)).isEmpty();
    } finally {
      producing.shutdownNow();
      if (last != null) {
        last.close();
      }
    }
    long elapsedMs = (System.nanoTime() - startedNanos) / 1_000_000;
    long midCheckpoint = kills.stream().filter(Kill::midCheckpoint).count();
    long afterCheckpoint = kills.stream().filter(k -> k.trigger().equals("checkpoint")).count();
    System.out.printf("KafkaCrashRecoveryIT %s: %d kills, %d right after a new checkpoint entry, %d left a "
        + "checkpoint without its manifest; %d records; %d ms in all%n", seedNote, kills.size(), afterCheckpoint,
        midCheckpoint, expected.values().stream().mapToLong(v -> Long.parseLong(v.substring(6))).sum(), elapsedMs);

    SoftAssertions soft = new SoftAssertions();
    StringBuilder restores = new StringBuilder();
    long lastRestored = -1;
    Map<Integer, Long> lastOffsets = new TreeMap<>();
    int restoredRuns = 0;
    for (Run run : runs) {
      long restored = CrashRuns.restoredId(run.lines());
      Map<Integer, Long> offsets = startOffsets(run.lines());
      boolean started = run.lines().contains("STARTED");
      restores.append("\n  ").append(run.name()).append(": ")
          .append(restored >= 0 ? "restored " + restored
              : CrashRuns.startedWithoutCheckpoint(run.lines()) ? "no checkpoint" : "(no restore line)")
          .append(run.checkpointBefore() ? "" : " (no complete checkpoint before it)")
          .append(", readers from ").append(offsets);
      if (run.checkpointBefore() && started) {
        soft.assertThat(restored).as("%s started after a checkpoint was complete but did not restore one",
            run.name()).isGreaterThanOrEqualTo(0);
      }
      if (restored >= 0) {
        restoredRuns++;
        soft.assertThat(restored).as("%s restored an older checkpoint than a run before it", run.name())
            .isGreaterThanOrEqualTo(lastRestored);
        lastRestored = restored;
        for (Map.Entry<Integer, Long> e : offsets.entrySet()) {
          soft.assertThat(e.getValue()).as("%s partition %d resumed before an earlier run's position", run.name(),
              e.getKey()).isGreaterThanOrEqualTo(lastOffsets.getOrDefault(e.getKey(), 0L));
          lastOffsets.merge(e.getKey(), e.getValue(), Math::max);
        }
      }
    }
    System.out.println("KafkaCrashRecoveryIT restores:" + restores);
    Run finalRun = runs.get(runs.size() - 1);
    soft.assertThat(CrashRuns.restoredId(finalRun.lines())).as("the final run restored a checkpoint")
        .isGreaterThanOrEqualTo(0);
    Map<Integer, Long> finalOffsets = startOffsets(finalRun.lines());
    soft.assertThat(finalOffsets.keySet()).as("the final run's readers opened every partition")
        .hasSize(PARTITIONS);
    finalOffsets.forEach((partition, offset) -> soft.assertThat(offset)
        .as("the final run's reader of partition %d resumed past offset 0", partition).isPositive());
    soft.assertThat(restoredRuns).as("runs that restored a checkpoint").isGreaterThanOrEqualTo(KILLS / 2);
    try {
      soft.assertAll();
    } catch (AssertionError e) {
      throw new AssertionError(seedNote + "; child logs in " + log + "\nrestores:" + restores + "\n"
          + e.getMessage(), e);
    }
  }

  /**
   * Waits until the files under {@code out} equal {@code expected} and nothing changed for
   * {@link #GRACE_MS}. Gives up at once when a count exceeds its key's records (counted twice:
   * no replay can take it back down to an exact count), when nothing changed for
   * {@link #STALL_MS}, after 90 s, or when the child ended.
   *
   * @return "" if settled, else why not and the difference
   */
  private static String awaitSettled(ChildJob child, Path out, Map<String, String> expected) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    Map<String, String> seen = null;
    long unchangedSince = System.nanoTime();
    String why = "not settled within 90 s: ";
    while (System.nanoTime() < deadline) {
      if (!child.isAlive()) {
        why = "the final run ended: ";
        break;
      }
      Map<String, String> now = readCounts(out);
      if (!now.equals(seen)) {
        seen = now;
        unchangedSince = System.nanoTime();
      }
      long unchangedMs = (System.nanoTime() - unchangedSince) / 1_000_000;
      if (now.equals(expected) && unchangedMs >= GRACE_MS) {
        return "";
      }
      if (overCounted(now, expected)) {
        why = "a key was counted past its records: ";
        break;
      }
      if (unchangedMs >= STALL_MS) {
        why = "nothing changed for " + STALL_MS + " ms: ";
        break;
      }
      Thread.sleep(50);
    }
    return why + CrashRuns.diff(expected, readCounts(out), 20);
  }

  /** Whether a file's {@code count=<n>} exceeds the expected file's. */
  private static boolean overCounted(Map<String, String> actual, Map<String, String> expected) {
    for (Map.Entry<String, String> e : actual.entrySet()) {
      String want = expected.get(e.getKey());
      if (want == null || Long.parseLong(e.getValue().substring(6)) > Long.parseLong(want.substring(6))) {
        return true;
      }
    }
    return false;
  }

  /**
   * The count files under {@code out} (name, content), skipping the writer's temporaries (names
   * starting with '.') and files renamed away while listed.
   */
  static Map<String, String> readCounts(Path out) throws IOException {
    Map<String, String> files = new TreeMap<>();
    if (!Files.isDirectory(out)) {
      return files;
    }
    List<Path> names;
    try (Stream<Path> list = Files.list(out)) {
      names = list.filter(f -> !f.getFileName().toString().startsWith(".")).toList();
    }
    for (Path f : names) {
      try {
        files.put(f.getFileName().toString(), Files.readString(f, StandardCharsets.UTF_8));
      } catch (NoSuchFileException e) {
        // replaced by an atomic rename while read: the next poll sees the new content
      }
    }
    return files;
  }

  /** Per partition, the offset KafkaIO's reader first logged it started from in a run. */
  static Map<Integer, Long> startOffsets(List<String> lines) {
    Map<Integer, Long> offsets = new TreeMap<>();
    for (String line : lines) {
      Matcher m = OFFSET.matcher(line);
      if (m.find() && m.group(1).equals(TOPIC)) {
        offsets.putIfAbsent(Integer.parseInt(m.group(2)), Long.parseLong(m.group(3)));
      }
    }
    return offsets;
  }

  /**
   * Waits for the moment of this segment's kill (not killing), timed from the moment KafkaIO's
   * first reader logged its start offsets (the job runs, its consumers are connected), and never
   * later than {@link #SEGMENT_CAP_MS} after it.
   */
  private static Kill killAtTheChosenMoment(ChildJob child, int segment, Kind kind, Random random, Path checkpoints)
      throws Exception {
    long plainAtMs = 300 + random.nextLong(2_500);
    long armAtMs = 300 + random.nextLong(1_700);
    long extraMs = random.nextLong(21);
    int startedLine = child.awaitLine(0, l -> OFFSET.matcher(l).find(),
        System.nanoTime() + TimeUnit.SECONDS.toNanos(60));
    if (startedLine < 0) {
      return new Kill(segment, kind, child.isAlive() ? "no reader within 60 s" : "exited", -1, false);
    }
    long startedAt = child.lineNanos(startedLine);
    String trigger = null;
    try (WatchService watch = FileSystems.getDefault().newWatchService()) {
      WatchKey key = null;
      while (trigger == null) {
        long age = (System.nanoTime() - startedAt) / 1_000_000;
        if (!child.isAlive()) {
          return new Kill(segment, kind, "exited", age, false);
        }
        if (age >= SEGMENT_CAP_MS) {
          trigger = "cap";
        } else if (kind == Kind.PLAIN && age >= plainAtMs) {
          trigger = "time";
        } else if (kind == Kind.CHECKPOINT && age >= armAtMs) {
          if (key == null) {
            if (Files.isDirectory(checkpoints)) {
              key = checkpoints.register(watch, StandardWatchEventKinds.ENTRY_CREATE);
            }
          } else if (!key.pollEvents().isEmpty()) {
            trigger = "checkpoint";
          }
        }
        if (trigger == null) {
          try {
            watch.poll(2, TimeUnit.MILLISECONDS);
          } catch (ClosedWatchServiceException e) {
            throw new IllegalStateException(e);
          }
        }
      }
    }
    if (trigger.equals("checkpoint")) {
      Thread.sleep(extraMs);
    }
    List<Path> all = CrashRuns.checkpoints(checkpoints);
    boolean midCheckpoint = !all.isEmpty() && !Files.exists(all.get(all.size() - 1).resolve(CrashRuns.MANIFEST));
    return new Kill(segment, kind, trigger, (System.nanoTime() - startedAt) / 1_000_000, midCheckpoint);
  }

  /**
   * Produces records to {@link #TOPIC}: key {@code k<0..6>} and partition drawn from its random,
   * in chunks of 100 every 40 ms, counting per key what the broker acknowledged (the producer is
   * idempotent, Kafka's default, so a retried send is not stored twice). Threading: one batch at a
   * time (the test's producing thread, then the test thread once that is done).
   */
  private static final class Producer implements AutoCloseable {
    private final KafkaProducer<String, String> producer;
    private final Random random;
    private final long[] perKey = new long[KEYS];
    private long sent;

    Producer(KafkaBroker broker, Random random) {
      Properties p = new Properties();
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
      p.put(ProducerConfig.ACKS_CONFIG, "all");
      p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
      this.producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
      this.random = random;
    }

    synchronized Void produce(int records) throws Exception {
      List<Future<?>> acks = new ArrayList<>();
      for (int i = 0; i < records; i++) {
        int key = random.nextInt(KEYS);
        acks.add(producer.send(new ProducerRecord<>(TOPIC, random.nextInt(PARTITIONS), "k" + key, "r" + sent++)));
        perKey[key]++;
        if (i % 100 == 99) {
          producer.flush();
          Thread.sleep(40);
        }
      }
      producer.flush();
      for (Future<?> ack : acks) {
        ack.get(30, TimeUnit.SECONDS);
      }
      return null;
    }

    /** The result files every key must end with: {@code k<i>} holding {@code count=<records of k<i>>}. */
    synchronized Map<String, String> expectedFiles() {
      Map<String, String> files = new TreeMap<>();
      for (int k = 0; k < KEYS; k++) {
        if (perKey[k] > 0) {
          files.put("k" + k, "count=" + perKey[k]);
        }
      }
      return files;
    }

    @Override
    public void close() {
      producer.close();
    }
  }
}
