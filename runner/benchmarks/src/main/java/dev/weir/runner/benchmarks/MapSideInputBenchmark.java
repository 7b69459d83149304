package dev.weir.runner.benchmarks;

import dev.weir.runner.WeirRunner;
import dev.weir.runner.metrics.StepScope;
import dev.weir.runner.operators.OperatorContext;
import dev.weir.runner.operators.ParDoOperator;
import dev.weir.runner.operators.Receiver;
import dev.weir.runner.operators.SerializedCopies;
import dev.weir.runner.time.JobClock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.beam.runners.core.InMemoryMultimapSideInputView;
import org.apache.beam.runners.core.metrics.MetricsContainerImpl;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.DoFnSchemaInformation;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.transforms.ViewFn;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The per-element cost of a ParDo that looks every main-input element up in a {@code View.asMap}
 * side input: Nexmark's {@code --query=13} (BOUNDED_SIDE_INPUT_JOIN) shape, where each bid reads
 * {@code sideInput(view).get(bidder % entries)}.
 *
 * <p>Path measured ({@link #readThroughWeir}): Weir's own {@link ParDoOperator}, opened as a task
 * opens it, with its side input fed through the task's side-input calls ({@code acceptSideInput}
 * for each of the view's {@code entries} KVs in the global window, then the side-input watermark to
 * +infinity). Each benchmark operation hands the operator one main-input element: runners-core's
 * pushback runner checks readiness, the DoFn calls {@code c.sideInput(view).get(key)} (Weir's
 * {@code SideInputs} serves the view it materialised once for the window), and the output goes to
 * a {@link Blackhole}. Bundles are finished every {@value #BUNDLE} elements, as a task would.
 * Expected: the same work per element for 10, 500 and 5,000 entries; a large map's lookups may
 * still miss CPU caches more, which {@link #readThroughWeirTenHotKeys} (same view, 10 keys looked
 * up) tells apart.
 *
 * <p>Reference ({@link #rebuildPerRead}): the same lookup on a view rebuilt from the side input's
 * elements on every read, which is what Beam's {@code SideInputHandler}-based runners did (Beam's
 * Samza runner among them): it grows with the view. It shows the benchmark can tell the difference.
 *
 * <p>Threading: one benchmark thread per state instance; the operator is used as a container
 * thread would use it.
 *
 * <pre>{@code
 * java -jar runner/benchmarks/target/benchmarks.jar MapSideInputBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s
 * }</pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class MapSideInputBenchmark {
  /** Elements per bundle, the runner's default {@code maxBundleSize}. */
  static final int BUNDLE = 1000;
  /** Distinct main-input elements cycled through (a power of two). */
  static final int INPUTS = 4096;

  /** Nexmark Q13's join: the bid's bidder modulo the number of keys looked up, read from the map view. */
  static final class JoinFn extends DoFn<Long, KV<Long, String>> {
    private final PCollectionView<Map<Long, String>> view;
    private final long lookupKeys;

    JoinFn(PCollectionView<Map<Long, String>> view, long lookupKeys) {
      this.view = view;
      this.lookupKeys = lookupKeys;
    }

    @ProcessElement
    public void process(ProcessContext c) {
      long bidder = c.element();
      c.output(KV.of(bidder, c.sideInput(view).get(bidder % lookupKeys)));
    }
  }

  /** One opened operator with its side input loaded; one per benchmark thread. */
  @State(Scope.Thread)
  public static class Join {
    /** Number of entries in the map side input. */
    @Param({"10", "500", "5000"})
    int entries;

    ParDoOperator<Long, KV<Long, String>> operator;
    PCollectionView<Map<Long, String>> view;
    List<KV<Long, String>> sideElements;
    WindowedValue<Long>[] inputs;
    int next;
    int inBundle;

    /** How many of the view's keys the main input looks up: all of them (Q13's shape). */
    long lookupKeys() {
      return entries;
    }

    @Setup
    @SuppressWarnings("unchecked")
    public void setUp(Blackhole blackhole) {
      PipelineOptions options = PipelineOptionsFactory.create();
      options.setRunner(WeirRunner.class); // the pipeline only builds the view; it never runs
      Pipeline pipeline = Pipeline.create(options);
      sideElements = new ArrayList<>(entries);
      for (long k = 0; k < entries; k++) {
        sideElements.add(KV.of(k, "person-" + k));
      }
      view = pipeline
          .apply(Create.of(sideElements).withCoder(KvCoder.of(VarLongCoder.of(), StringUtf8Coder.of())))
          .apply(View.asMap());
      TupleTag<KV<Long, String>> mainTag = new TupleTag<>("main");
      operator = new ParDoOperator<>(new SerializedCopies<>(new JoinFn(view, lookupKeys())), mainTag, List.of(),
          VarLongCoder.of(), Map.of(mainTag, KvCoder.of(VarLongCoder.of(), StringUtf8Coder.of())),
          WindowingStrategy.globalDefault(), DoFnSchemaInformation.create(), Map.of(), List.of(view));
      // As a container's task does: the thread's step scope runs the operator in its own step
      // (its metrics container current), entered once for the whole benchmark.
      StepScope scope = new StepScope();
      scope.installOnCurrentThread();
      scope.enter(scope.step("Join", new MetricsContainerImpl("Join")));
      Receiver output = joined -> {
        if (((KV<?, ?>) joined.getValue()).getValue() == null) { // a wrong view would join nothing
          throw new IllegalStateException("no side-input entry for " + joined.getValue());
        }
        blackhole.consume(joined);
      };
      operator.open(new OperatorContext(options, "Join", 0, Map.of(mainTag, output), null, JobClock.SYSTEM));
      for (KV<Long, String> kv : sideElements) {
        operator.acceptSideInput(0, WindowedValues.valueInGlobalWindow(kv));
      }
      operator.advanceSideInputWatermark(0, BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis());
      inputs = new WindowedValue[INPUTS];
      for (int i = 0; i < INPUTS; i++) {
        inputs[i] = WindowedValues.valueInGlobalWindow((long) i * 7919);
      }
    }

    @TearDown
    public void tearDown() {
      operator.finishBundle();
      if (operator.pushedBackCount() != 0) {
        throw new IllegalStateException(operator.pushedBackCount() + " elements were pushed back: the side input was never ready");
      }
      operator.close();
    }
  }

  /**
   * The same operator, but the main input looks up only 10 of the view's keys: the per-element
   * work is the same as with all keys, the memory touched is not. Separates what the view's size
   * costs through CPU caches (the lookups of a large map miss more) from work done per element.
   */
  @State(Scope.Thread)
  public static class HotJoin extends Join {
    @Override
    long lookupKeys() {
      return Math.min(10, entries);
    }
  }

  /** One main-input element through Weir's ParDo operator and its side-input reader. */
  @Benchmark
  public void readThroughWeir(Join join) {
    process(join);
  }

  /** As {@link #readThroughWeir}, looking up only 10 keys of the view (see {@link HotJoin}). */
  @Benchmark
  public void readThroughWeirTenHotKeys(HotJoin join) {
    process(join);
  }

  private static void process(Join join) {
    join.operator.accept(join.inputs[join.next++ & (INPUTS - 1)]);
    if (++join.inBundle == BUNDLE) {
      join.inBundle = 0;
      join.operator.finishBundle();
    }
  }

  /** Reference: the same lookup on a map view rebuilt from the elements on every read. */
  @Benchmark
  @SuppressWarnings({"unchecked", "rawtypes"})
  public String rebuildPerRead(Join join) {
    long bidder = join.inputs[join.next++ & (INPUTS - 1)].getValue();
    ViewFn fn = join.view.getViewFn();
    Coder<Long> keyCoder = VarLongCoder.of();
    Map<Long, String> map = (Map<Long, String>) fn.apply(
        InMemoryMultimapSideInputView.fromIterable(keyCoder, (List) join.sideElements));
    return map.get(bidder % join.entries);
  }
}
