package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.api.Test;

/** How users' option values are parsed. */
class WeirPipelineOptionsTest {

  private static WeirPipelineOptions parse(String... args) {
    return PipelineOptionsFactory.fromArgs(args).as(WeirPipelineOptions.class);
  }

  @Test
  void stateBackend_acceptsTheDocumentedLowerCaseNames() {
    assertThat(parse("--stateBackend=rocksdb").getStateBackend()).isEqualTo(WeirPipelineOptions.StateBackend.ROCKSDB);
    assertThat(parse("--stateBackend=memory").getStateBackend()).isEqualTo(WeirPipelineOptions.StateBackend.MEMORY);
    assertThat(parse("--stateBackend=MEMORY").getStateBackend()).isEqualTo(WeirPipelineOptions.StateBackend.MEMORY);
    assertThat(parse().getStateBackend()).isEqualTo(WeirPipelineOptions.StateBackend.ROCKSDB);
  }

  @Test
  void stateBackend_badValue_namesTheOptionAndTheAllowedValues() {
    assertThatThrownBy(() -> parse("--stateBackend=redis"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasStackTraceContaining("--stateBackend=redis")
        .hasStackTraceContaining("rocksdb, memory");
  }
}
