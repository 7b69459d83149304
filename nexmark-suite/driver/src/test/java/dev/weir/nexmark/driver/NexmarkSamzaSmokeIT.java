// Role: the CI smoke test of the weir-samza runner: Nexmark Q3 (CoGroupByKey shuffles, ValueState,
// an event-time timer; so intermediate streams on Kafka and Samza stores) on embedded Weir and on
// Weir on samza-core, through the driver as `bin/weir nexmark --runners weir,weir-samza` runs it:
// the suite starts its Kafka broker, both runs finish with equal result counts, the broker is
// stopped and its data deleted at the end. About 40 s on 2 cores (broker ~5 s, embedded Weir ~7 s,
// weir-samza ~25 s).
// Threading: the driver runs on the test thread; child JVMs run one at a time.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.testservices.KafkaBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class NexmarkSamzaSmokeIT {
  @TempDir Path out;

  @Test
  void q3OnWeirSamzaAgreesWithEmbeddedWeirAndTheBrokerIsStoppedAfterwards() throws Exception {
    int exit = new CommandLine(new NexmarkCommand()).execute(
        "--runners", "weir,weir-samza", "--queries", "3", "--events", "10000",
        "--warmup-events", "0", "--measured-seconds", "0", "--timeout-per-run", "150", "--out", out.toString());
    assertThat(exit).isZero();

    Path dir;
    try (Stream<Path> s = Files.list(out)) {
      dir = s.filter(Files::isDirectory).findFirst().orElseThrow();
    }
    Path results = dir.resolve("results.json");
    assertThat(SchemaCheck.errors(results)).isEmpty();
    JsonNode doc = new ObjectMapper().readTree(results.toFile());
    assertThat(doc.get("runs")).hasSize(2);
    for (JsonNode run : doc.get("runs")) {
      assertThat(run.get("status").asText()).as(run.get("runner") + ": " + run.get("firstErrorLine"))
          .isEqualTo("ok");
    }
    JsonNode weir = doc.get("runs").get(0);
    JsonNode samza = doc.get("runs").get(1);
    assertThat(samza.get("runner").asText()).isEqualTo("weir-samza");
    assertThat(samza.get("numResults").asLong()).isEqualTo(weir.get("numResults").asLong()).isPositive();
    assertThat(samza.get("correct").asBoolean()).isTrue();
    assertThat(samza.get("command").toString()).contains("--executionEnvironment=SAMZA_LOCAL")
        .contains("weir.kafka.topic.prefix=nexmark-002");
    assertThat(weir.get("command").toString()).doesNotContain("samzaConfigOverride");
    // Embedded Weir runs Weir for Beam 2.73; weir-runner-samza is built on Weir for Beam 2.70.
    assertThat(weir.get("beamVersion").asText()).startsWith("2.73.");
    assertThat(samza.get("beamVersion").asText()).startsWith("2.70.");

    JsonNode kafka = doc.get("settings").get("kafka");
    assertThat(kafka.get("startedBySuite").asBoolean()).isTrue();
    assertThat(kafka.get("bootstrapServers").asText()).startsWith("127.0.0.1:");
    Path brokerDir = dir.resolve("kafka-broker");
    assertThat(KafkaBroker.attach(brokerDir)).isEmpty(); // stopped
    assertThat(brokerDir.resolve("data")).doesNotExist();
    assertThat(brokerDir.resolve("broker.log")).exists();
    assertThat(doc.get("summary").get("rows").get(0).get("weirSamzaOverWeir").asDouble()).isPositive();
  }
}
