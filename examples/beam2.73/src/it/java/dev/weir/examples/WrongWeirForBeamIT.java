package dev.weir.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.util.ReleaseInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A pipeline built on Beam 2.73 with the wrong Weir: dev.weir:weir-runner (Weir for Beam 2.70)
 * and the runners-core 2.70.0 Maven picks with it are on this test's classpath instead of
 * dev.weir:weir-runner-beam2.73 (examples/beam2.73/pom.xml, failsafe's configuration). Weir must
 * refuse the job at {@code run()}, naming both versions and the artifact to use, before any
 * element is processed: without the check the first timer or output fails mid-job with a
 * {@code NoSuchMethodError} or {@code AbstractMethodError}.
 */
class WrongWeirForBeamIT {
  @TempDir
  Path tmp;

  @Test
  void weirForBeam270RefusesABeam273PipelineAtRun() {
    assertThat(ReleaseInfo.getReleaseInfo().getSdkVersion()).startsWith("2.73.");
    Path output = tmp.resolve("counts.txt");
    WordCount.Options options = PipelineOptionsFactory
        .fromArgs(OnWeir.args("--inputFile=src/test/resources/words.txt", "--output=" + output))
        .withValidation().as(WordCount.Options.class);

    assertThatThrownBy(() -> WordCount.build(options).run())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Beam SDK 2.73.0")
        .hasMessageContaining("dev.weir:weir-runner:")
        .hasMessageContaining("is built for Beam 2.70.0")
        .hasMessageContaining("Use dev.weir:weir-runner-beam2.73");
    assertThat(tmp).as("nothing ran, so nothing was written").isEmptyDirectory();
  }
}
