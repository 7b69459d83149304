// Role: the main class of every runner child JVM. Checks that the requested runner class is
// loadable, optionally runs a check pass over the reference runner's events (CheckPass) and warm-up
// passes of the same query (WarmupPass), runs Beam's Nexmark
// launcher (org.apache.beam.sdk.nexmark.Main) with the arguments unchanged, repeated until the
// measured passes took long enough (MeasuredPasses), then writes process facts (ProcessFacts) and
// exits with 0 (ok) or 1 (failed).
// Threading: runs on the JVM's main thread; Nexmark and the runner start their own threads, which
// System.exit ends (a streaming runner may leave non-daemon threads behind).
package dev.weir.nexmark.harness;

import java.util.List;

/**
 * Entry point of a benchmark child JVM:
 * {@code RunHarness [--checkEvents=C] [--warmupEvents=N [--warmupSeconds=S] [--warmupMaxSeconds=M]]
 * [--measuredSeconds=T] [--noDelayPass=true] <nexmark args>}.
 * With {@code --noDelayPass=true}, after the measured passes, the query runs once more over their
 * events with Nexmark's delayed events off ({@link NoDelayPass}; {@code perf-nodelay.json}), then
 * once in batch mode as the reference count ({@code perf-nodelay-batch.json}; a failure there is
 * recorded, not fatal), outside every measured figure.
 * With {@code --checkEvents=C} (C > 0) the query first runs once over C events, whose result count
 * the driver compares with the reference runner's ({@link CheckPass}); its time counts toward the
 * warm-up's S and M.
 * With {@code --warmupEvents=N} (N > 0; the harness's own options, not passed to Nexmark) the same
 * query first runs over N events in this JVM, and again until the warm-up passes took S seconds in
 * all and, up to M seconds, until the JIT compilers have settled ({@link WarmupPass}); the measured
 * pass then writes Nexmark's perf file, again over the same events until the measured passes took
 * T seconds ({@link MeasuredPasses}; each later one writes a perf file of its own), and CPU, GC and
 * peak-RSS figures cover the measured passes ({@link ProcessFacts#startMeasuredPass}). Exit status
 * 0 when Nexmark returned normally, 1 when it threw (in any pass), 3 when the {@code --runner}
 * class is missing. Process facts go to the file named by the system property
 * {@value ProcessFacts#OUT_PROPERTY}.
 */
public final class RunHarness {
  private RunHarness() {}

  public static void main(String[] args) {
    long start = System.nanoTime();
    String missing = missingRunnerClass(args);
    if (missing != null) {
      String msg = "runner class " + missing + " is not on this classpath (is its module built?)";
      System.err.println("ERROR RunHarness: " + msg);
      ProcessFacts.writeIfRequested((System.nanoTime() - start) / 1e9, msg);
      System.exit(3);
    }
    int status = 0;
    String error = null;
    CheckPass check;
    NoDelayPass noDelay;
    WarmupPass warmup;
    MeasuredPasses measured;
    try {
      check = CheckPass.of(args);
      noDelay = NoDelayPass.of(check.args());
      measured = MeasuredPasses.of(noDelay.args());
      warmup = WarmupPass.of(measured.args());
      measured = measured.withArgs(warmup.measuredArgs());
    } catch (IllegalArgumentException e) {
      System.err.println("ERROR RunHarness: " + e.getMessage());
      ProcessFacts.writeIfRequested((System.nanoTime() - start) / 1e9, e.getMessage());
      System.exit(2);
      return;
    }
    java.util.Map<String, Object> extra = new java.util.LinkedHashMap<>();
    long nexmarkStartEpochMs = System.currentTimeMillis();
    try {
      String[] nexmarkArgs = warmup.measuredArgs();
      PassStats checked = check.run(() -> org.apache.beam.sdk.nexmark.Main.main(check.passArgs(nexmarkArgs)));
      if (checked != null) {
        extra.put("checkPassStats", checked);
      }
      if (warmup.events() > 0) {
        WarmupPass.Done done = warmup.run(checked == null ? 0 : checked.seconds(),
            (pass, events) -> org.apache.beam.sdk.nexmark.Main.main(warmup.warmupArgs(pass, events)));
        extra.put("warmupEvents", done.events());
        extra.put("warmupPasses", done.passes());
        extra.put("warmupSec", done.seconds());
        extra.put("warmupPassStats", done.each());
      }
      if (checked != null || warmup.events() > 0) {
        ProcessFacts.startMeasuredPass();
      }
      // Wall-clock bounds of the measured passes, so a profile can be cut to the measured interval.
      nexmarkStartEpochMs = System.currentTimeMillis();
      MeasuredPasses passes = measured;
      List<PassStats> each = passes.run(MeasuredPasses.numEvents(passes.args()),
          pass -> org.apache.beam.sdk.nexmark.Main.main(passes.passArgs(pass)));
      extra.put("measuredPasses", each.size());
      extra.put("measuredPassStats", each);
      if (noDelay.enabled()) {
        extra.put("nexmarkEndEpochMs", System.currentTimeMillis()); // the measured interval's end
        ProcessFacts.endMeasuredPasses();
        extra.put("noDelayPassStats", noDelay.run(MeasuredPasses.numEvents(passes.args()),
            () -> org.apache.beam.sdk.nexmark.Main.main(noDelay.passArgs(passes.args()))));
        try {
          extra.put("noDelayBatchPassStats", noDelay.run(MeasuredPasses.numEvents(passes.args()),
              () -> org.apache.beam.sdk.nexmark.Main.main(noDelay.batchPassArgs(passes.args()))));
        } catch (Exception e) {
          // Only a reference for the count: a runner without batch support keeps its measured run.
          extra.put("noDelayBatchPassError", firstLine(String.valueOf(e)));
          System.err.println("WARN RunHarness: the batch reference pass failed: " + e);
        }
      }
    } catch (Throwable t) {
      status = 1;
      Throwable root = t;
      while (root.getCause() != null && root.getCause() != root) {
        root = root.getCause();
      }
      error = firstLine(String.valueOf(root));
      System.err.println("ERROR RunHarness: Nexmark failed: " + error);
      t.printStackTrace();
    }
    extra.put("nexmarkStartEpochMs", nexmarkStartEpochMs);
    extra.putIfAbsent("nexmarkEndEpochMs", System.currentTimeMillis());
    ProcessFacts.writeIfRequested((System.nanoTime() - start) / 1e9, error, extra);
    System.out.flush();
    System.err.flush();
    System.exit(status);
  }

  /** The fully qualified {@code --runner} class if it is given and cannot be loaded, else null. */
  static String missingRunnerClass(String[] args) {
    for (String a : args) {
      if (a.startsWith("--runner=")) {
        String name = a.substring("--runner=".length());
        if (name.indexOf('.') < 0) {
          return null; // a registered short name: Beam resolves it
        }
        try {
          Class.forName(name, false, RunHarness.class.getClassLoader());
          return null;
        } catch (ClassNotFoundException | LinkageError e) {
          return name;
        }
      }
    }
    return null;
  }

  private static String firstLine(String s) {
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }
}
