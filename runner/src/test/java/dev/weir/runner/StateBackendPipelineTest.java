package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.transforms.SerializableFunction;
import java.util.stream.Stream;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.SimpleFunction;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * GroupByKey state on both backends, with an object cache far smaller than the state, and a bag's
 * full chunks sealed on the container's thread or by the job's sealers ({@code --backgroundSealing}).
 */
class StateBackendPipelineTest {
  /** Elements: 400 per key, so each key's bag seals six full chunks. */
  private static final int ELEMENTS = 12_000;

  @TempDir Path dir;

  @ParameterizedTest(name = "{0}, streaming={1}, backgroundSealing={2}")
  @CsvSource({"ROCKSDB,false,true", "ROCKSDB,true,true", "MEMORY,false,true", "MEMORY,true,true",
      "ROCKSDB,true,false", "MEMORY,false,false"})
  void groupByKeyIsExactWithATinyCacheAndTheJobDirectoryIsDeleted(String backend, boolean streaming,
      boolean backgroundSealing) throws Exception {
    WeirPipelineOptions options = Pipelines.options(streaming);
    options.setBackgroundSealing(backgroundSealing);
    options.setStateBackend(dev.weir.state.StateBackend.valueOf(backend));
    options.setStateDirectory(dir.toString());
    options.setObjectCacheSize(16); // far fewer entries than buffered elements: eviction write-back
    options.setMaxBundleSize(100);
    Pipeline p = Pipeline.create(options);
    List<Integer> numbers = new ArrayList<>();
    for (int i = 0; i < ELEMENTS; i++) {
      numbers.add(i);
    }
    PCollection<KV<Integer, Long>> sums = p.apply(Create.of(numbers))
        .apply(MapElements.via(new KeyByMod30()))
        .apply(GroupByKey.create())
        .apply(MapElements.via(new SumGroup()));
    PAssert.that(sums).satisfies(new ExactSums());
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
    try (Stream<Path> left = Files.list(dir)) {
      assertThat(left).as("per-job state directories left behind").isEmpty();
    }
  }

  static final class ExactSums implements SerializableFunction<Iterable<KV<Integer, Long>>, Void> {
    @Override
    public Void apply(Iterable<KV<Integer, Long>> sums) {
      Map<Integer, Long> expected = new HashMap<>();
      for (int i = 0; i < ELEMENTS; i++) {
        expected.merge(i % 30, (long) i, Long::sum);
      }
      Map<Integer, Long> actual = new HashMap<>();
      for (KV<Integer, Long> kv : sums) {
        assertThat(actual.put(kv.getKey(), kv.getValue())).as("key %s output twice", kv.getKey()).isNull();
      }
      assertThat(actual).isEqualTo(expected);
      return null;
    }
  }

  static final class KeyByMod30 extends SimpleFunction<Integer, KV<Integer, Integer>> {
    @Override
    public KV<Integer, Integer> apply(Integer i) {
      return KV.of(i % 30, i);
    }
  }

  static final class SumGroup extends SimpleFunction<KV<Integer, Iterable<Integer>>, KV<Integer, Long>> {
    @Override
    public KV<Integer, Long> apply(KV<Integer, Iterable<Integer>> group) {
      long sum = 0;
      for (int v : group.getValue()) {
        sum += v;
      }
      return KV.of(group.getKey(), sum);
    }
  }
}
