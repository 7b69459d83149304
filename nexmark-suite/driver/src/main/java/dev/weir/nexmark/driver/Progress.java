// Role: progress over runs with an ETA: a me.tongfei progress bar on a terminal, plain log lines
// (with the same ETA) when System.console() is null (CI, pipes).
// Threading: used from the driver's main thread only; the progress bar refreshes on its own
// thread, which close() stops.
package dev.weir.nexmark.driver;

import java.time.Duration;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/** Progress over a known number of runs. ETA = mean wall time of the finished runs x runs left. */
public final class Progress implements AutoCloseable {
  private final int total;
  private final ProgressBar bar;
  private final long startNanos = System.nanoTime();
  private int done;

  /** @param interactive whether to draw a bar (true only on a terminal) */
  public Progress(int total, boolean interactive) {
    this.total = total;
    this.bar = interactive
        ? new ProgressBarBuilder().setTaskName("nexmark").setInitialMax(total)
            .setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(1000).build()
        : null;
  }

  /** Announces the run about to start. */
  public void starting(String what) {
    if (bar != null) {
      bar.setExtraMessage(what);
    } else {
      System.out.printf("[%d/%d] %s ...%n", done + 1, total, what);
      System.out.flush();
    }
  }

  /** Records a finished run and its one-line outcome. */
  public void finished(String outcome) {
    done++;
    if (bar != null) {
      bar.step();
      bar.setExtraMessage(outcome);
    } else {
      System.out.printf("[%d/%d] %s (elapsed %s, ETA %s)%n", done, total, outcome,
          fmt(Duration.ofNanos(System.nanoTime() - startNanos)), fmt(eta()));
      System.out.flush();
    }
  }

  /** Estimated time to finish the remaining runs. */
  public Duration eta() {
    if (done == 0) {
      return Duration.ZERO;
    }
    long perRun = (System.nanoTime() - startNanos) / done;
    return Duration.ofNanos(perRun * (total - done));
  }

  static String fmt(Duration d) {
    long s = d.getSeconds();
    return String.format("%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60);
  }

  @Override
  public void close() {
    if (bar != null) {
      bar.close();
    }
  }
}
