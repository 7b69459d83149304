package dev.weir.runner;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.DefaultValueFactory;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.StreamingOptions;

/**
 * Options of {@link WeirRunner}: how many partitions and container threads a job gets, how
 * bundles are cut, where state lives and whether Beam metrics are collected.
 *
 * <p>Threading: an options proxy is read on the submitting thread at translation time; the
 * executor copies the values it needs before its containers start.
 */
public interface WeirPipelineOptions extends PipelineOptions, StreamingOptions {

  /** State backend choices; {@code --stateBackend} accepts them in any case ({@code rocksdb}, {@code memory}). */
  enum StateBackend {
    /** RocksDB under {@link #getStateDirectory()}, behind the object cache. */
    ROCKSDB,
    /** The Java heap; not durable. */
    MEMORY;

    /**
     * Parses the option's value case-insensitively (Beam reads enum options through Jackson).
     *
     * @throws IllegalArgumentException naming the option, the bad value and the allowed values
     */
    @com.fasterxml.jackson.annotation.JsonCreator
    public static StateBackend fromOption(String value) {
      return valueOf(dev.weir.state.StateBackend.parse("stateBackend", value).name());
    }
  }

  @Description("Number of partitions of every shuffled stage (tasks per stage after a GroupByKey). "
      + "Source stages get one partition per source split, at most this many. "
      + "Default: the number of available processors.")
  @Default.InstanceFactory(AvailableProcessors.class)
  int getParallelism();

  void setParallelism(int parallelism);

  @Description("Number of containers, i.e. run-loop threads that tasks are spread over. "
      + "Default: the number of available processors.")
  @Default.InstanceFactory(AvailableProcessors.class)
  int getContainers();

  void setContainers(int containers);

  @Description("Maximum number of elements a task processes in one bundle before it calls "
      + "finishBundle (count of input elements).")
  @Default.Integer(1000)
  int getMaxBundleSize();

  void setMaxBundleSize(int maxBundleSize);

  @Description("Maximum time in milliseconds a bundle stays open before it is finished, "
      + "measured on the run loop's clock.")
  @Default.Long(1000L)
  long getMaxBundleTimeMs();

  void setMaxBundleTimeMs(long maxBundleTimeMs);

  @Description("Where keyed state (GroupByKey buffers, watermark holds) lives: ROCKSDB (one RocksDB "
      + "instance per container under --stateDirectory, behind the object cache) or MEMORY (the Java heap).")
  @Default.Enum("ROCKSDB")
  StateBackend getStateBackend();

  void setStateBackend(StateBackend stateBackend);

  @Description("Directory for RocksDB state; each job gets its own temporary sub-directory, deleted "
      + "when the job ends (finished, failed or cancelled). Default: java.io.tmpdir/weir-state.")
  @Default.InstanceFactory(TempStateDirectory.class)
  String getStateDirectory();

  void setStateDirectory(String stateDirectory);

  @Description("Maximum number of decoded state values the object cache keeps per container "
      + "(entries, not bytes); evicted dirty values are written back to the backend.")
  @Default.Long(100_000L)
  long getObjectCacheSize();

  void setObjectCacheSize(long objectCacheSize);

  @Description("Whether Beam metrics (counters, distributions, gauges) are collected per "
      + "PTransform. Off makes metrics() empty and disables PAssert's success-counter check.")
  @Default.Boolean(true)
  boolean getMetricsEnabled();

  void setMetricsEnabled(boolean metricsEnabled);

  /** Default for counts that should follow the machine: the number of available processors. */
  class AvailableProcessors implements DefaultValueFactory<Integer> {
    @Override
    public Integer create(PipelineOptions options) {
      return Runtime.getRuntime().availableProcessors();
    }
  }

  /** Default state directory: {@code java.io.tmpdir/weir-state}. */
  class TempStateDirectory implements DefaultValueFactory<String> {
    @Override
    public String create(PipelineOptions options) {
      return System.getProperty("java.io.tmpdir") + "/weir-state";
    }
  }
}
