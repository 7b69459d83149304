// Role: unit tests of --sweep parsing and the cartesian product. Threading: single-threaded tests.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SweepTest {
  @Test
  void parsesNameAndValues() {
    Sweep s = Sweep.parse("maxBundleSize=100,1000, 10000");
    assertThat(s.name()).isEqualTo("maxBundleSize");
    assertThat(s.values()).containsExactly("100", "1000", "10000");
    assertThat(Sweep.parse("--avgBidByteSize=100").name()).isEqualTo("avgBidByteSize");
  }

  @Test
  void rejectsMalformed() {
    assertThatThrownBy(() -> Sweep.parse("maxBundleSize")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Sweep.parse("=1,2")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Sweep.parse("x=1,,2")).hasMessageContaining("empty value");
    assertThatThrownBy(() -> Sweep.parse("x=")).hasMessageContaining("empty value");
  }

  @Test
  void combinationsAreCartesianFirstSlowest() {
    List<Map<String, String>> c = Sweep.combinations(List.of(Sweep.parse("a=1,2"), Sweep.parse("b=x,y,z")));
    assertThat(c).hasSize(6);
    assertThat(c.get(0)).containsExactly(Map.entry("a", "1"), Map.entry("b", "x"));
    assertThat(c.get(5)).containsExactly(Map.entry("a", "2"), Map.entry("b", "z"));
    assertThat(Sweep.combinations(List.of())).containsExactly(Map.of());
  }

  @Test
  void planExpandsSweepsRunnersAndSkipsBareBeyondQ2() {
    NexmarkCommand cmd = new NexmarkCommand();
    new picocli.CommandLine(cmd).parseArgs("--runners", "direct,bare", "--queries", "1-3",
        "--sweep", "avgBidByteSize=100,1000", "--", "--fasterCopy=true");
    List<RunSpec> plan = cmd.plan();
    // 2 sweep values x (Q1, Q2: direct + bare; Q3: direct only)
    assertThat(plan).hasSize(10);
    assertThat(plan.get(0).sweep()).containsEntry("avgBidByteSize", "100");
    assertThat(cmd.passthrough).containsExactly("--fasterCopy=true");
  }
}
