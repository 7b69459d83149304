package dev.weir.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Starts real Kafka brokers (child JVMs): one shared by the class through {@link
 * KafkaBrokerExtension}, more for start and failure cases. About 30 s on 2 cores.
 */
class KafkaBrokerIT {

  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  private static final Path BASE = Paths.get("target", "kafka-broker-it");

  @Test
  void topicWithPartitionsCarriesRecordsFromProducerToConsumer(KafkaBroker broker)
      throws Exception {
    assertThat(broker).isSameAs(KAFKA.broker());
    broker.createTopic("words", 3);
    broker.createTopic("words", 3); // an existing topic of the same shape is accepted
    assertThat(
            broker.admin().describeTopics(List.of("words")).allTopicNames().get().get("words")
                .partitions())
        .hasSize(3);

    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < 30; i++) {
        producer.send(new ProducerRecord<>("words", i % 3, "k" + i, "v" + i)).get();
      }
    }

    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    Set<String> values = new TreeSet<>();
    Set<Integer> partitions = new TreeSet<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> all = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        all.add(new TopicPartition("words", i));
      }
      consumer.assign(all);
      consumer.seekToBeginning(all);
      for (int polls = 0; polls < 100 && values.size() < 30; polls++) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          values.add(r.value());
          partitions.add(r.partition());
        }
      }
    }
    assertThat(values).hasSize(30).contains("v0", "v29");
    assertThat(partitions).containsExactly(0, 1, 2);
  }

  @Test
  void topicWithAnotherPartitionCountIsAnError(KafkaBroker broker) {
    broker.createTopic("shape", 2);
    assertThatThrownBy(() -> broker.createTopic("shape", 4))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("shape")
        .hasMessageContaining("2 partitions, not 4");
  }

  @Test
  void closeStopsTheProcessAndFreesThePortAndAStoppedBrokerRestartsOnItsData() throws Exception {
    Path dir = BASE.resolve("restart-" + System.nanoTime());
    int port;
    try (KafkaBroker broker = KafkaBroker.start(KafkaBroker.Config.in(dir))) {
      port = broker.port();
      broker.createTopic("kept", 2);
      assertThat(KafkaBroker.attach(dir)).map(KafkaBroker::pid).contains(broker.pid());
      broker.close();
      assertThat(broker.isRunning()).isFalse();
    }
    assertThat(KafkaBroker.attach(dir)).isEmpty();
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    }
    try (KafkaBroker again = KafkaBroker.start(KafkaBroker.Config.in(dir).withPort(port))) {
      assertThat(again.admin().listTopics().names().get()).contains("kept");
    }
  }

  @Test
  void aTakenPortIsNamed() throws Exception {
    try (ServerSocket taken = new ServerSocket()) {
      taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      int port = taken.getLocalPort();
      assertThatThrownBy(
              () ->
                  KafkaBroker.start(
                      KafkaBroker.Config.in(BASE.resolve("taken-" + port)).withPort(port)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("127.0.0.1:" + port)
          .hasMessageContaining("taken");
    }
  }

  @Test
  void aDirectoryThatCannotBeCreatedIsNamed() throws Exception {
    Files.createDirectories(BASE);
    Path file = Files.createTempFile(BASE, "not-a-dir", ".txt");
    Path dir = file.resolve("kafka");
    assertThatThrownBy(() -> KafkaBroker.start(KafkaBroker.Config.in(dir)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(dir.toAbsolutePath().toString());
  }

  @Test
  void aJavaThatCannotRunTheBrokerIsNamedWithTheLog() throws Exception {
    // A stand-in for a JVM too old for Kafka 3.9: prints what such a JVM prints and exits 1.
    Files.createDirectories(BASE);
    Path java = BASE.resolve("old-java-" + System.nanoTime());
    Files.writeString(
        java,
        "#!/bin/sh\n"
            + "echo 'Error: LinkageError occurred while loading main class kafka.tools.StorageTool'\n"
            + "echo 'java.lang.UnsupportedClassVersionError: class file version 55.0'\n"
            + "exit 1\n");
    Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path dir = BASE.resolve("old-java-dir-" + System.nanoTime());
    assertThatThrownBy(
            () ->
                KafkaBroker.start(
                    KafkaBroker.Config.in(dir).withJavaExecutable(java.toString())))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(java.toAbsolutePath().toString())
        .hasMessageContaining("UnsupportedClassVersionError");

    Path missing = BASE.resolve("no-such-java");
    assertThatThrownBy(
            () ->
                KafkaBroker.start(
                    KafkaBroker.Config.in(dir).withJavaExecutable(missing.toString())))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(missing.toAbsolutePath().toString());
  }

  @Test
  void commandLineStartsReportsAndStopsABroker() {
    Path dir = BASE.resolve("cli-" + System.nanoTime()).toAbsolutePath();
    assertThat(cli("status", "--dir", dir.toString())).startsWith("1:No Kafka broker runs from");
    String started = cli("start", "--port", "0", "--dir", dir.toString());
    try {
      assertThat(started).startsWith("0:Kafka broker running at 127.0.0.1:");
      assertThat(cli("status", "--dir=" + dir)).startsWith("0:Kafka broker running at");
      assertThat(cli("start", "--port", "0", "--dir", dir.toString()))
          .startsWith("2:A Kafka broker already runs from " + dir);
    } finally {
      assertThat(cli("stop", "--dir", dir.toString())).startsWith("0:Stopped");
    }
    assertThat(cli("status", "--dir", dir.toString())).startsWith("1:");
    assertThat(cli("start", "--port", "x")).contains("--port").contains("0..65535");
    assertThat(cli("restart")).startsWith("2:Unknown command restart");
  }

  private static String cli(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
    int code = KafkaBrokerCli.run(args, print, print);
    return code + ":" + out.toString(StandardCharsets.UTF_8);
  }

}
