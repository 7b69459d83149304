package dev.weir.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InfluxExportTest {

  @TempDir Path dir;

  @Test
  void lines_useBeamsNexmarkMeasurementNames_forOkRunsOnly() throws Exception {
    ResultsFile f = ResultsFile.read(new SampleResults("2026-11-21T10:00:00Z")
        .run("weir", 5, "streaming", "ok", 1234.5, 12L, null)
        .run("direct", 5, "batch", "failed", null, null, null)
        .run("flink", 13, "batch", "ok", 99.0, 92000L, null, Map.of("bundle size", "a,b"))
        .write(dir));
    List<String> lines = InfluxExport.lines(List.of(f));
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0)).isEqualTo(
        "nexmark_5_streaming,runner=weir eventsPerSec=1234.500,runtimeSec=10.000,numResults=12i 1795255200000000000");
    assertThat(lines.get(1)).startsWith("nexmark_13_batch,runner=flink,bundle\\ size=a\\,b eventsPerSec=99.000");
  }
}
