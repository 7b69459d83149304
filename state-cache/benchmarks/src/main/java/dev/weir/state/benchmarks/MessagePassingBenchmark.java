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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Scenario 1 of Samza's 2015 single-node benchmark, in process: <b>message passing</b>, a task
 * that receives each message and does nothing stateful with it.
 *
 * <p>Workload: one thread runs the loop of {@link InProcessStream}: per operation the producer
 * offers one ~100-byte message (a uniform random pick among {@code keys} pre-generated messages,
 * one per key) to a bounded queue of 1,024 slots kept half full, the consumer polls the oldest
 * message and copies its 16-byte key out of it (the first thing a task's key deserializer does).
 * That key is what the key-counting scenarios ({@link KeyCountingBenchmark},
 * {@link DurableKeyCountingBenchmark}) then look up, so this benchmark is the floor under them:
 * their per-message cost minus this one is the cost of the state store.
 *
 * <p>Data shapes: messages of {@value Workload#MESSAGE_BYTES} bytes, keys of
 * {@value Workload#KEY_BYTES} bytes, {@code keys} = 1,000,000 by default (lower it with
 * {@code -p keys=...}). {@code queue} is the queue under the stream: {@code ARRAY_BLOCKING_QUEUE}
 * ({@link java.util.concurrent.ArrayBlockingQueue}) or {@code ARRAY_RING} (a lock-free
 * single-threaded array ring).
 *
 * <p>Unlike Samza's run there is no Kafka, no network and no serialization: one op = one message
 * handed from producer to consumer on one thread. The score is messages per second.
 *
 * <pre>{@code
 * mvn -B -q -pl state-cache,state-cache/benchmarks -am package -DskipTests
 * java -jar state-cache/benchmarks/target/benchmarks.jar MessagePassingBenchmark \
 *     -f 1 -wi 2 -w 2s -i 3 -r 3s -rf json -rff message-passing.json
 * }</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class MessagePassingBenchmark {

  /** The stream and its pre-generated messages; one per benchmark thread. */
  @State(Scope.Thread)
  public static class Source {
    /** Number of distinct keys (and pre-generated messages). */
    @Param("1000000")
    int keys;

    /** The queue implementation under the stream. */
    @Param({"ARRAY_BLOCKING_QUEUE", "ARRAY_RING"})
    InProcessStream.Kind queue;

    InProcessStream stream;

    @Setup
    public void setUp() {
      stream = new InProcessStream(queue, Workload.messages(keys), Workload.uniformIndices(keys));
    }
  }

  /** One message from producer to consumer; returns the key the consumer extracted. */
  @Benchmark
  public byte[] passMessage(Source s) {
    return Workload.keyOf(s.stream.next());
  }
}
