package dev.weir.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs {@link OrdersWithCustomers} on Weir over the shipped CSV files and checks the file it writes. */
class OrdersWithCustomersTest {
  @TempDir
  Path tmp;

  @Test
  void enrichesEveryOrderWithItsCustomersName() throws IOException {
    Path output = tmp.resolve("enriched.csv");
    OrdersWithCustomers.Options options = PipelineOptionsFactory
        .fromArgs(OnWeir.args("--customers=src/test/resources/customers.csv",
            "--orders=src/test/resources/orders.csv", "--output=" + output))
        .withValidation().as(OrdersWithCustomers.Options.class);

    PipelineResult.State state = OrdersWithCustomers.build(options).run().waitUntilFinish();

    assertThat(state).isEqualTo(PipelineResult.State.DONE);
    assertThat(Files.readAllLines(output, StandardCharsets.UTF_8)).containsExactlyInAnyOrder(
        "o1001,Ada Lovelace,1250",
        "o1002,Grace Hopper,830",
        "o1003,Ada Lovelace,99",
        "o1004,Edsger Dijkstra,4500",
        "o1005,<unknown>,120",
        "o1006,Barbara Liskov,2675",
        "o1007,Grace Hopper,310",
        "o1008,Edsger Dijkstra,15");
  }
}
