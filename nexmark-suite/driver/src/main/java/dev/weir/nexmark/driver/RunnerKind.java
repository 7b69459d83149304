// Role: what the driver knows about each runner: its classpath module, main class, JVM flags and
// the throughput configuration it is given (recorded next to the results).
// Threading: immutable enum; safe from any thread.
package dev.weir.nexmark.driver;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The runners the driver can start; each run is a child JVM on {@link #classpathModule()}. */
public enum RunnerKind {
  /** Beam's Direct runner with its default enforcement checks (what its users get). */
  DIRECT("classpath-direct", "org.apache.beam.runners.direct.DirectRunner"),
  /**
   * Beam's classic Flink 1.19 runner on an embedded [local] cluster as shipped: RocksDB state,
   * {@code objectReuse} and {@code fasterCopy} off (every element deep-copied between chained
   * operators).
   */
  FLINK("classpath-flink", "org.apache.beam.runners.flink.FlinkRunner"),
  /**
   * Beam's Flink runner with the settings a Flink user picks for speed when state fits in memory:
   * {@code --objectReuse=true --fasterCopy=true}, heap state ({@code --stateBackend=filesystem}:
   * Flink's hash-map backend, checkpoints to files). The default comparison's peer (issue 42).
   * With checkpoints on, {@code fasterCopy} is off ({@link #checkpointOptions}): with it, the heap
   * backend's asynchronous snapshots fail.
   */
  FLINK_TUNED("classpath-flink", "org.apache.beam.runners.flink.FlinkRunner"),
  /**
   * As {@link #FLINK_TUNED} on the RocksDB state backend: the setting of the seeds' comparison ("we
   * configured the Flink and Samza runners' state store with RocksDB"), and Weir's own default.
   */
  FLINK_TUNED_ROCKSDB("classpath-flink", "org.apache.beam.runners.flink.FlinkRunner"),
  /** Weir's own runner (runner/ module), RocksDB state, same parallelism as Flink. */
  WEIR("classpath-weir", "dev.weir.runner.WeirRunner"),
  /**
   * Weir's runner on Apache Samza: {@code --executionEnvironment=SAMZA_LOCAL} (samza-core's
   * LocalApplicationRunner in the child JVM), intermediate streams on the suite's Kafka broker,
   * state in Samza RocksDB stores with Kafka changelogs; otherwise configured as {@link #WEIR}.
   */
  WEIR_SAMZA("classpath-weir-samza", "dev.weir.runner.WeirRunner"),
  /** No runner: Nexmark's generator and the query's work in a loop (Q0-Q2 only). */
  BARE("classpath-direct", null);

  /** Main class of a runner child JVM. */
  public static final String HARNESS_MAIN = "dev.weir.nexmark.harness.RunHarness";
  /** Main class of a bare child JVM. */
  public static final String BARE_MAIN = "dev.weir.nexmark.harness.BareRunner";

  /** Flink's own launch scripts pass these on Java 17 (shared/reference/peerbench/README.md). */
  static final List<String> FLINK_JAVA17_OPENS = List.of(
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.net=ALL-UNNAMED",
      "--add-opens=java.base/java.io=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
      "--add-opens=java.base/java.text=ALL-UNNAMED",
      "--add-opens=java.base/java.time=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED",
      "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
      "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
      "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED");

  private final String classpathModule;
  private final String runnerClass;

  RunnerKind(String classpathModule, String runnerClass) {
    this.classpathModule = classpathModule;
    this.runnerClass = runnerClass;
  }

  /** Lower-case name used on the command line and in results ({@code weir-samza}, ...). */
  public String id() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** The ids of all runners, comma-separated, for messages. */
  public static String ids() {
    return String.join(", ", java.util.Arrays.stream(values()).map(RunnerKind::id).toList());
  }

  /** Parses a runner id (case-insensitive; {@code weir-samza} or {@code weir_samza}). */
  public static RunnerKind of(String id) {
    try {
      return valueOf(id.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("unknown runner '" + id + "' (" + ids() + ")");
    }
  }

  /** Whether this is one of Beam's Flink runner's variants ({@code flink}, {@code flink-tuned}, ...). */
  public boolean isFlink() {
    return this == FLINK || this == FLINK_TUNED || this == FLINK_TUNED_ROCKSDB;
  }

  /**
   * Whether the runner's jobs need the suite's Kafka broker ({@link SuiteKafka}): its address and a
   * topic prefix of the run are added to the run's {@code --samzaConfigOverride}.
   */
  public boolean needsKafka() {
    return this == WEIR_SAMZA;
  }

  /** The nexmark-suite module whose target/classpath.txt this runner's child JVM uses. */
  public String classpathModule() {
    return classpathModule;
  }

  /** Main class of the child JVM. */
  public String mainClass() {
    return this == BARE ? BARE_MAIN : HARNESS_MAIN;
  }

  /** Whether this runner can run the query at all (bare: Q0-Q2 only). */
  public boolean supports(int query) {
    return this != BARE || query <= 2;
  }

  /** JVM flags beyond heap size. */
  public List<String> jvmFlags() {
    return isFlink() || this == WEIR || this == WEIR_SAMZA ? FLINK_JAVA17_OPENS : List.of();
  }

  /**
   * The runner's throughput configuration as pipeline options (name -> value; value null for a
   * bare flag). {@code cores} is the parallelism; {@code runDir} holds state directories.
   */
  public Map<String, String> runnerOptions(int cores, Path runDir) {
    Map<String, String> o = new LinkedHashMap<>();
    switch (this) {
      case DIRECT:
        o.put("runner", runnerClass);
        // Direct's defaults, stated explicitly so the command documents itself.
        o.put("enforceImmutability", "true");
        o.put("enforceEncodability", "true");
        break;
      case FLINK:
      case FLINK_TUNED:
      case FLINK_TUNED_ROCKSDB:
        o.put("runner", runnerClass);
        o.put("flinkMaster", "[local]");
        o.put("parallelism", String.valueOf(cores));
        if (this != FLINK) {
          o.put("objectReuse", "true");
          o.put("fasterCopy", "true");
        }
        // "filesystem": Beam's name for Flink's heap backend (hash maps, checkpoints to files)
        o.put("stateBackend", this == FLINK_TUNED ? "filesystem" : "rocksdb");
        o.put("stateBackendStoragePath", runDir.resolve("flink-state").toUri().toString());
        break;
      case WEIR:
      case WEIR_SAMZA:
        o.put("runner", runnerClass);
        o.put("parallelism", String.valueOf(cores));
        o.put("stateBackend", "ROCKSDB"); // WeirPipelineOptions.StateBackend
        o.put("stateDirectory", runDir.resolve("weir-state").toString());
        if (this == WEIR_SAMZA) {
          o.put("executionEnvironment", "SAMZA_LOCAL"); // WeirPipelineOptions.ExecutionEnvironment
          // ChildRun adds --samzaConfigOverride with the broker's address and the run's topic prefix
        }
        break;
      case BARE:
        o.put("threads", String.valueOf(cores));
        o.put("work", "pipeline");
        break;
      default:
        throw new AssertionError(this);
    }
    return o;
  }

  /**
   * The options that make a streaming run checkpoint every {@code intervalMs} ms (0: not at all), so
   * that every runner that can checkpoint does the same work (issue 42): Weir's
   * {@code --checkpointingIntervalMs}; Flink's {@code --checkpointingInterval} with
   * {@code --shutdownSourcesAfterIdleMs=0} (without it, Beam's Flink runner keeps a finished source
   * alive forever once checkpointing is on, and a run never ends; Flink 1.15+ checkpoints after
   * tasks finished). Empty for runners that do not checkpoint here: Direct, bare, and weir-samza,
   * whose tasks commit on Samza's {@code task.commit.ms}.
   *
   * @param intervalMs the interval, ms; 0 = no checkpoints
   */
  public Map<String, String> checkpointOptions(long intervalMs) {
    Map<String, String> o = new LinkedHashMap<>();
    if (this == WEIR) {
      o.put("checkpointingIntervalMs", String.valueOf(intervalMs));
    } else if (isFlink() && intervalMs > 0) {
      o.put("checkpointingInterval", String.valueOf(intervalMs));
      o.put("shutdownSourcesAfterIdleMs", "0");
      if (this == FLINK_TUNED) {
        // Flink's heap backend snapshots asynchronously and relies on its serializer's copy() for
        // copy-on-write; fasterCopy makes Beam's copy() return the object itself, so a snapshot
        // encodes an accumulator or map the operator is changing: ConcurrentModificationException,
        // a failed checkpoint, a restart loop (Nexmark Q6, Q9 at 200,000 events, session 28).
        o.put("fasterCopy", "false");
      }
    }
    return o;
  }

  /** Settings in force that are not passed as options (defaults), stated for the record. */
  public List<String> notes(int cores) {
    List<String> n = new ArrayList<>();
    switch (this) {
      case DIRECT:
        n.add("Direct runner defaults: enforceImmutability=true, enforceEncodability=true, "
            + "targetParallelism=max(cores,3)=" + Math.max(cores, 3) + ", blockOnRun=true");
        break;
      case FLINK:
        n.add("embedded [local] Flink 1.19 cluster, RocksDB state backend (Flink's deprecated "
            + "RocksDBStateBackend via --stateBackend=rocksdb), parallelism = cores");
        n.add("bundles: FlinkPipelineOptions defaults maxBundleSize=1000, maxBundleTimeMills=1000; "
            + "objectReuse=false, fasterCopy=false (Beam's defaults: as shipped)");
        break;
      case FLINK_TUNED:
      case FLINK_TUNED_ROCKSDB:
        n.add("embedded [local] Flink 1.19 cluster, parallelism = cores, "
            + (this == FLINK_TUNED
                ? "heap state (--stateBackend=filesystem: Flink's hash-map backend, checkpoints to files)"
                : "RocksDB state backend (--stateBackend=rocksdb)"));
        n.add("tuned for speed: objectReuse=true (no deep copy of elements between chained operators), "
            + "fasterCopy=true (no coder round trip to copy them; on heap state only without checkpoints: "
            + "the heap backend's asynchronous snapshots need a real copy, and with fasterCopy they fail on "
            + "Nexmark Q6 and Q9 with ConcurrentModificationException); bundles: FlinkPipelineOptions "
            + "defaults maxBundleSize=1000, maxBundleTimeMills=1000");
        break;
      case WEIR:
        n.add("WeirRunner with RocksDB state (behind the object cache), parallelism = cores; "
            + "containers, maxBundleSize, maxBundleTimeMs, objectCacheSize, objectCacheBytes and "
            + "metricsEnabled are WeirPipelineOptions defaults (at the time of writing: containers = "
            + "cores, 1000 elements, 1000 ms, 10000 entries, 64 MiB, true)");
        break;
      case WEIR_SAMZA:
        n.add("WeirRunner with --executionEnvironment=SAMZA_LOCAL: the translated job runs on samza-core "
            + "1.8's LocalApplicationRunner in the child JVM (passthrough coordinator, one processor, one "
            + "Samza task per Weir task); every intermediate stream (shuffles, broadcasts, Flatten's "
            + "forward streams) is a Kafka topic on the suite's broker (one partition per consuming task), "
            + "every record encoded and sent through the broker; task state in Samza RocksDB stores "
            + "(weir-state) with Kafka changelogs, under Weir's object cache; parallelism = cores");
        n.add("--samzaConfigOverride=weir.kafka.bootstrap.servers=<suite broker>,weir.kafka.topic.prefix="
            + "nexmark-<run number>: each run's topics are its own and are deleted after the run; other "
            + "Samza keys at Weir's defaults (task.commit.ms 60000, Kafka producer linger.ms 5, acks=all, "
            + "idempotent)");
        n.add("the broker: one Apache Kafka 3.9 KRaft node started by the suite (test-services' "
            + "KafkaBroker, a child JVM with -Xmx512m) before the first weir-samza run and stopped at the "
            + "end; it idles during other runners' runs (or --kafka=host:port: an existing broker)");
        break;
      case BARE:
        n.add("no runner: Nexmark Generator (NexmarkConfiguration defaults) split over one thread "
            + "per core; per event, in a plain loop, the work of Nexmark's pipeline (event monitor "
            + "and snoop counters with a clock read, the query's own work, result monitor, stamp, "
            + "Format's JSON string per result, devnull; --work=query: the query's work only); Q0's "
            + "coder round trip with the schema coder Nexmark's pipeline gives Event on every runner; "
            + "the same --warmup-events pass as every runner; uses the classpath-direct classpath but "
            + "not the Direct runner; timed as Nexmark times a runner, from the first event's wall-clock "
            + "read to the last event's or result's (thread start-up and joins outside, as a pipeline's "
            + "set-up and teardown are)");
        break;
      default:
        throw new AssertionError(this);
    }
    return n;
  }
}
