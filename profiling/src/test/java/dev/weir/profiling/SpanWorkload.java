package dev.weir.profiling;

import one.profiler.Span;

/**
 * A test program shaped like a fused stage: three "transforms" processed in bundles on one
 * thread, each bundle wrapped in a span tagged with the transform's name, as Weir's run loop
 * does. ParDo(Heavy) does four times the work of ParDo(Light); Read(Events) allocates.
 * Argument: run time in ms (default 3000; a negative value runs until killed).
 */
public final class SpanWorkload {
  private SpanWorkload() {}

  static double work(int n) {
    double s = 0;
    for (int i = 0; i < n; i++) {
      s += Math.sqrt(i) * Math.sin(i);
    }
    return s;
  }

  public static void main(String[] args) {
    long ms = args.length > 0 ? Long.parseLong(args[0]) : 3000;
    long end = ms < 0 ? Long.MAX_VALUE : System.currentTimeMillis() + ms;
    double sink = 0;
    byte[][] keep = new byte[64][];
    int k = 0;
    System.out.println("workload started");
    System.out.flush();
    while (System.currentTimeMillis() < end) {
      long t = Span.start();
      for (int i = 0; i < 200; i++) {
        keep[k++ & 63] = new byte[2048];
      }
      Span.end(t, "Read(Events)");
      t = Span.start();
      sink += work(200_000);
      Span.end(t, "ParDo(Heavy)");
      t = Span.start();
      sink += work(50_000);
      Span.end(t, "ParDo(Light)");
    }
    System.out.println(sink + keep.length);
  }
}
