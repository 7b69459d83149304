package dev.weir.runner;

import dev.weir.runner.state.KeyGroups;
import dev.weir.state.StateBackend;
import dev.weir.state.cache.ObjectCacheSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import dev.weir.runner.monitoring.MetricsPush;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.metrics.MetricsOptions;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * The settings of one Weir run: every {@link WeirPipelineOptions} value read and checked once, at
 * {@code run()}, and then handed whole to the translator and the executor. Nothing downstream
 * reads Weir's options again or clamps them: a value here is already in range.
 *
 * <p>Checks ({@link #from}): {@code --maxParallelism} is from {@code --parallelism} to
 * {@value KeyGroups#MAX}; counts ({@code --parallelism}, {@code --containers},
 * {@code --maxBundleSize}, {@code --objectCacheSize}) and {@code --objectCacheBytes} are at least 1; {@code --maxBundleTimeMs} is
 * from 1 to {@value #MAX_BUNDLE_TIME_MS} (so that it still fits in a {@code long} of
 * nanoseconds); {@code --metricsLogIntervalMs} is 0 (off) or positive; {@code --stateBackend} is set; {@code --stateDirectory} is a path and, for the
 * RocksDB backend, a directory that exists or can be created and is writable (it is created here);
 * {@code --executionEnvironment} is set, and the Samza config options are read and checked by
 * {@link SamzaUserConfig} (rejected with {@code EMBEDDED}).
 * A bad value fails with an {@link IllegalArgumentException} naming the option, the value and what
 * is allowed.
 *
 * <p>Threading: immutable; read from any thread. {@link #pipelineOptions()} is Beam's options proxy
 * as the user built it, handed to user code (readers, DoFns) and never read by Weir itself.
 *
 * @param pipelineOptions the options as given, for user code and Beam's own APIs
 * @param parallelism partitions (tasks) of every shuffled stage; source stages get at most this
 *     many splits
 * @param keyGroups {@code --maxParallelism}: the key groups keyed state and shuffles are addressed
 *     by (1 to {@value KeyGroups#MAX}, at least {@code parallelism}); fixed for a job's life
 * @param containers run-loop threads the job's tasks are spread over
 * @param maxBundleSize input elements a task processes in one bundle at most
 * @param maxBundleTimeMs milliseconds a bundle stays open at most
 * @param stateBackend where keyed state lives
 * @param stateDirectory the base directory of RocksDB state (each job makes its own sub-directory);
 *     unused by the memory backend
 * @param objectCacheSize decoded state values the object cache keeps per container (entries)
 * @param objectCacheBytes estimated bytes of those values per container (see
 *     {@link ObjectCacheSettings#bounded}), in bytes
 * @param objectCacheEviction which entries the object cache evicts when full
 *     ({@code --objectCacheEviction})
 * @param backgroundSealing whether sealed state values are encoded off the container that sealed
 *     them ({@code --backgroundSealing}: by idle run loops and threads on spare cores)
 * @param metricsEnabled whether Beam metrics are collected per PTransform
 * @param metricsLogIntervalMs milliseconds between two logged summaries of the job's live metrics; 0:
 *     no log
 * @param enforceEncodability whether every PCollection's elements round-trip through its coder
 *     ({@code --weirEnforceEncodability}); else only the edges the encoding rule picks
 * @param metricsHttp the monitoring HTTP server's address ({@code --metricsHttpHost},
 *     {@code --metricsHttpPort}), or null for none
 * @param checkpointing {@code --checkpointingIntervalMs} (0 or more), {@code --restoreMode},
 *     {@code --retainCheckpoints} (at least 1)
 * @param concurrency concurrent {@code @ProcessElement}: {@code --containerThreadPoolSize},
 *     {@code --taskMaxConcurrency}, {@code --concurrentParDos}
 * @param executionEnvironment where the job runs ({@code --executionEnvironment})
 * @param samzaConfig the user's Samza config ({@code --samzaConfig} file, then
 *     {@code --samzaConfigOverride}), checked by {@link SamzaUserConfig}; empty for
 *     {@link ExecutionEnvironment#EMBEDDED}
 * @param sourceParallelism the number of splits sources are asked for: {@code --parallelism}, or
 *     that of the checkpoint a job resumes ({@link #withSourceParallelism})
 */
@Internal
public record WeirSettings(PipelineOptions pipelineOptions, int parallelism, KeyGroups keyGroups, int containers, int maxBundleSize,
    long maxBundleTimeMs, StateBackend stateBackend, Path stateDirectory, long objectCacheSize, long objectCacheBytes,
    ObjectCacheSettings.Eviction objectCacheEviction, boolean backgroundSealing, boolean metricsEnabled, long metricsLogIntervalMs, MetricsHttp metricsHttp,
    boolean enforceEncodability, Checkpointing checkpointing, Concurrency concurrency,
    ExecutionEnvironment executionEnvironment, Map<String, String> samzaConfig, int sourceParallelism) {

  /** The largest {@code --containerThreadPoolSize}. */
  public static final int MAX_THREAD_POOL_SIZE = 10_000;
  /** The largest {@code --taskMaxConcurrency}. */
  public static final int MAX_TASK_CONCURRENCY = 100_000;

  /**
   * Concurrent {@code @ProcessElement} (docs/concurrency.md).
   *
   * @param threadPoolSize worker threads per container, 0 (off: every ParDo on its container's
   *     thread) to {@link #MAX_THREAD_POOL_SIZE}
   * @param taskMaxConcurrency elements in flight per concurrent ParDo per task, 1 to
   *     {@link #MAX_TASK_CONCURRENCY}
   * @param parDos the ParDos to run concurrently by full name (a name also covers what is inside a
   *     composite of that name); empty: every one that may
   */
  public record Concurrency(int threadPoolSize, int taskMaxConcurrency, List<String> parDos) {
    /** Off: every ParDo on its container's thread. */
    public static final Concurrency OFF = new Concurrency(0, 1, List.of());

    /** Whether ParDos run {@code @ProcessElement} on worker threads. */
    public boolean enabled() {
      return threadPoolSize > 0;
    }

    /**
     * The entry of {@link #parDos} that selects the transform {@code fullName} (equal to it, or a
     * composite it is inside of), or null if none does; with no entries, {@code fullName} itself.
     * Null when concurrency is off.
     */
    public String selecting(String fullName) {
      if (!enabled()) {
        return null;
      }
      if (parDos.isEmpty()) {
        return fullName;
      }
      for (String name : parDos) {
        if (fullName.equals(name) || fullName.startsWith(name + "/")) {
          return name;
        }
      }
      return null;
    }
  }

  /**
   * Where the job's monitoring HTTP server listens.
   *
   * @param host the address to bind (resolved at start), e.g. {@code 127.0.0.1}
   * @param port 0 (any free port) to 65535
   */
  public record MetricsHttp(String host, int port) {}

  /**
   * The checkpoint settings of a run.
   *
   * @param intervalMs milliseconds between two checkpoints of a streaming job; 0: none
   * @param restoreMode whether a job resumes from the checkpoints an earlier run left
   * @param retain complete checkpoints kept, at least 1
   * @param restoreFrom a checkpoint directory to start from ({@code --restoreFrom}), or null
   * @param allowNonRestoredState whether a restore drops the state of transforms the job no longer
   *     has, or whose coders changed, rather than failing ({@code --allowNonRestoredState})
   */
  public record Checkpointing(long intervalMs, WeirPipelineOptions.RestoreMode restoreMode, int retain,
      Path restoreFrom, boolean allowNonRestoredState) {
    /** Whether checkpoints are taken at all. */
    public boolean enabled() {
      return intervalMs > 0;
    }
  }

  /** The largest {@code --maxBundleTimeMs}: its nanoseconds must fit in a {@code long}. */
  public static final long MAX_BUNDLE_TIME_MS = Long.MAX_VALUE / 1_000_000L;

  /**
   * Reads and checks {@code options} (see the class comment). For the RocksDB backend this creates
   * {@code --stateDirectory} if it does not exist yet.
   *
   * @throws IllegalArgumentException naming the first option whose value is out of range, with the
   *     allowed values or range
   */
  public static WeirSettings from(WeirPipelineOptions options) {
    int parallelism = atLeastOne("parallelism", options.getParallelism());
    int maxParallelism = options.getMaxParallelism();
    if (maxParallelism < parallelism || maxParallelism > KeyGroups.MAX) {
      throw outOfRange("maxParallelism", maxParallelism, "--parallelism (" + parallelism + ") to " + KeyGroups.MAX
          + " (key groups; fixed for a job's life, restores refuse another value)");
    }
    int containers = atLeastOne("containers", options.getContainers());
    int maxBundleSize = atLeastOne("maxBundleSize", options.getMaxBundleSize());
    long maxBundleTimeMs = options.getMaxBundleTimeMs();
    if (maxBundleTimeMs < 1 || maxBundleTimeMs > MAX_BUNDLE_TIME_MS) {
      throw outOfRange("maxBundleTimeMs", maxBundleTimeMs, "1 to " + MAX_BUNDLE_TIME_MS + " (milliseconds)");
    }
    StateBackend backend = requireSet("stateBackend", options.getStateBackend(), StateBackend.values(),
        StateBackend::optionValue);
    Path stateDirectory = stateDirectory(options.getStateDirectory(), backend);
    long objectCacheSize = options.getObjectCacheSize();
    if (objectCacheSize < 1) {
      throw outOfRange("objectCacheSize", objectCacheSize, "1 to " + Long.MAX_VALUE + " (entries)");
    }
    long objectCacheBytes = options.getObjectCacheBytes();
    if (objectCacheBytes < 1) {
      throw outOfRange("objectCacheBytes", objectCacheBytes, "1 to " + Long.MAX_VALUE + " (bytes)");
    }
    ObjectCacheSettings.Eviction objectCacheEviction = requireSet("objectCacheEviction",
        options.getObjectCacheEviction(), ObjectCacheSettings.Eviction.values(), Enum::name);
    long metricsLogIntervalMs = options.getMetricsLogIntervalMs();
    if (metricsLogIntervalMs < 0) {
      throw outOfRange("metricsLogIntervalMs", metricsLogIntervalMs,
          "0 (no metrics log) or 1 to " + Long.MAX_VALUE + " (milliseconds between two logged summaries)");
    }
    MetricsHttp metricsHttp = metricsHttp(options.getMetricsHttpHost(), options.getMetricsHttpPort());
    MetricsPush.check(options.as(MetricsOptions.class));
    long checkpointingIntervalMs = options.getCheckpointingIntervalMs();
    if (checkpointingIntervalMs < 0) {
      throw outOfRange("checkpointingIntervalMs", checkpointingIntervalMs,
          "0 (no checkpoints) or 1 to " + Long.MAX_VALUE + " (milliseconds between two checkpoints)");
    }
    requireSet("restoreMode", options.getRestoreMode(), WeirPipelineOptions.RestoreMode.values(), Enum::name);
    int retain = atLeastOne("retainCheckpoints", options.getRetainCheckpoints());
    ExecutionEnvironment environment = requireSet("executionEnvironment", options.getExecutionEnvironment(),
        ExecutionEnvironment.values(), Enum::name);
    Concurrency concurrency = concurrency(options, environment);
    Map<String, String> samzaConfig =
        SamzaUserConfig.read(environment, options.getSamzaConfig(), options.getSamzaConfigOverride());
    return new WeirSettings(options, parallelism, new KeyGroups(maxParallelism), containers, maxBundleSize, maxBundleTimeMs, backend,
        stateDirectory, objectCacheSize, objectCacheBytes, objectCacheEviction, options.getBackgroundSealing(), options.getMetricsEnabled(), metricsLogIntervalMs,
        metricsHttp, options.getWeirEnforceEncodability(), new Checkpointing(checkpointingIntervalMs, options.getRestoreMode(), retain,
            restoreFrom(options.getRestoreFrom()), options.getAllowNonRestoredState()),
        concurrency, environment, samzaConfig, parallelism);
  }

  /**
   * These settings with sources split for {@code sourceParallelism} partitions instead of
   * {@code --parallelism}: a job resuming a checkpoint taken at another parallelism splits its
   * sources as that job did, so that every split finds its position again
   * ({@code checkpoint.JobRestore#sourceParallelismOf}).
   */
  public WeirSettings withSourceParallelism(int sourceParallelism) {
    return new WeirSettings(pipelineOptions, parallelism, keyGroups, containers, maxBundleSize, maxBundleTimeMs,
        stateBackend, stateDirectory, objectCacheSize, objectCacheBytes, objectCacheEviction, backgroundSealing, metricsEnabled,
        metricsLogIntervalMs, metricsHttp, enforceEncodability, checkpointing, concurrency, executionEnvironment,
        samzaConfig, sourceParallelism);
  }

  /**
   * The object cache's bounds per container, {@code --objectCacheSize} entries and
   * {@code --objectCacheBytes}, and its {@code --objectCacheEviction} policy.
   */
  public ObjectCacheSettings objectCacheBounds() {
    return ObjectCacheSettings.bounded(objectCacheSize, objectCacheBytes).withEviction(objectCacheEviction);
  }

  /** {@code --metricsHttpHost} and {@code --metricsHttpPort}, checked; null if no port is set. */
  private static MetricsHttp metricsHttp(String host, Integer port) {
    if (port == null) {
      return null;
    }
    if (port < 0 || port > 65535) {
      throw outOfRange("metricsHttpPort", port, "0 (any free port) to 65535, or unset for no server");
    }
    if (host == null || host.isBlank()) {
      throw new IllegalArgumentException("--metricsHttpHost is empty; allowed: 127.0.0.1 (the default), a host "
          + "name or address of this machine, or 0.0.0.0 for every interface");
    }
    try {
      java.net.InetAddress.getByName(host);
    } catch (java.net.UnknownHostException e) {
      throw new IllegalArgumentException("--metricsHttpHost=" + host + " is not a known host name or address; "
          + "allowed: 127.0.0.1 (the default), a host name or address of this machine, or 0.0.0.0", e);
    }
    return new MetricsHttp(host, port);
  }

  /** {@code --containerThreadPoolSize}, {@code --taskMaxConcurrency} and {@code --concurrentParDos}, checked. */
  private static Concurrency concurrency(WeirPipelineOptions options, ExecutionEnvironment environment) {
    int threads = options.getContainerThreadPoolSize();
    if (threads < 0 || threads > MAX_THREAD_POOL_SIZE) {
      throw outOfRange("containerThreadPoolSize", threads, "0 (every ParDo on its container's thread) to "
          + MAX_THREAD_POOL_SIZE + " (worker threads per container)");
    }
    int perTask = options.getTaskMaxConcurrency();
    if (perTask < 1 || perTask > MAX_TASK_CONCURRENCY) {
      throw outOfRange("taskMaxConcurrency", perTask, "1 to " + MAX_TASK_CONCURRENCY
          + " (elements in flight per concurrent ParDo per task)");
    }
    List<String> parDos = options.getConcurrentParDos() == null ? List.of() : List.copyOf(options.getConcurrentParDos());
    for (String name : parDos) {
      if (name.isBlank()) {
        throw new IllegalArgumentException("--concurrentParDos has an empty name; allowed: full transform names, "
            + "comma-separated");
      }
    }
    if (threads == 0 && !parDos.isEmpty()) {
      throw new IllegalArgumentException("--concurrentParDos=" + String.join(",", parDos) + " needs "
          + "--containerThreadPoolSize above 0 (worker threads to run them on); it is 0");
    }
    if (threads > 0 && environment != ExecutionEnvironment.EMBEDDED) {
      throw new IllegalArgumentException("--containerThreadPoolSize=" + threads + " is supported with "
          + "--executionEnvironment=EMBEDDED only; on " + environment + " use 0 (allowed: 0)");
    }
    return new Concurrency(threads, perTask, parDos);
  }

  private static int atLeastOne(String option, int value) {
    if (value < 1) {
      throw outOfRange(option, value, "1 to " + Integer.MAX_VALUE);
    }
    return value;
  }

  /**
   * {@code value} of the enum option {@code --option}, which must be set.
   *
   * @param name how the option spells each value (e.g. {@code Enum::name})
   * @throws IllegalArgumentException naming the option and every allowed value if it is null
   */
  private static <E extends Enum<E>> E requireSet(String option, E value, E[] allowed,
      java.util.function.Function<E, String> name) {
    if (value == null) {
      throw new IllegalArgumentException("--" + option + " is not set; allowed values: "
          + Arrays.stream(allowed).map(name).collect(Collectors.joining(", ")));
    }
    return value;
  }

  private static IllegalArgumentException outOfRange(String option, long value, String allowed) {
    return new IllegalArgumentException("--" + option + "=" + value + " is out of range; allowed: " + allowed);
  }

  /** Parses {@code --stateDirectory}; for RocksDB, creates it and checks that it is writable. */
  private static Path stateDirectory(String value, StateBackend backend) {
    String allowed = "a writable directory, created if missing (used by --stateBackend="
        + StateBackend.ROCKSDB.optionValue() + ")";
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException("--stateDirectory is empty; allowed: " + allowed);
    }
    Path directory;
    try {
      directory = Path.of(value);
    } catch (InvalidPathException e) {
      throw new IllegalArgumentException("--stateDirectory=" + value + " is not a path (" + e.getMessage()
          + "); allowed: " + allowed, e);
    }
    if (backend != StateBackend.ROCKSDB) {
      return directory;
    }
    try {
      Files.createDirectories(directory);
    } catch (IOException | SecurityException e) {
      throw new IllegalArgumentException("--stateDirectory=" + value + " cannot be created ("
          + e.getClass().getSimpleName() + ": " + e.getMessage() + "); allowed: " + allowed, e);
    }
    if (!Files.isWritable(directory)) {
      throw new IllegalArgumentException("--stateDirectory=" + value + " is not writable; allowed: " + allowed);
    }
    return directory;
  }

  /**
   * {@code --restoreFrom}: null if unset, else the directory, which must hold a checkpoint manifest.
   *
   * @throws IllegalArgumentException naming the option and the path otherwise
   */
  private static Path restoreFrom(String value) {
    if (value == null || value.isBlank()) {
      return null;
    }
    Path directory;
    try {
      directory = Path.of(value);
    } catch (InvalidPathException e) {
      throw new IllegalArgumentException("--restoreFrom=" + value + " is not a path; allowed: a checkpoint "
          + "directory (…/checkpoints/chk-<id>) holding checkpoint.json", e);
    }
    if (!Files.isRegularFile(directory.resolve("checkpoint.json"))) {
      throw new IllegalArgumentException("--restoreFrom=" + value + " holds no checkpoint.json: it is not a complete "
          + "checkpoint; allowed: a checkpoint directory (…/checkpoints/chk-<id>) holding checkpoint.json "
          + "(bin/weir state list shows each job's newest)");
    }
    return directory;
  }

  /** A one-line summary for the run log, e.g. {@code parallelism=2 containers=2 ...}. */
  public String describe() {
    return String.format(Locale.ROOT, "parallelism=%d maxParallelism=%d containers=%d maxBundleSize=%d maxBundleTimeMs=%d "
            + "stateBackend=%s stateDirectory=%s objectCacheSize=%d objectCacheBytes=%d backgroundSealing=%b metricsEnabled=%b metricsLogIntervalMs=%d "
            + "metricsHttp=%s enforceEncodability=%b checkpointingIntervalMs=%d restoreMode=%s retainCheckpoints=%d "
            + "containerThreadPoolSize=%d taskMaxConcurrency=%d executionEnvironment=%s",
        parallelism, keyGroups.maxParallelism(), containers, maxBundleSize, maxBundleTimeMs,
        stateBackend.optionValue(), stateDirectory,
        objectCacheSize, objectCacheBytes, backgroundSealing, metricsEnabled, metricsLogIntervalMs,
        metricsHttp == null ? "off" : metricsHttp.host() + ":" + metricsHttp.port(), enforceEncodability,
        checkpointing.intervalMs(),
        checkpointing.restoreMode(), checkpointing.retain(), concurrency.threadPoolSize(),
        concurrency.taskMaxConcurrency(), executionEnvironment);
  }
}
