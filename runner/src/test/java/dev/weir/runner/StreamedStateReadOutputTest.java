package dev.weir.runner;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.IterableCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.state.MapState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A DoFn that outputs a state read itself: reads of more than one page stream from the
 * container's store, so the executor must copy them before the element crosses to another
 * container's thread (here through a Reshuffle and a second stage that iterates them; with 16
 * reads and random shuffle keys over 2 containers, some cross threads in practically every run —
 * without the copy they fail with the read's IllegalStateException).
 */
class StreamedStateReadOutputTest {
  @TempDir Path dir;

  static final int ENTRIES = 1_000; // several 256-cell pages
  /** Keys, each read once: the Reshuffle's random keys send some reads to the other container. */
  static final int KEYS = 16;

  /** Puts every element into a MapState; at the last one outputs the map's keys read as is. */
  static final class KeysAtTheEndFn extends DoFn<KV<String, Long>, KV<String, Iterable<Long>>> {
    @StateId("map")
    private final StateSpec<MapState<Long, Long>> mapSpec = StateSpecs.map(VarLongCoder.of(), VarLongCoder.of());

    @StateId("count")
    private final StateSpec<ValueState<Long>> countSpec = StateSpecs.value(VarLongCoder.of());

    @ProcessElement
    public void process(@Element KV<String, Long> element, @StateId("map") MapState<Long, Long> map,
        @StateId("count") ValueState<Long> count, OutputReceiver<KV<String, Iterable<Long>>> out) {
      map.put(element.getValue(), element.getValue());
      Long seen = count.read();
      long next = (seen == null ? 0 : seen) + 1;
      count.write(next);
      if (next == ENTRIES) {
        out.output(KV.of(element.getKey(), map.keys().read())); // the streamed read, not a copy
      }
    }
  }

  @ParameterizedTest(name = "{0}, streaming={1}")
  @CsvSource({"ROCKSDB,false", "ROCKSDB,true", "MEMORY,true"})
  void aLargeStateReadOutputDirectlyIsIntactInTheNextStage(String backend, boolean streaming) {
    WeirPipelineOptions options = Pipelines.options(streaming);
    options.setStateBackend(dev.weir.state.StateBackend.valueOf(backend));
    options.setStateDirectory(dir.toString());
    Pipeline p = Pipeline.create(options);
    List<KV<String, Long>> input = new ArrayList<>();
    List<Long> expected = new ArrayList<>();
    for (int key = 0; key < KEYS; key++) {
      for (long i = 0; i < ENTRIES; i++) {
        input.add(KV.of("k" + key, i));
      }
      expected.add((long) ENTRIES);
    }
    PCollection<Long> sizes = p.apply(Create.of(input))
        .apply(ParDo.of(new KeysAtTheEndFn()))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), IterableCoder.of(VarLongCoder.of())))
        .apply(Reshuffle.of())
        .apply(MapElements.into(TypeDescriptors.longs()).via(kv -> {
          long n = 0;
          for (Long ignored : kv.getValue()) {
            n++;
          }
          return n;
        }));
    PAssert.that(sizes).containsInAnyOrder(expected);
    p.run().waitUntilFinish();
  }
}
