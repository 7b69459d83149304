package dev.weir.samza;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.testservices.KafkaBroker;
import dev.weir.testservices.KafkaBrokerExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 43's crash test: exactly-once state in every stage of a SAMZA_STANDALONE job across
 * processes, under SIGKILLs at seeded random moments. Three child JVMs (processor ids 0-2,
 * passthrough coordinator, {@code weir.processing.guarantee} and {@code task.commit.ms} left at
 * their defaults: exactly-once, a commit per task every second) run {@link ExactlyOnceCrashMain} on a real broker
 * (test-services' {@link KafkaBroker}): KafkaIO, a stateful relay with a side input and a
 * processing-time timer after one shuffle, a stateful count and sum per group after a second
 * shuffle, and 2-second windows summed per key (GroupByKey and Combine). While records are written
 * ({@value #RATE} per second, until 2 s after the last restart), the test kills a random process
 * {@value #KILLS} times: every other kill the moment a checkpoint record of one of the victim's
 * tasks appears on the checkpoint topic (read uncommitted: the transaction it commits is still
 * open, i.e. mid-commit), the others at a random time; after a third of the kills the victim's
 * whole local state directory is deleted too (its stores then come from the changelog alone).
 * Each victim is started again at once.
 *
 * <p>The kills start once the first element went through every stage, and each waits until the
 * previous victim runs its tasks again (with the passthrough coordinator a dead process's tasks
 * wait for it, and so does everything downstream of them).
 *
 * <p>At the end the job's results must equal what the input determines, i.e. what a run without
 * crashes gives: every group's count and sum (the highest count written, and every line with it)
 * and every window's sum per key; no count ever above the input's; no window with two different
 * sums. A task whose replayed outputs reached the next stage's state twice, a relay whose kept
 * values were lost or sent twice, or a window that counted an element twice or lost one, fails it.
 * With {@code weir.processing.guarantee=at_least_once} the same test fails (counts above the
 * input's, e.g. after a kill between a relay's send and its commit).
 *
 * <p>The seed is printed; {@code -Dweir.crash.seed=N} repeats a run's kill schedule (not its
 * timing); {@code -Dweir.crash.guarantee=at_least_once} runs the job at-least-once, to see it
 * fail. Runtime: the kills (1-4 s apart; a mid-commit kill waits for its victim's tasks to start)
 * plus the final settling.
 */
class SamzaExactlyOnceCrashIT {
  static final int PARTITIONS = 6;
  /** Input records per second, while the kills go on. */
  static final int RATE = 100;
  static final int KILLS = 10;
  private static final long FIRST_TALLY_TIMEOUT_MS = 120_000;
  private static final long SETTLE_TIMEOUT_MS = 150_000;
  private static final boolean EXACTLY_ONCE =
      System.getProperty("weir.crash.guarantee", "exactly_once").equals("exactly_once");

  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  @Test
  void threeProcesses_tenSeededKills_someMidCommit_resultsEqualAnUncrashedRun() throws Exception {
    long seed = Long.getLong("weir.crash.seed", System.nanoTime());
    System.out.println("SamzaExactlyOnceCrashIT: seed " + seed + " (-Dweir.crash.seed=" + seed + " repeats it)");
    Random random = new Random(seed);
    KafkaBroker broker = KAFKA.broker();
    String topic = "eos-input";
    broker.createTopic(topic, PARTITIONS);
    Path dir = Path.of("target", "samza-eos-crash-it", Long.toString(System.currentTimeMillis())).toAbsolutePath();
    Files.createDirectories(dir);
    String jobId = "r" + System.currentTimeMillis();
    String checkpointTopic = "weir-eoscrash-" + jobId + "-checkpoints";
    Expected expected = new Expected();
    Process[] processes = new Process[3];
    int[] starts = new int[3];
    List<String> kills = new ArrayList<>();
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all"),
        new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < 3; i++) {
        starts[i]++;
        processes[i] = start(i, starts[i], dir, broker.bootstrapServers(), topic, jobId);
      }
      AtomicBoolean stop = new AtomicBoolean();
      Thread writer = new Thread(() -> write(producer, topic, expected, stop), "eos-crash-writer");
      long t0 = System.currentTimeMillis();
      writer.start();
      awaitTallied(dir, 1, processes); // the job is up: side input ready, elements through every stage
      for (int k = 0; k < KILLS; k++) {
        Thread.sleep(500 + random.nextInt(2_500));
        int victim = random.nextInt(3);
        boolean midCommit = k % 2 == 1;
        boolean wipe = k % 3 == 2;
        String when = "at random";
        if (midCommit) {
          Set<String> tasks = awaitTasks(log(dir, victim, starts[victim]));
          String task = awaitCheckpointRecord(broker.bootstrapServers(), checkpointTopic, tasks, 20_000);
          when = task == null ? "at random (no checkpoint of " + tasks + " within 20 s)"
              : "mid-commit of " + task;
        }
        StandaloneProcesses.kill(processes[victim]);
        if (wipe) {
          StandaloneProcesses.deleteTree(dir.resolve("state-" + victim));
        }
        kills.add(String.format("kill %d at +%.1f s: process %d, %s, state %s; %d of %d records tallied", k + 1,
            (System.currentTimeMillis() - t0) / 1000.0, victim, when, wipe ? "wiped" : "kept", tallied(dir),
            expected.records));
        System.out.println("SamzaExactlyOnceCrashIT: " + kills.get(kills.size() - 1));
        starts[victim]++;
        processes[victim] = start(victim, starts[victim], dir, broker.bootstrapServers(), topic, jobId);
        // the next kill once the victim runs its tasks again (a kill while it starts is no test of a commit)
        awaitTasks(log(dir, victim, starts[victim]));
      }
      Thread.sleep(2_000); // input after the last restart, counted on restored state
      stop.set(true);
      writer.join();
      System.out.println("SamzaExactlyOnceCrashIT: " + expected.records + " records written over "
          + (System.currentTimeMillis() - t0) / 1000 + " s");
      awaitResults(dir, expected, processes, kills);
      if (EXACTLY_ONCE) {
        for (int i = 0; i < 3; i++) {
          assertThat(Files.readString(log(dir, i, starts[i])))
              .as("process %d's last start initialized its tasks' transactions", i)
              .contains("exactly-once: initialized the Kafka transactions of");
        }
      }
      System.out.println("SamzaExactlyOnceCrashIT: results equal the input's after " + KILLS + " kills; logs in " + dir);
    } finally {
      StandaloneProcesses.killAll(processes);
    }
  }

  /** What the input determines: per group count and sum, per (window start, key) the sum. */
  private static final class Expected {
    final Map<String, long[]> groups = new ConcurrentHashMap<>();
    final Map<String, Long> windows = new ConcurrentHashMap<>();
    /** Records written (by the writer thread; read after it ended). */
    volatile long records;

    void add(String key, long value, long timestampMs) {
      long weighted = value * ExactlyOnceCrashMain.weight(key);
      groups.compute(ExactlyOnceCrashMain.group(key),
          (g, cs) -> cs == null ? new long[] {1, weighted} : new long[] {cs[0] + 1, cs[1] + weighted});
      long start = timestampMs - Math.floorMod(timestampMs, ExactlyOnceCrashMain.WINDOW_MS);
      windows.merge(start + " " + key, weighted, Long::sum);
    }
  }

  /**
   * Writes {@value #RATE} records per second until {@code stop}: record i has key {@code k<i mod 12>}
   * (each key on one partition, so its timestamps rise within it), value {@code 1 + i mod 5}, and
   * the writer's clock as its timestamp.
   */
  private static void write(KafkaProducer<String, String> producer, String topic, Expected expected,
      AtomicBoolean stop) {
    long start = System.currentTimeMillis();
    for (int i = 0; !stop.get(); i++) {
      long due = start + i * 1000L / RATE;
      long now = System.currentTimeMillis();
      if (due > now) {
        try {
          Thread.sleep(due - now);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      int keyIndex = i % ExactlyOnceCrashMain.KEYS;
      String key = "k" + keyIndex;
      long value = 1 + i % 5;
      long timestamp = System.currentTimeMillis();
      producer.send(new ProducerRecord<>(topic, keyIndex % PARTITIONS, timestamp, key, Long.toString(value)));
      expected.add(key, value, timestamp);
      expected.records++;
    }
    producer.flush();
  }

  private static final Pattern TASKS_LINE = Pattern.compile("Successfully loaded last processed offsets: (.*)");
  private static final Pattern TASK = Pattern.compile("(stage-\\d+-p\\d+)=");

  /** Waits (up to {@value #FIRST_TALLY_TIMEOUT_MS} ms) until at least {@code n} tally lines are written. */
  private static void awaitTallied(Path dir, long n, Process[] processes) throws Exception {
    long deadline = System.currentTimeMillis() + FIRST_TALLY_TIMEOUT_MS;
    while (tallied(dir) < n) {
      for (int i = 0; i < processes.length; i++) {
        assertThat(processes[i].isAlive()).as("process %d alive; see its logs in %s", i, dir).isTrue();
      }
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("no tally line within " + FIRST_TALLY_TIMEOUT_MS + " ms; the broker's open "
            + "transactions: "
            + openTransactions(KAFKA.broker().bootstrapServers()) + "; logs in " + dir);
      }
      Thread.sleep(100);
    }
  }

  /** The broker's transactions that are not complete: id, state, age and partitions (for a stalled job's report). */
  static String openTransactions(String bootstrap) {
    try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(
        Map.of(org.apache.kafka.clients.admin.AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      List<String> ids = new ArrayList<>();
      for (var listing : admin.listTransactions().all().get()) {
        ids.add(listing.transactionalId());
      }
      List<String> open = new ArrayList<>();
      for (var e : admin.describeTransactions(ids).all().get().entrySet()) {
        var d = e.getValue();
        if (!d.topicPartitions().isEmpty()) {
          open.add(e.getKey() + " " + d.state() + " for "
              + (System.currentTimeMillis() - d.transactionStartTimeMs().orElse(System.currentTimeMillis())) + " ms on "
              + d.topicPartitions());
        }
      }
      return open.isEmpty() ? "none" : String.join("; ", open);
    } catch (Exception e) {
      return "(cannot list: " + e + ")";
    }
  }

  /** Tally lines written so far (elements counted, replays included). */
  private static long tallied(Path dir) throws IOException {
    long n = 0;
    for (int i = 0; i < 3; i++) {
      n += StandaloneProcesses.wholeLines(dir.resolve("out-" + i + ".txt")).stream().filter(l -> l.startsWith("T ")).count();
    }
    return n;
  }

  /** The log of process {@code processor}'s {@code start}-th start. */
  private static Path log(Path dir, int processor, int start) {
    return dir.resolve("process-" + processor + "-" + start + ".log");
  }

  /**
   * The tasks of the process that writes {@code log} (samza-core's offset manager line), waiting up
   * to 30 s for it to get there; none if it does not.
   */
  private static Set<String> awaitTasks(Path log) throws IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + 30_000;
    while (System.currentTimeMillis() < deadline) {
      for (String line : StandaloneProcesses.wholeLines(log)) {
        Matcher m = TASKS_LINE.matcher(line);
        if (m.find()) {
          Set<String> tasks = new TreeSet<>();
          Matcher t = TASK.matcher(m.group(1));
          while (t.find()) {
            tasks.add(t.group(1));
          }
          return tasks;
        }
      }
      Thread.sleep(100);
    }
    return Set.of();
  }

  /**
   * Waits for the next record on the checkpoint topic (read uncommitted: seen before its transaction
   * commits) of one of {@code tasks}; its task, or null after {@code timeoutMs}.
   */
  private static String awaitCheckpointRecord(String bootstrap, String topic, Set<String> tasks, long timeoutMs) {
    if (tasks.isEmpty()) {
      return null;
    }
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted",
        ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "5"), new StringDeserializer(), new StringDeserializer())) {
      consumer.assign(List.of(tp));
      consumer.seekToEnd(List.of(tp));
      consumer.position(tp);
      long deadline = System.currentTimeMillis() + timeoutMs;
      while (System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(5))) {
          if (tasks.contains(r.key())) {
            return r.key();
          }
        }
      }
    }
    return null;
  }

  /**
   * Waits until the output files show the expected results; fails at once on a count above the
   * input's or a window with two sums, and after {@value #SETTLE_TIMEOUT_MS} ms with the difference.
   */
  private static void awaitResults(Path dir, Expected expected, Process[] processes, List<String> kills)
      throws Exception {
    long deadline = System.currentTimeMillis() + SETTLE_TIMEOUT_MS;
    String difference = "";
    while (System.currentTimeMillis() < deadline) {
      Map<String, long[]> tally = new TreeMap<>(); // group -> highest count and its sum
      Map<String, Set<Long>> windows = new TreeMap<>();
      for (int i = 0; i < 3; i++) {
        for (String line : StandaloneProcesses.wholeLines(dir.resolve("out-" + i + ".txt"))) {
          String[] f = line.split(" ");
          if (f[0].equals("T") && f.length == 4) {
            long count = Long.parseLong(f[2]);
            long sum = Long.parseLong(f[3]);
            long[] want = expected.groups.get(f[1]);
            assertThat(want).as("group %s is one the input has (%s)", f[1], kills).isNotNull();
            assertThat(count).as("count of %s (never above the input's); %s; logs in %s", f[1], kills, dir)
                .isLessThanOrEqualTo(want[0]);
            long[] best = tally.get(f[1]);
            if (best == null || count > best[0]) {
              tally.put(f[1], new long[] {count, sum});
            } else if (count == best[0]) {
              assertThat(sum).as("sum of %s at count %d in two lines; %s", f[1], count, kills).isEqualTo(best[1]);
            }
          } else if (f[0].equals("W") && f.length == 4) {
            windows.computeIfAbsent(f[1] + " " + f[2], w -> new TreeSet<>()).add(Long.parseLong(f[3]));
          }
        }
      }
      for (Map.Entry<String, Set<Long>> w : windows.entrySet()) {
        assertThat(w.getValue()).as("window %s: one sum, the input's (%s); %s; logs in %s", w.getKey(),
            expected.windows.get(w.getKey()), kills, dir).hasSize(1);
      }
      difference = difference(expected, tally, windows);
      if (difference.isEmpty()) {
        return;
      }
      for (int i = 0; i < processes.length; i++) {
        assertThat(processes[i].isAlive()).as("process %d alive; see its logs in %s", i, dir).isTrue();
      }
      Thread.sleep(500);
    }
    throw new AssertionError("results differ from the input's after " + SETTLE_TIMEOUT_MS + " ms: " + difference
        + "; " + kills + "; logs in " + dir);
  }

  private static String difference(Expected expected, Map<String, long[]> tally, Map<String, Set<Long>> windows) {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<String, long[]> g : new TreeMap<>(expected.groups).entrySet()) {
      long[] got = tally.get(g.getKey());
      if (got == null || got[0] != g.getValue()[0] || got[1] != g.getValue()[1]) {
        b.append(String.format("group %s: count/sum %s, input %d/%d; ", g.getKey(),
            got == null ? "none" : got[0] + "/" + got[1], g.getValue()[0], g.getValue()[1]));
      }
    }
    int missing = 0;
    int wrong = 0;
    String example = "";
    for (Map.Entry<String, Long> w : new TreeMap<>(expected.windows).entrySet()) {
      Set<Long> got = windows.get(w.getKey());
      if (got == null) {
        missing++;
      } else if (!got.contains(w.getValue())) {
        wrong++;
        example = "window " + w.getKey() + ": " + got + ", input " + w.getValue() + "; ";
      }
    }
    for (String w : windows.keySet()) {
      if (!expected.windows.containsKey(w)) {
        wrong++;
        example = "window " + w + " not in the input; ";
      }
    }
    if (missing + wrong > 0) {
      b.append(missing).append(" window result(s) missing, ").append(wrong).append(" wrong: ").append(example);
    }
    return b.toString();
  }

  private static Process start(int processor, int start, Path dir, String bootstrap, String topic, String jobId)
      throws IOException {
    return StandaloneProcesses.start(ExactlyOnceCrashMain.class, log(dir, processor, start),
        List.of("org.apache.samza.checkpoint.OffsetManager", "dev.weir.samza.WeirKafkaCheckpointManagerFactory",
            "org.apache.samza.storage.TransactionalStateTaskRestoreManager"),
        StandaloneProcesses.streamingJobArgs(dir, processor, bootstrap, topic, PARTITIONS, "eoscrash",
            ",processor.id=" + processor + ",job.container.count=3,job.id=" + jobId + ",weir.kafka.timeout.ms=10000"
                + ",weir.processing.guarantee=" + (EXACTLY_ONCE ? "exactly_once" : "at_least_once")));
  }
}
