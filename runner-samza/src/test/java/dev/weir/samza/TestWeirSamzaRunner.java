package dev.weir.samza;

import dev.weir.runner.ExecutionEnvironment;
import dev.weir.runner.TestWeirRunner;
import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirPipelineResult;
import dev.weir.testservices.KafkaBroker;
import java.nio.file.Path;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * {@link TestWeirRunner} on {@code --executionEnvironment=SAMZA_LOCAL} for Beam's TestPipeline
 * ({@code --runner=dev.weir.samza.TestWeirSamzaRunner}): the first pipeline of the JVM starts one
 * real Kafka broker (test-services' {@link KafkaBroker}, under {@code target/vr-kafka}, stopped
 * when the JVM exits) that every pipeline's intermediate streams then use. Used by the
 * {@code samza-validates-runner} execution of this module.
 *
 * <p>Threading: as {@link TestWeirRunner}; the broker is started once, under a lock.
 */
public final class TestWeirSamzaRunner extends PipelineRunner<WeirPipelineResult> {
  private static KafkaBroker broker;

  private final PipelineOptions options;

  private TestWeirSamzaRunner(PipelineOptions options) {
    this.options = options;
  }

  /** Called by Beam for {@code --runner=dev.weir.samza.TestWeirSamzaRunner}. */
  public static TestWeirSamzaRunner fromOptions(PipelineOptions options) {
    return new TestWeirSamzaRunner(options);
  }

  private static synchronized String bootstrapServers() {
    if (broker == null || !broker.isRunning()) {
      broker = KafkaBroker.start(KafkaBroker.Config.in(Path.of("target", "vr-kafka", "broker-"
          + ProcessHandle.current().pid())));
    }
    return broker.bootstrapServers();
  }

  @Override
  public WeirPipelineResult run(Pipeline pipeline) {
    WeirPipelineOptions weir = options.as(WeirPipelineOptions.class);
    weir.setExecutionEnvironment(ExecutionEnvironment.SAMZA_LOCAL);
    String more = weir.getSamzaConfigOverride();
    weir.setSamzaConfigOverride("weir.kafka.bootstrap.servers=" + bootstrapServers()
        + (more == null || more.isBlank() ? "" : "," + more));
    return TestWeirRunner.fromOptions(weir).run(pipeline);
  }
}
