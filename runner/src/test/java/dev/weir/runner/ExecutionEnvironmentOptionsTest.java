package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Create;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --executionEnvironment}, {@code --samzaConfig} and {@code --samzaConfigOverride}: parsed
 * by Beam, checked once into {@link WeirSettings}; each bad value fails naming the option and, as
 * applicable, the file, the key and the allowed values. The runner module has no Samza environment
 * on its classpath, so a SAMZA_* run fails naming the artifact to add.
 */
class ExecutionEnvironmentOptionsTest {
  @TempDir
  Path dir;

  private static WeirPipelineOptions parse(String... args) {
    return PipelineOptionsFactory.fromArgs(args).as(WeirPipelineOptions.class);
  }

  private static WeirSettings settings(String... args) {
    return WeirSettings.from(parse(args));
  }

  @Test
  void defaultIsEmbedded_withoutSamzaConfig() {
    WeirSettings settings = settings();
    assertThat(settings.executionEnvironment()).isEqualTo(ExecutionEnvironment.EMBEDDED);
    assertThat(settings.samzaConfig()).isEmpty();
    assertThat(settings.describe()).contains("executionEnvironment=EMBEDDED");
  }

  @Test
  void valuesAreAcceptedInAnyCase() {
    assertThat(parse("--executionEnvironment=samza_local").getExecutionEnvironment())
        .isEqualTo(ExecutionEnvironment.SAMZA_LOCAL);
    assertThat(parse("--executionEnvironment=SAMZA_STANDALONE").getExecutionEnvironment())
        .isEqualTo(ExecutionEnvironment.SAMZA_STANDALONE);
  }

  @Test
  void badValue_namesTheOptionAndTheAllowedValues() {
    assertThatThrownBy(() -> parse("--executionEnvironment=yarn"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasStackTraceContaining("--executionEnvironment=yarn is not an execution environment; "
            + "allowed values: EMBEDDED, SAMZA_LOCAL, SAMZA_STANDALONE");
  }

  @Test
  void samzaOptionsWithEmbedded_areRejectedNamingThem() throws Exception {
    Path file = Files.writeString(dir.resolve("job.properties"), "task.commit.ms=1000\n");
    assertThatThrownBy(() -> settings("--samzaConfig=" + file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--samzaConfig=" + file + " make no sense with --executionEnvironment=EMBEDDED (Samza config is "
            + "read only by SAMZA_LOCAL and SAMZA_STANDALONE); remove it or choose a Samza execution environment");
    assertThatThrownBy(() -> settings("--samzaConfigOverride=a=b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--samzaConfigOverride=a=b make no sense with --executionEnvironment=EMBEDDED");
  }

  @Test
  void fileThenOverrides_makeTheConfig() throws Exception {
    Path file = Files.writeString(dir.resolve("job.properties"),
        "task.commit.ms=1000\nweir.kafka.bootstrap.servers=127.0.0.1:9092\n");
    WeirSettings settings = settings("--executionEnvironment=SAMZA_LOCAL", "--samzaConfig=" + file,
        "--samzaConfigOverride=task.commit.ms=50, job.debounce.time.ms = 10");
    assertThat(settings.samzaConfig()).isEqualTo(Map.of("task.commit.ms", "50",
        "weir.kafka.bootstrap.servers", "127.0.0.1:9092", "job.debounce.time.ms", "10"));
  }

  @Test
  void missingFile_namesTheFile() {
    Path missing = dir.resolve("nope.properties");
    assertThatThrownBy(() -> settings("--executionEnvironment=SAMZA_LOCAL", "--samzaConfig=" + missing))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--samzaConfig=" + missing + ": file not found");
  }

  @Test
  void unreadableFile_namesTheFile() {
    // a directory cannot be read as a properties file (also when running as root)
    assertThatThrownBy(() -> settings("--executionEnvironment=SAMZA_LOCAL", "--samzaConfig=" + dir))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--samzaConfig=" + dir + " cannot be read as a properties file");
  }

  @Test
  void keyWeirOwns_inTheFile_namesTheFileAndTheKey() throws Exception {
    Path file = Files.writeString(dir.resolve("job.properties"),
        "task.commit.ms=1000\njob.systemstreampartition.grouper.factory=x.Y\n");
    assertThatThrownBy(() -> settings("--executionEnvironment=SAMZA_LOCAL", "--samzaConfig=" + file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--samzaConfig=" + file + " sets job.systemstreampartition.grouper.factory, which "
            + "Weir generates itself");
    Path systems = Files.writeString(dir.resolve("systems.properties"), "systems.weir-kafka.samza.factory=x.Y\n");
    assertThatThrownBy(() -> settings("--executionEnvironment=SAMZA_LOCAL", "--samzaConfig=" + systems))
        .hasMessageStartingWith("--samzaConfig=" + systems + " sets systems.weir-kafka.samza.factory");
  }

  @Test
  void keyWeirOwns_inAnOverride_namesTheOptionAndTheKey() {
    assertThatThrownBy(() -> settings("--executionEnvironment=SAMZA_LOCAL",
        "--samzaConfigOverride=task.commit.ms=5,job.coordinator.factory=x.Y"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--samzaConfigOverride sets job.coordinator.factory, which Weir generates itself");
  }

  @Test
  void malformedOverride_namesTheEntry() {
    assertThatThrownBy(() -> settings("--executionEnvironment=SAMZA_LOCAL", "--samzaConfigOverride=a=1,oops"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--samzaConfigOverride=a=1,oops: entry 'oops' is not key=value; allowed: comma-separated "
            + "key=value pairs, e.g. task.commit.ms=1000");
  }

  @Test
  void samzaEnvironmentWithoutTheArtifact_failsNamingTheArtifact() {
    Pipeline p = Pipeline.create(parse("--runner=WeirRunner", "--executionEnvironment=SAMZA_LOCAL"));
    p.apply(Create.of(1, 2, 3));
    assertThatThrownBy(p::run)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("--executionEnvironment=SAMZA_LOCAL needs the artifact dev.weir:weir-runner-samza "
            + "on the classpath");
  }
}
