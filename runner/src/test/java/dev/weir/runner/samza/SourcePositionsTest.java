package dev.weir.runner.samza;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.application.InProcessApplicationDescriptor;
import dev.weir.runner.application.WeirTaskApplication;
import dev.weir.runner.stream.ProducerEndOfStream;
import dev.weir.runner.stream.ProducerWatermark;
import dev.weir.runner.task.WeirTaskFactory;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.time.JobClock;
import dev.weir.runner.translation.JobPlan;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.samza.Partition;
import org.apache.samza.config.Config;
import org.apache.samza.config.MapConfig;
import org.apache.samza.system.IncomingMessageEnvelope;
import org.apache.samza.system.SystemStreamPartition;
import org.apache.samza.util.NoOpMetricsRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Source positions as Samza offsets ({@link BeamSourceSystemFactory}): only batch ends and the
 * final control messages carry one; a consumer registered at a position resumes the split there
 * (bounded: after the elements it had read; unbounded: from the decoded checkpoint mark; ended:
 * only the final watermark and end-of-stream); a corrupt offset fails naming the partition; marks
 * wait for their checkpoint.
 */
class SourcePositionsTest {
  private WeirJobs.Binding binding;
  private Config config;
  private JobPlan plan;

  @AfterEach
  void unbind() {
    if (binding != null) {
      binding.close();
    }
  }

