package dev.weir.runner;

import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.PlannedSplits;
import java.util.ServiceLoader;
import org.apache.beam.sdk.annotations.Internal;

/**
 * A service (found with {@link ServiceLoader}) that runs translated jobs in an execution
 * environment other than the embedded executor: {@link ExecutionEnvironment#SAMZA_LOCAL} and
 * {@link ExecutionEnvironment#SAMZA_STANDALONE} are provided by the artifact
 * {@value ExecutionEnvironment#SAMZA_ARTIFACT}, so that samza-core (and Scala, and the Kafka
 * client) stay out of the runner's own dependencies. The idea of a runner choosing its engine from
 * the classpath is Beam's own {@code PipelineRunnerRegistrar}.
 *
 * <p>Threading: {@link #run} may be called from any thread, once per job; each call runs an
 * independent job.
 */
@Internal
public interface ExecutionEnvironmentProvider {

  /** Whether this provider runs jobs in {@code environment}. */
  boolean provides(ExecutionEnvironment environment);

  /**
   * Checks that this environment can run {@code plan} (before anything starts).
   *
   * @throws UnsupportedOperationException naming the transform or stream it cannot run, and why
   */
  void check(JobPlan plan, WeirSettings settings);

  /**
   * Starts {@code plan} with {@code settings} (their {@link WeirSettings#executionEnvironment()} is
   * one this provider {@link #provides}) and returns at once.
   *
   * @throws IllegalArgumentException naming a setting or config key the environment cannot use
   * @throws UnsupportedOperationException naming the transform or stream it cannot run
   */
  WeirPipelineResult run(JobPlan plan, WeirSettings settings);

  /**
   * Starts {@code plan} as {@link #run(JobPlan, WeirSettings)} does, with a way to translate the
   * same pipeline again with splits given for its sources: an environment whose processes share
   * one split plan calls {@code retranslate} when the plan's split counts differ from this
   * translation's, so that its source stages (and everything partitioned after them) get the
   * plan's partition counts. The default ignores {@code retranslate}.
   *
   * @param retranslate translates the pipeline {@code plan} came from again, on the calling thread
   * @throws IllegalArgumentException naming a setting or config key the environment cannot use
   * @throws UnsupportedOperationException naming the transform or stream it cannot run
   */
  default WeirPipelineResult run(JobPlan plan, WeirSettings settings, Retranslation retranslate) {
    return run(plan, settings);
  }

  /** A second translation of a job's pipeline, with some sources' splits given. */
  @FunctionalInterface
  interface Retranslation {
    /**
     * The plan of the same pipeline and settings, each Read that {@code planned} gives splits for
     * split as given.
     *
     * @throws IllegalStateException naming the step if a Read's given splits do not fit it
     */
    JobPlan translate(PlannedSplits planned);
  }

  /**
   * The provider of {@code environment} on the classpath of {@code loader}.
   *
   * @throws IllegalStateException naming the artifact to add if there is none
   */
  static ExecutionEnvironmentProvider find(ExecutionEnvironment environment, ClassLoader loader) {
    for (ExecutionEnvironmentProvider provider : ServiceLoader.load(ExecutionEnvironmentProvider.class, loader)) {
      if (provider.provides(environment)) {
        return provider;
      }
    }
    throw new IllegalStateException("--executionEnvironment=" + environment + " needs the artifact "
        + ExecutionEnvironment.SAMZA_ARTIFACT + " on the classpath (it provides the Samza execution environments "
        + "through java.util.ServiceLoader); none was found. Add it as a dependency, or use --executionEnvironment="
        + ExecutionEnvironment.EMBEDDED);
  }
}
