package dev.weir.profiling;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Profiles real child JVMs running {@link SpanWorkload} (three span-tagged "transforms"), through
 * the same CLI a user runs, and checks the outputs: flame graphs, summary, engine, per-transform
 * shares in the right order, a diff of two runs, and attaching to a running JVM.
 */
class ProfileCommandIT {

  @TempDir Path dir;

  private static int cli(String... args) {
    return new CommandLine(new ProfileCommand()).execute(args);
  }

  private Path runWorkload(String name) {
    Path out = dir.resolve(name);
    assertThat(cli("run", "--main", SpanWorkload.class.getName(), "--out", out.toString(),
        "--interval-ms", "2", "--", "3000")).isZero();
    return out;
  }

  @Test
  void run_writesFlameGraphsSummaryAndPerTransformShares() throws Exception {
    Path out = runWorkload("a");
    for (String f : List.of("cpu.html", "alloc.html", "cpu.collapsed", "alloc.collapsed", "summary.txt", "profile.json")) {
      assertThat(out.resolve(f)).as(f).isNotEmptyFile();
    }
    assertThat(Files.readString(out.resolve("cpu.html"))).contains("SpanWorkload");
    JsonNode profile = new ObjectMapper().readTree(out.resolve("profile.json").toFile());
    assertThat(profile.get("cpuEngine").asText()).isIn("cpu", "ctimer", "itimer");
    assertThat(profile.get("cpuSamples").asLong()).isGreaterThan(100);
    List<String> tags = new ArrayList<>();
    double heavy = 0;
    double light = 0;
    for (JsonNode t : profile.get("transforms")) {
      tags.add(t.get("transform").asText());
      assertThat(out.resolve(t.get("flameGraph").asText())).isNotEmptyFile();
      if (t.get("transform").asText().equals("ParDo(Heavy)")) {
        heavy = t.get("cpuShare").asDouble();
      } else if (t.get("transform").asText().equals("ParDo(Light)")) {
        light = t.get("cpuShare").asDouble();
      }
    }
    assertThat(tags).containsExactlyInAnyOrder("Read(Events)", "ParDo(Heavy)", "ParDo(Light)");
    assertThat(heavy).as("ParDo(Heavy) does 4x ParDo(Light)'s work").isGreaterThan(2 * light);
    assertThat(heavy + light).isGreaterThan(0.5);
    String summary = Files.readString(out.resolve("summary.txt"));
    assertThat(summary).contains("Share of CPU samples").contains("Top frames by self time")
        .contains("ParDo(Heavy)").contains("CPU engine: " + profile.get("cpuEngine").asText());
  }

  @Test
  void run_ofAWeirPipeline_splitsTheProfileByItsPTransforms() throws Exception {
    Path out = dir.resolve("weir");
    assertThat(cli("run", "--main", WeirPipelineWorkload.class.getName(), "--out", out.toString(),
        "--interval-ms", "2", "--", "300000")).isZero();
    assertThat(out.resolve("cpu.html")).isNotEmptyFile();
    assertThat(out.resolve("alloc.html")).isNotEmptyFile();
    String summary = Files.readString(out.resolve("summary.txt"));
    assertThat(summary).contains("Share of CPU samples per PTransform");
    JsonNode profile = new ObjectMapper().readTree(out.resolve("profile.json").toFile());
    List<String> transforms = new ArrayList<>();
    String top = null;
    double topShare = -1;
    for (JsonNode t : profile.get("transforms")) {
      transforms.add(t.get("transform").asText());
      if (t.get("cpuShare").asDouble() > topShare) {
        topShare = t.get("cpuShare").asDouble();
        top = t.get("transform").asText();
      }
    }
    assertThat(transforms).anyMatch(t -> t.startsWith("Burn"));
    assertThat(transforms).anyMatch(t -> t.startsWith("Numbers"));
    assertThat(transforms).anyMatch(t -> t.startsWith("SumPerKey"));
    assertThat(top).as("the CPU-heavy transform leads the split").startsWith("Burn");
  }

  @Test
  void diff_ofTwoRuns_writesADifferentialFlameGraph() throws Exception {
    Path a = runWorkload("a");
    Path b = runWorkload("b");
    Path diff = dir.resolve("diff.html");
    assertThat(cli("diff", a.resolve("profile.jfr").toString(), b.resolve("profile.jfr").toString(),
        "--out", diff.toString())).isZero();
    assertThat(diff).isNotEmptyFile();
    assertThat(Files.readString(diff)).contains("SpanWorkload");
  }

  @Test
  void attach_toARunningJvm_writesAProfile() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        SpanWorkload.class.getName(), "-1").redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      assertThat(out.readLine()).isEqualTo("workload started");
      Path profile = dir.resolve("attached");
      assertThat(cli("attach", "--pid", Long.toString(child.pid()), "--duration-sec", "2",
          "--out", profile.toString())).isZero();
      assertThat(profile.resolve("cpu.html")).isNotEmptyFile();
      assertThat(Files.readString(profile.resolve("summary.txt"))).contains("ParDo(Heavy)");
    } finally {
      child.destroyForcibly();
      child.waitFor(30, TimeUnit.SECONDS);
    }
  }
}
