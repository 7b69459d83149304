// Role: the child JVM of `bin/weir bench rocksdb-miss` and `bin/weir bench cpu-bound`: per-key
// counting in a stateful DoFn (a ValueState read and written per element), over a key space far
// larger than the object cache (every read misses and goes to RocksDB) or small enough to stay in
// it (pure CPU). The scenarios of Samza's asynchronous-processing study that are not about remote
// calls. Writes what it measured as one JSON document.
// Threading: the main thread builds and runs the pipeline; the runner's threads run it.
package dev.weir.nexmark.harness;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TypeDescriptors;

/**
 * {@code StateCountBench --elements=N --keys=K --out=FILE <pipeline args>}: N elements of a bounded
 * {@code GenerateSequence}, each keyed by a multiplicative hash of its index modulo K (so keys
 * spread over the whole space from the first element on), counted per key in a {@code ValueState};
 * the DoFn outputs one element per input, whose global count must equal N.
 *
 * <p>Measured: wall time of {@code run()} to finish and elements per second over it (start-up
 * included: the driver sizes N so that it is a small share), process CPU time per element.
 *
 * <p>Exit status 0 when the count matched, 1 otherwise, 2 on bad arguments.
 */
public final class StateCountBench {
  private static final AtomicLong COUNTED = new AtomicLong(-1);

  private StateCountBench() {}

  public static void main(String[] args) throws Exception {
    List<String> pipelineArgs = new ArrayList<>();
    Map<String, String> own = BenchRun.split(args, List.of("elements", "keys", "out", "scenario"), pipelineArgs);
    if (!own.containsKey("elements") || !own.containsKey("keys") || !own.containsKey("out")) {
      System.err.println("usage: StateCountBench --elements=N --keys=K --out=FILE [--scenario=NAME] <pipeline args>");
      System.exit(2);
    }
    long n = Long.parseLong(own.get("elements"));
    long keys = Long.parseLong(own.get("keys"));
    Path out = Path.of(own.get("out"));
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("scenario", own.getOrDefault("scenario", "state-count"));
    doc.put("elements", n);
    doc.put("keys", keys);
    doc.put("pipelineArgs", pipelineArgs);
    int status = BenchRun.run(pipelineArgs, n, p -> p.apply(GenerateSequence.from(0).to(n))
        .apply("Key", MapElements.into(TypeDescriptors.kvs(TypeDescriptors.longs(), TypeDescriptors.longs()))
            .via((Long i) -> KV.of(Math.floorMod(i * 0x9E3779B97F4A7C15L, keys), i)))
        .setCoder(KvCoder.of(VarLongCoder.of(), VarLongCoder.of()))
        .apply("CountPerKey", ParDo.of(new CountPerKey()))
        .apply(Count.globally())
        .apply(ParDo.of(new Record())), COUNTED, doc);
    BenchRun.write(out, doc);
    System.exit(status);
  }


  /** Reads the key's count, adds one, writes it back; outputs the element's index. */
  static final class CountPerKey extends DoFn<KV<Long, Long>, Long> {
    @StateId("count")
    private final StateSpec<ValueState<Long>> count = StateSpecs.value(VarLongCoder.of());

    @ProcessElement
    public void process(@Element KV<Long, Long> kv, @StateId("count") ValueState<Long> count,
        OutputReceiver<Long> out) {
      Long before = count.read();
      count.write(before == null ? 1 : before + 1);
      out.output(kv.getValue());
    }
  }

  /** Records the global count. */
  static final class Record extends DoFn<Long, Void> {
    @ProcessElement
    public void process(@Element Long counted) {
      COUNTED.set(counted);
    }
  }
}
