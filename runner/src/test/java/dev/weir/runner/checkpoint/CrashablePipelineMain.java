package dev.weir.runner.checkpoint;

import java.nio.file.Path;
import java.util.Arrays;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;

/**
 * Child-JVM entry point of the crash tests: runs {@link CrashablePipeline} over a
 * {@link PacedIndexSource} until it ends, or until it is killed.
 *
 * <p>Arguments: {@code <outputDirectory> <count> <elementsPerSecond> <splits> <pipeline options...>}
 * (e.g. {@code --runner=WeirRunner --streaming --stateBackend=rocksdb --containers=2
 * --jobName=... --stateDirectory=... --checkpointingIntervalMs=300}). Prints to standard output
 * {@code STARTED} once {@code run()} returned, the source's {@code READER ...} and the pipeline's
 * {@code FIRED ...} lines, and {@code DONE <state>} at the end; exits 0 if the job ended
 * {@code DONE}, 1 if it ended otherwise, 2 if it failed (stack trace on standard error).
 */
public final class CrashablePipelineMain {
  private CrashablePipelineMain() {}

  public static void main(String[] args) {
    System.setProperty("weir.crash.announce", "true");
    try {
      Path out = Path.of(args[0]);
      long count = Long.parseLong(args[1]);
      long elementsPerSecond = Long.parseLong(args[2]);
      int splits = Integer.parseInt(args[3]);
      PipelineOptions options = PipelineOptionsFactory.fromArgs(Arrays.copyOfRange(args, 4, args.length))
          .withValidation().create();
      Pipeline p = Pipeline.create(options);
      CrashablePipeline.build(p, new PacedIndexSource(count, elementsPerSecond, splits), out);
      PipelineResult result = p.run();
      System.out.println("STARTED");
      System.out.flush();
      PipelineResult.State state = result.waitUntilFinish();
      System.out.println("DONE " + state);
      System.out.flush();
      System.exit(state == PipelineResult.State.DONE ? 0 : 1);
    } catch (Throwable t) {
      System.out.println("FAILED " + t);
      System.out.flush();
      t.printStackTrace();
      System.err.flush();
      System.exit(2);
    }
  }
}
