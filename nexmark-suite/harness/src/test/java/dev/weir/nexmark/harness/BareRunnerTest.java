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

  @Test
  void q0RoundTripsThroughTheSchemaCoderThePipelineInfersForEvents() throws Exception {
    org.apache.beam.sdk.coders.Coder<org.apache.beam.sdk.nexmark.model.Event> coder = BareRunner.pipelineEventCoder();
    assertThat(coder).isInstanceOf(org.apache.beam.sdk.schemas.SchemaCoder.class);
    // The coder a pipeline gives a PCollection<Event> that it infers (as Nexmark's do).
    org.apache.beam.sdk.Pipeline p = org.apache.beam.sdk.Pipeline.create();
    org.apache.beam.sdk.nexmark.NexmarkUtils.setupPipeline(org.apache.beam.sdk.nexmark.NexmarkUtils.CoderStrategy.HAND, p);
    org.apache.beam.sdk.values.PCollection<org.apache.beam.sdk.nexmark.model.Event> events = p
        .apply(org.apache.beam.sdk.transforms.Create.empty(coder))
        .apply(org.apache.beam.sdk.transforms.MapElements
            .into(org.apache.beam.sdk.values.TypeDescriptor.of(org.apache.beam.sdk.nexmark.model.Event.class))
            .via(e -> e));
    assertThat(events.getCoder()).isEqualTo(coder);
  }

  @Test
  void aPassIsTimedFromTheFirstEventToTheLastEventOrResultAsNexmarkTimesARunner() throws Exception {
    long[] clock = new long[2];
    long before = System.currentTimeMillis();
    long results = BareRunner.work(events(20_000), 2, 123, true, clock);
    long after = System.currentTimeMillis();
    assertThat(results).isPositive();
    assertThat(clock[0]).isBetween(before, clock[1]);
    assertThat(clock[1]).isLessThanOrEqualTo(after);
    assertThat(BareRunner.runtimeSec(new long[] {1_000, 3_500}, 9.0)).isEqualTo(2.5);
    // without the pipeline's work there is no clock: the pass's wall time
    BareRunner.work(events(1_000), 2, 123, false, clock);
    assertThat(BareRunner.runtimeSec(clock, 9.0)).isEqualTo(9.0);
    assertThat(BareRunner.runtimeSec(new long[] {5, 5}, 0.0004)).isEqualTo(0.0004);
  }
}