  private SystemStreamPartition bind(GenerateSequence source) {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=WeirRunner", "--parallelism=1",
        "--stateBackend=MEMORY").as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    p.apply(source);
    plan = WeirRunner.translate(p, options);
    WeirTaskFactory tasks = new WeirTaskFactory(plan, Map.of(), WeirSettings.from(options), new StepMetrics(),
        JobClock.SYSTEM, null);
    WeirTaskApplication application = new WeirTaskApplication(plan, tasks);
    InProcessApplicationDescriptor description = new InProcessApplicationDescriptor(Map.of());
    application.describe(description);
    config = new MapConfig(description.toConfig());
    binding = application.bindSystems();
    return new SystemStreamPartition(WeirTaskApplication.SOURCE_SYSTEM, JobPlan.sourceStreamName(plan.stages().get(0)),
        new Partition(0));
  }

  private BeamSourceSystemFactory.Consumer consumer(SystemStreamPartition ssp, String offset) {
    BeamSourceSystemFactory.Consumer consumer = (BeamSourceSystemFactory.Consumer) new BeamSourceSystemFactory()
        .getConsumer(WeirTaskApplication.SOURCE_SYSTEM, config, new NoOpMetricsRegistry());
    consumer.register(ssp, offset);
    consumer.start();
    return consumer;
  }

  private static List<IncomingMessageEnvelope> poll(BeamSourceSystemFactory.Consumer consumer,
      SystemStreamPartition ssp) throws InterruptedException {
    List<IncomingMessageEnvelope> batch = consumer.poll(Set.of(ssp), 1000).get(ssp);
    assertThat(batch).as("a poll of %s", ssp).isNotNull().isNotEmpty();
    return batch;
  }

  /** Polls until the split ended (samza-core's end-of-stream envelope); every batch in order. */
  private static List<List<IncomingMessageEnvelope>> readToEnd(BeamSourceSystemFactory.Consumer consumer,
      SystemStreamPartition ssp) throws InterruptedException {
    List<List<IncomingMessageEnvelope>> batches = new ArrayList<>();
    while (true) {
      List<IncomingMessageEnvelope> batch = poll(consumer, ssp);
      batches.add(batch);
      if (batch.get(batch.size() - 1).isEndOfStream()) {
        return batches;
      }
    }
  }

  private static long value(IncomingMessageEnvelope envelope) {
    return (Long) ((WindowedValue<?>) envelope.getMessage()).getValue();
  }

  @Test
  void onlyTheLastEnvelopeOfABatchAndTheFinalControlMessagesCarryAPosition() throws Exception {
    SystemStreamPartition ssp = bind(GenerateSequence.from(0).to(3000));
    BeamSourceSystemFactory.Consumer consumer = consumer(ssp, null);
    List<List<IncomingMessageEnvelope>> batches = readToEnd(consumer, ssp);
    consumer.stop();
    assertThat(batches.size()).as("3000 elements in batches of at most %d", PartitionConsumer.MAX_ENVELOPES_PER_POLL)
        .isGreaterThanOrEqualTo(3);
    int elements = 0;
    for (List<IncomingMessageEnvelope> batch : batches) {
      for (int i = 0; i < batch.size(); i++) {
        IncomingMessageEnvelope envelope = batch.get(i);
        Object message = envelope.getMessage();
        if (envelope.isEndOfStream()) {
          assertThat(envelope.getOffset()).isEqualTo(IncomingMessageEnvelope.END_OF_STREAM_OFFSET);
        } else if (message instanceof WindowedValue<?>) {
          elements++;
          boolean last = i == batch.size() - 1;
          assertThat(envelope.getOffset()).as("element %d of a batch of %d", i, batch.size())
              .satisfies(o -> assertThat(o != null).isEqualTo(last));
        } else {
          assertThat(message).isInstanceOfAny(ProducerWatermark.class, ProducerEndOfStream.class);
          assertThat(envelope.getOffset()).as("final control message").startsWith(BeamSourceSystemFactory.OFFSET_PREFIX);
        }
      }
    }
    assertThat(elements).isEqualTo(3000);
  }

  @Test
  void boundedSplitRegisteredAtAPositionResumesAfterTheElementsItCovers() throws Exception {
    SystemStreamPartition ssp = bind(GenerateSequence.from(0).to(3000));
    BeamSourceSystemFactory.Consumer first = consumer(ssp, null);
    List<IncomingMessageEnvelope> batch = poll(first, ssp);
    first.stop();
    IncomingMessageEnvelope last = batch.get(batch.size() - 1);
    long covered = value(last) + 1;

    BeamSourceSystemFactory.Consumer resumed = consumer(ssp, last.getOffset());
    List<Long> values = new ArrayList<>();
    for (List<IncomingMessageEnvelope> b : readToEnd(resumed, ssp)) {
      for (IncomingMessageEnvelope e : b) {
        if (e.getMessage() instanceof WindowedValue<?>) {
          values.add(value(e));
        }
      }
    }
    resumed.stop();
    assertThat(values).hasSize((int) (3000 - covered)).startsWith(covered).endsWith(2999L);
  }

  @Test
  void splitRegisteredAtAnEndedPositionGivesOnlyItsFinalWatermarkAndEndOfStream() throws Exception {
    SystemStreamPartition ssp = bind(GenerateSequence.from(0).to(10));
    BeamSourceSystemFactory.Consumer first = consumer(ssp, null);
    List<List<IncomingMessageEnvelope>> batches = readToEnd(first, ssp);
    first.stop();
    List<IncomingMessageEnvelope> lastBatch = batches.get(batches.size() - 1);
    IncomingMessageEnvelope end = lastBatch.get(lastBatch.size() - 2);
    assertThat(end.getMessage()).isInstanceOf(ProducerEndOfStream.class);

    BeamSourceSystemFactory.Consumer resumed = consumer(ssp, end.getOffset());
    List<IncomingMessageEnvelope> all = new ArrayList<>();
    readToEnd(resumed, ssp).forEach(all::addAll);
    resumed.stop();
    assertThat(all).hasSize(3);
    assertThat(all.get(0).getMessage()).isInstanceOfSatisfying(ProducerWatermark.class,
        w -> assertThat(w.getTimestamp()).isEqualTo(BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis()));
    assertThat(all.get(1).getMessage()).isInstanceOf(ProducerEndOfStream.class);
    assertThat(all.get(2).isEndOfStream()).isTrue();
  }

  @Test
  void unboundedSplitResumesFromItsMarkAndHoldsMarksUntilTheirCheckpointIsDurable() throws Exception {
    SystemStreamPartition ssp = bind(GenerateSequence.from(0)); // CountingSource.unbounded()
    BeamSourceSystemFactory.Consumer first = consumer(ssp, null);
    List<IncomingMessageEnvelope> one = poll(first, ssp);
    List<IncomingMessageEnvelope> two = poll(first, ssp);
    assertThat(first.split(ssp).heldMarks()).as("one mark per positioned envelope").isEqualTo(2);
    String checkpointed = one.get(one.size() - 1).getOffset();
    first.afterCheckpoint(Map.of(ssp, checkpointed));
    assertThat(first.split(ssp).heldMarks()).as("finalized on the polling thread, at the next poll").isEqualTo(2);
    poll(first, ssp);
    assertThat(first.split(ssp).heldMarks()).as("the first batch's mark finalized; the next two held").isEqualTo(2);
    first.stop();

    long covered = -1;
    for (IncomingMessageEnvelope e : two) {
      if (e.getMessage() instanceof WindowedValue<?>) {
        covered = value(e);
      }
    }
    BeamSourceSystemFactory.Consumer resumed = consumer(ssp, two.get(two.size() - 1).getOffset());
    List<IncomingMessageEnvelope> next = poll(resumed, ssp);
    resumed.stop();
    IncomingMessageEnvelope firstElement = next.stream().filter(e -> e.getMessage() instanceof WindowedValue<?>)
        .findFirst().orElseThrow();
    assertThat(value(firstElement)).as("the element after the mark's").isEqualTo(covered + 1);
  }

  @Test
  void corruptOffsetFailsTheRegistrationNamingThePartitionAndTheOffset() {
    SystemStreamPartition ssp = bind(GenerateSequence.from(0).to(10));
    BeamSourceSystemFactory.Consumer consumer = (BeamSourceSystemFactory.Consumer) new BeamSourceSystemFactory()
        .getConsumer(WeirTaskApplication.SOURCE_SYSTEM, config, new NoOpMetricsRegistry());
    assertThatThrownBy(() -> consumer.register(ssp, "w1.AAAA")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(ssp.toString()).hasMessageContaining("w1.AAAA");
    assertThatThrownBy(() -> consumer.register(ssp, "12345")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(ssp.toString()).hasMessageContaining("'12345'");
  }

  @Test
  void adminResumesAtTheCheckpointedPositionAndNeverOrdersPositions() {
    WeirSystemAdmin admin = new WeirSystemAdmin("s", Map.of("a", 1));
    SystemStreamPartition ssp = new SystemStreamPartition("s", "a", new Partition(0));
    assertThat(admin.getOffsetsAfter(Map.of(ssp, "w1.abc"))).containsEntry(ssp, "w1.abc");
    assertThat(admin.offsetComparator("w1.abc", "w1.abc")).isZero();
    assertThat(admin.offsetComparator(null, null)).isZero();
    assertThat(admin.offsetComparator("w1.abc", "w1.abd")).isNull();
    assertThat(admin.offsetComparator("w1.abc", null)).isNull();
  }
}
