package dev.weir.profiling;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TypeDescriptors;

/**
 * A short Weir pipeline for the profiling test: a bounded sequence, a CPU-heavy ParDo named
 * "Burn", a keying step and a per-key sum, run with {@code --runner=WeirRunner}. Argument: the
 * number of elements (default 300,000).
 */
public final class WeirPipelineWorkload {
  private WeirPipelineWorkload() {}

  /** Burns CPU per element so that the transform stands out in the profile. */
  static final class BurnFn extends DoFn<Long, Long> {
    private static final long serialVersionUID = 1L;

    @ProcessElement
    public void process(@Element Long x, OutputReceiver<Long> out) {
      double s = 0;
      for (int i = 0; i < 400; i++) {
        s += Math.sqrt(x + i);
      }
      out.output(x + (s > 0 ? 0 : 1));
    }
  }

  public static void main(String[] args) {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 300_000;
    Pipeline p = Pipeline.create(PipelineOptionsFactory.fromArgs("--runner=WeirRunner", "--parallelism=2",
        "--stateBackend=MEMORY").create());
    p.apply("Numbers", GenerateSequence.from(0).to(n))
        .apply("Burn", ParDo.of(new BurnFn()))
        .apply("Key", MapElements.into(TypeDescriptors.kvs(TypeDescriptors.longs(), TypeDescriptors.longs()))
            .via(x -> KV.of(x % 16, x)))
        .apply("SumPerKey", Sum.longsPerKey());
    PipelineResult.State state = p.run().waitUntilFinish();
    System.out.println("pipeline " + state);
  }
}
