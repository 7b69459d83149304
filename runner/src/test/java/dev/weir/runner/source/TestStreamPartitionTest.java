package dev.weir.runner.source;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.stream.ProducerEndOfStream;
import dev.weir.runner.stream.ProducerWatermark;
import dev.weir.runner.time.ManualJobClock;
import dev.weir.runner.time.Quiescence;
import dev.weir.runner.translation.SourceSpec;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.WindowedValue;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * A test stream's partition, polled directly: each event only once the job is quiescent, each
 * element event followed by its end marker, and replaying until its last event is out.
 */
class TestStreamPartitionTest {

  @Test
  void eachElementEventEndsWithItsMarkerAndTheStreamReplaysUntilTheLastEventIsOut() {
    TestStream<Long> events = TestStream.create(VarLongCoder.of())
        .addElements(TimestampedValue.of(1L, new Instant(1)), TimestampedValue.of(2L, new Instant(2)))
        .addElements(TimestampedValue.of(3L, new Instant(3)))
        .advanceWatermarkTo(new Instant(10))
        .advanceWatermarkToInfinity();
    ManualJobClock clock = new ManualJobClock();
    Quiescence quiescence = new Quiescence(1);
    SourcePartition partition = SourcePartition.create(new SourceSpec.Test(events.getEvents()), "s", 0, "t", clock,
        quiescence);
    StepScope scope = new StepScope();
    partition.open(new SourceContext(PipelineOptionsFactory.create(), scope, scope.step("read", null)));
    try {
      assertThat(quiescence.replaying()).isTrue();
      List<String> polled = new ArrayList<>();
      for (int i = 0; i < 100 && polled.size() < 9; i++) {
        Object message = partition.poll();
        quiescence.ticked(0, clock.millis()); // the one container ticks between polls
        if (message instanceof WindowedValue<?> v) {
          polled.add(String.valueOf(v.getValue()));
        } else if (message == SourcePartition.END_OF_EVENT) {
          polled.add("|");
        } else if (message instanceof ProducerWatermark w) {
          polled.add("wm " + w.getTimestamp());
        } else if (message instanceof ProducerEndOfStream) {
          polled.add("end");
        }
      }
      String end = "wm " + SourcePartition.MAX_WATERMARK_MS;
      assertThat(polled).as("the stream's last watermark event, then the source's final watermark")
          .containsExactly("1", "2", "|", "3", "|", "wm 10", end, end, "end");
      assertThat(quiescence.replaying()).as("the last event is out").isFalse();
    } finally {
      partition.close();
    }
  }
}
