// Role: unit tests of the bare limit's work loop. Threading: single-threaded JUnit tests.
package dev.weir.nexmark.harness;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.beam.sdk.nexmark.NexmarkConfiguration;
import org.apache.beam.sdk.nexmark.sources.generator.GeneratorConfig;
import org.junit.jupiter.api.Test;

class BareRunnerTest {
  private static GeneratorConfig events(long n) {
    NexmarkConfiguration config = NexmarkConfiguration.DEFAULT.copy();
    config.numEvents = n;
    return new GeneratorConfig(config, 1_700_000_000_000L, 0, n, 0);
  }

  @Test
  void pipelineWorkCountsTheSameResultsAsTheQueryAlone() throws Exception {
    long auctionSkip = NexmarkConfiguration.DEFAULT.auctionSkip;
    for (int q = 0; q <= 2; q++) {
      long alone = BareRunner.work(events(20_000), q, auctionSkip, false);
      long withPipeline = BareRunner.work(events(20_000), q, auctionSkip, true);
      assertThat(withPipeline).as("Q%d", q).isEqualTo(alone).isPositive();
    }
    // Q0 passes every event; Q1 every bid (46 of 50 events); Q2 the bids of every auctionSkip-th auction.
    assertThat(BareRunner.work(events(20_000), 0, auctionSkip, true)).isEqualTo(20_000);
    assertThat(BareRunner.work(events(20_000), 1, auctionSkip, true)).isEqualTo(18_400);
  }
}
