package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.operators.FailureContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.transforms.SimpleFunction;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a consumer sees is what the PCollection's coder says (the encoding rule,
 * {@code translation.EncodingRule}), a user's exception is the job's cause, and emitted combine
 * panes are not changed by later input (issue 17). Batch and streaming.
 */
class ConformancePipelineTest {
  private static final Schema INNER = Schema.builder().addInt64Field("tmp_7f3a").addStringField("tmp_9c1e").build();
  private static final Schema OUTER = Schema.builder().addInt64Field("id").addStringField("name").build();

  /** Rows built under one schema and declared under another are relabelled by the output coder. */
  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void rowsCarryTheirPCollectionsSchema(boolean streaming) {
    Pipeline p = Pipeline.create(Pipelines.options(streaming));
    PCollection<Row> rows = p.apply(Create.of(1L, 2L))
        .apply(MapElements.into(TypeDescriptors.rows())
            .via(i -> Row.withSchema(INNER).addValues(i, "n" + i).build()))
        .setRowSchema(OUTER);
    PCollection<String> names = rows.apply(MapElements.into(TypeDescriptors.strings())
        .via(r -> r.getSchema().getFieldNames().stream().collect(Collectors.joining(",")) + "=" + r.getInt64("id")));
    PAssert.that(names).containsInAnyOrder("id,name=1", "id,name=2");
    p.run().waitUntilFinish();
  }

  /** A coder that fails to encode fails the job, with the coder's exception as the cause. */
  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void aFailingCoderFailsTheJob(boolean streaming) {
    Pipeline p = Pipeline.create(Pipelines.options(streaming));
    p.apply(Create.of("a", "b")).apply(ParDo.of(new Identity())).setCoder(new FailingCoder())
        .apply("Consume", ParDo.of(new Identity())).setCoder(StringUtf8Coder.of());
    assertThatThrownBy(() -> p.run().waitUntilFinish())
        .isInstanceOf(Pipeline.PipelineExecutionException.class)
        .cause().isInstanceOf(CoderException.class).hasMessageStartingWith("cannot encode ");
  }

  /** A DoFn's exception is the cause; the transform is named in a suppressed context. */
  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void aDoFnsExceptionIsTheCauseWithWeirsContextSuppressed(boolean streaming) {
    Pipeline p = Pipeline.create(Pipelines.options(streaming));
    p.apply(GenerateSequence.from(0).to(10)).apply("Explode", ParDo.of(new Explode()));
    assertThatThrownBy(() -> p.run().waitUntilFinish())
        .isInstanceOf(Pipeline.PipelineExecutionException.class)
        .cause().isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("bad element")
        .satisfies(cause -> assertThat(Arrays.stream(cause.getSuppressed()).map(Throwable::getMessage))
            .anyMatch(m -> m.contains("Explode")));
  }

  /**
   * An accumulating triggered window over a combine fn whose accumulator is mutated in place:
   * every pane is the sum so far (1, 3, 6, 10), not changed by what the window receives later.
   */
  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void accumulatingPanesAreNotChangedByLaterInput(boolean streaming) {
    Pipeline p = Pipeline.create(Pipelines.options(streaming));
    TestStream.Builder<KV<String, Long>> events =
        TestStream.create(KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of()));
    for (long i = 1; i <= 4; i++) {
      events = events.addElements(TimestampedValue.of(KV.of("k", i), new Instant(i)));
    }
    PCollection<KV<String, long[]>> sums = p.apply(events.advanceWatermarkToInfinity())
        .apply(Window.<KV<String, Long>>into(FixedWindows.of(Duration.standardMinutes(1)))
            .triggering(Repeatedly.forever(AfterPane.elementCountAtLeast(1)))
            .accumulatingFiredPanes().withAllowedLateness(Duration.ZERO))
        .apply(Combine.perKey(new MutableSum()));
    PCollection<Long> values = sums.apply(MapElements.via(new First()));
    PAssert.that(values).satisfies(new ContainsAll(List.of(1L, 3L, 6L, 10L)));
    p.run().waitUntilFinish();
  }

  static final class ContainsAll implements SerializableFunction<Iterable<Long>, Void> {
    private final List<Long> expected;

    ContainsAll(List<Long> expected) {
      this.expected = new java.util.ArrayList<>(expected);
    }

    @Override
    public Void apply(Iterable<Long> actual) {
      assertThat(actual).containsAll(expected);
      return null;
    }
  }

  /** Sums into a one-element array it returns as its output: accumulator and output are one object. */
  static final class MutableSum extends Combine.CombineFn<Long, long[], long[]> {
    @Override
    public long[] createAccumulator() {
      return new long[1];
    }

    @Override
    public long[] addInput(long[] acc, Long input) {
      acc[0] += input;
      return acc;
    }

    @Override
    public long[] mergeAccumulators(Iterable<long[]> accs) {
      long[] first = null;
      for (long[] a : accs) {
        if (first == null) {
          first = a;
        } else {
          first[0] += a[0];
        }
      }
      return first == null ? createAccumulator() : first;
    }

    @Override
    public long[] extractOutput(long[] acc) {
      return acc;
    }

    @Override
    public org.apache.beam.sdk.coders.Coder<long[]> getAccumulatorCoder(
        org.apache.beam.sdk.coders.CoderRegistry registry, org.apache.beam.sdk.coders.Coder<Long> input) {
      return new LongArrayCoder();
    }

    @Override
    public org.apache.beam.sdk.coders.Coder<long[]> getDefaultOutputCoder(
        org.apache.beam.sdk.coders.CoderRegistry registry, org.apache.beam.sdk.coders.Coder<Long> input) {
      return new LongArrayCoder();
    }
  }

  static final class LongArrayCoder extends AtomicCoder<long[]> {
    @Override
    public void encode(long[] value, OutputStream out) throws IOException {
      VarLongCoder.of().encode(value[0], out);
    }

    @Override
    public long[] decode(InputStream in) throws IOException {
      return new long[] {VarLongCoder.of().decode(in)};
    }
  }

  static final class First extends SimpleFunction<KV<String, long[]>, Long> {
    @Override
    public Long apply(KV<String, long[]> kv) {
      return kv.getValue()[0];
    }
  }

  static final class Explode extends DoFn<Long, Long> {
    @ProcessElement
    public void process(@Element Long x) {
      throw new IllegalArgumentException("bad element " + x);
    }
  }

  static final class Identity extends DoFn<String, String> {
    @ProcessElement
    public void process(@Element String s, OutputReceiver<String> out) {
      out.output(s);
    }
  }

  static final class FailingCoder extends AtomicCoder<String> {
    @Override
    public void encode(String value, OutputStream out) throws IOException {
      throw new CoderException("cannot encode " + value);
    }

    @Override
    public String decode(InputStream in) throws IOException {
      throw new CoderException("cannot decode");
    }
  }

  @SuppressWarnings("unused")
  private static final Class<?> CONTEXT = FailureContext.class;
}
