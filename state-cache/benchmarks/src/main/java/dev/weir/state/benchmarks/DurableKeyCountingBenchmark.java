package dev.weir.state.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Scenario 4 of Samza's 2015 single-node benchmark, in process: <b>key counting with RocksDB and a
 * changelog</b>. Samza made state durable by sending every write to a Kafka changelog topic; Weir
 * makes it durable by committing the staged batch with an fsync of RocksDB's write-ahead log
 * ({@link dev.weir.state.store.rocksdb.RocksDbSettings#withSyncCommits(boolean)
 * withSyncCommits(true)}, the default). This benchmark prices that durable commit.
 *
 * <p>Workload: exactly {@link KeyCountingBenchmark}'s (message loop, then read-increment-write of
 * the key's 8-byte count in a {@link dev.weir.state.store.rocksdb.RocksDbStorage}), with a durable
 * commit every {@code commitEvery} messages. The fsync goes to the file system of
 * {@code java.io.tmpdir} (set it with {@code -jvmArgsAppend "-Xms2g -Xmx2g -Djava.io.tmpdir=/disk"}); its
 * price depends entirely on that device.
 *
 * <p>Data shapes: messages of {@value Workload#MESSAGE_BYTES} bytes, keys of
 * {@value Workload#KEY_BYTES} bytes, counts of 8 bytes, {@code keys} = 1,000,000 by default, all
 * prepopulated with 0 and committed before measuring. {@code commitEvery} = 1,000 and 10,000
 * messages by default. With {@code -jvmArgsAppend "-Xms2g -Xmx2g -Dweir.bench.check=true"} the
 * teardown checks that the counts add up to the messages consumed.
 *
 * <p>The score is messages per second; compare with {@link KeyCountingBenchmark}'s {@code ROCKSDB}
 * score (same work, commits not fsynced).
 *
 * <pre>{@code
 * mvn -B -q -pl state-cache,state-cache/benchmarks -am package -DskipTests
 * java -jar state-cache/benchmarks/target/benchmarks.jar DurableKeyCountingBenchmark \
 *     -f 1 -wi 2 -w 2s -i 3 -r 3s -rf json -rff durable-key-counting.json
 * }</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class DurableKeyCountingBenchmark {

  /** The counting task over a RocksDB storage with synced commits; one per benchmark thread. */
  @State(Scope.Thread)
  public static class Task {
    /** Number of distinct keys. */
    @Param("1000000")
    int keys;

    /** Messages between two durable commits. */
    @Param({"1000", "10000"})
    int commitEvery;

    KeyCountingTask task;

    @Setup
    public void setUp() {
      task = KeyCountingTask.open(KeyCountingTask.Backend.ROCKSDB_SYNC, keys, commitEvery);
    }

    @TearDown
    public void tearDown() {
      if (task != null) {
        task.close();
      }
    }
  }

  /** One message: pass it, read-increment-write its key's count; returns the new count. */
  @Benchmark
  public long countKeyDurably(Task t) {
    return t.task.process();
  }
}
