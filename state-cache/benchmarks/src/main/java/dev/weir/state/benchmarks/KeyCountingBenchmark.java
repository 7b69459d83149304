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
 * Scenarios 2 and 3 of Samza's 2015 single-node benchmark, in process: <b>key counting with the
 * in-memory store</b> and <b>key counting with RocksDB</b> (no changelog).
 *
 * <p>Workload: the message loop of {@link MessagePassingBenchmark} (one ~100-byte message per
 * operation, uniform random over {@code keys} keys, through a half-full
 * {@link java.util.concurrent.ArrayBlockingQueue}), then, per message, the task of
 * {@link KeyCountingTask}: read the key's 8-byte count from a
 * {@link dev.weir.state.store.SortedByteStore}, add one, put it back. Every {@code commitEvery}
 * messages the storage commits with the input offset as metadata; for RocksDB that writes the
 * staged batch (see {@link dev.weir.state.store.StateStorage#stagedBytes()}) without fsync, so
 * staged writes stay bounded and the cost of a commit is amortised as a runner would.
 *
 * <p>Data shapes: messages of {@value Workload#MESSAGE_BYTES} bytes, keys of
 * {@value Workload#KEY_BYTES} bytes, counts of 8 bytes, {@code keys} = 1,000,000 by default, all
 * prepopulated with 0 and committed before measuring (every read finds its key). {@code backend}
 * is {@code IN_MEMORY} ({@link dev.weir.state.store.memory.InMemoryStorage}) or {@code ROCKSDB}
 * ({@link dev.weir.state.store.rocksdb.RocksDbStorage} with default settings and
 * {@code syncCommits=false}, in a scratch directory under {@code java.io.tmpdir}). With
 * {@code -jvmArgsAppend "-Xms2g -Xmx2g -Dweir.bench.check=true"} the teardown checks that the
 * counts add up to the messages consumed.
 *
 * <p>The score is messages per second. Subtract {@link MessagePassingBenchmark}'s cost per message
 * to get the store's.
 *
 * <pre>{@code
 * mvn -B -q -pl state-cache,state-cache/benchmarks -am package -DskipTests
 * java -jar state-cache/benchmarks/target/benchmarks.jar KeyCountingBenchmark \
 *     -f 1 -wi 2 -w 2s -i 3 -r 3s -rf json -rff key-counting.json
 * }</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class KeyCountingBenchmark {

  /** The counting task over its storage; one per benchmark thread. */
  @State(Scope.Thread)
  public static class Task {
    /** Number of distinct keys. */
    @Param("1000000")
    int keys;

    /** The byte store under the task. */
    @Param({"IN_MEMORY", "ROCKSDB"})
    KeyCountingTask.Backend backend;

    /** Messages between two commits. */
    @Param("10000")
    int commitEvery;

    KeyCountingTask task;

    @Setup
    public void setUp() {
      task = KeyCountingTask.open(backend, keys, commitEvery);
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
  public long countKey(Task t) {
    return t.task.process();
  }
}
