package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import org.apache.beam.sdk.util.ReleaseInfo;
import org.junit.jupiter.api.Test;

/**
 * The Beam version check at {@code run()}: its messages, and that each build of the runner (this
 * test runs in every runner/beam&lt;minor&gt; module) is on the Beam release it says it is for. The
 * check on a real mismatched classpath is {@code examples/beam2.73}'s {@code WrongWeirForBeamIT}.
 */
class BeamVersionCheckTest {
  @Test
  void thisBuildRunsOnTheBeamReleaseItIsBuiltFor() {
    assertThat(BeamVersionCheck.minor(ReleaseInfo.getReleaseInfo().getSdkVersion()))
        .isEqualTo(BeamVersionCheck.minor(BeamVersionCheck.builtBeamVersion()));
    assertThat(BeamVersionCheck.SUPPORTED).extracting(BeamVersionCheck.Build::beamMinor)
        .contains(BeamVersionCheck.minor(BeamVersionCheck.builtBeamVersion()));
    assertThatCode(BeamVersionCheck::check).doesNotThrowAnyException();
  }

  @Test
  void aPatchReleaseOfTheSameMinorPasses() {
    assertThat(BeamVersionCheck.mismatch("2.73.1", "2.73.0", "2.73.0", "weir-runner-beam2.73", "0.1.0")).isEmpty();
  }

  @Test
  void aSupportedOtherMinorNamesBothVersionsAndTheArtifactToUse() {
    assertThat(BeamVersionCheck.mismatch("2.73.0", "2.70.0", "2.70.0", "weir-runner", "0.1.0"))
        .hasValueSatisfying(m -> assertThat(m)
            .contains("Beam SDK 2.73.0", "dev.weir:weir-runner:0.1.0 is built for Beam 2.70.0",
                "Use dev.weir:weir-runner-beam2.73"));
    assertThat(BeamVersionCheck.mismatch("2.70.0", null, "2.73.0", "weir-runner-beam2.73", "0.1.0"))
        .hasValueSatisfying(m -> assertThat(m).contains("Beam SDK 2.70.0", "built for Beam 2.73.0",
            "Use dev.weir:weir-runner (Weir for Beam 2.70)"));
  }

  @Test
  void anUnsupportedMinorListsTheSupportedOnes() {
    assertThat(BeamVersionCheck.mismatch("2.75.0", "2.75.0", "2.73.0", "weir-runner-beam2.73", "0.1.0"))
        .hasValueSatisfying(m -> assertThat(m).contains("Beam SDK 2.75.0", "built for Beam 2.73.0",
            "no build for Beam 2.75", "Beam 2.70: dev.weir:weir-runner", "Beam 2.73: dev.weir:weir-runner-beam2.73"));
  }

  @Test
  void runnersCoreBehindTheSdkIsNamed() {
    assertThat(BeamVersionCheck.mismatch("2.73.0", "2.70.0", "2.73.0", "weir-runner-beam2.73", "0.1.0"))
        .hasValueSatisfying(m -> assertThat(m).contains("beam-runners-core-java 2.70.0", "built for Beam 2.73.0"));
  }
}
