package dev.weir.runner.executor;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * SIGTERM and SIGINT (Ctrl-C) for restorable streaming jobs: the first signal stops every such job
 * of this JVM with a savepoint ({@link JobExecutor#stopWithSavepoint}), logging one line per job,
 * then hands the signal to the JVM's own handler, which exits as it would have; a second signal
 * while they stop halts the JVM at once. Without a restorable job running, the JVM's handlers are in
 * place: nothing changes for other programs or jobs.
 *
 * <p>Why not a shutdown hook: by the time hooks run the JVM is exiting, every daemon container
 * thread may already be gone, and a second signal cannot cut the wait short. Handlers installed
 * through {@code sun.misc.Signal} (module {@code jdk.unsupported}, as Flink's and Kafka's signal
 * logging use) run first, on a thread of their own, and the JVM's handler is chained after them.
 *
 * <p>Threading: {@link #register}/{@link #unregister} from any thread (synchronized); the handler
 * runs on the JVM's signal thread and stops the jobs on a thread of its own.
 */
final class StopSignals {
  private static final Logger LOG = LoggerFactory.getLogger(StopSignals.class);
  private static final List<String> SIGNALS = List.of("TERM", "INT");
  /** The least time a job gets to take its savepoint before the JVM exits without it, ms. */
  static final long MIN_STOP_TIMEOUT_MS = 30_000;

  private static final Set<JobExecutor> JOBS = new LinkedHashSet<>();
  /** The handlers in place before the first registration, by signal name; empty while none is installed. */
  private static final Map<String, SignalHandler> PREVIOUS = new HashMap<>();
  private static final AtomicBoolean STOPPING = new AtomicBoolean();

  private StopSignals() {}

  /** Handles the signals for {@code job} until it is {@link #unregister}ed (at its end). */
  static synchronized void register(JobExecutor job) {
    if (JOBS.isEmpty() && !STOPPING.get()) {
      for (String name : SIGNALS) {
        try {
          PREVIOUS.put(name, Signal.handle(new Signal(name), StopSignals::handle));
        } catch (IllegalArgumentException e) {
          LOG.debug("Signal {} cannot be handled here ({}); it ends the JVM as before", name, e.getMessage());
        }
      }
    }
    JOBS.add(job);
  }

  /** No longer handles the signals for {@code job}; the JVM's handlers are back once no job is left. */
  static synchronized void unregister(JobExecutor job) {
    if (JOBS.remove(job) && JOBS.isEmpty() && !STOPPING.get()) {
      restorePrevious();
    }
  }

  private static void restorePrevious() {
    PREVIOUS.forEach((name, handler) -> Signal.handle(new Signal(name), handler));
    PREVIOUS.clear();
  }

  private static void handle(Signal signal) {
    if (!STOPPING.compareAndSet(false, true)) {
      LOG.warn("SIG{} received again while stopping with a savepoint: exiting at once", signal.getName());
      Runtime.getRuntime().halt(128 + signal.getNumber());
      return;
    }
    List<JobExecutor> jobs;
    synchronized (StopSignals.class) {
      jobs = List.copyOf(JOBS);
    }
    Thread stopper = new Thread(() -> {
      for (JobExecutor job : jobs) {
        long timeoutMs = Math.max(MIN_STOP_TIMEOUT_MS, 3 * job.checkpointIntervalMs());
        LOG.info("Weir job {}: SIG{} received: stopping with a savepoint (within {} s; send it again to exit at once)",
            job.jobName(), signal.getName(), TimeUnit.MILLISECONDS.toSeconds(timeoutMs));
        try {
          Path savepoint = job.stopWithSavepoint(timeoutMs);
          LOG.info("Weir job {}: stopped with a savepoint in {}; exiting", job.jobName(), savepoint);
        } catch (Exception e) {
          LOG.warn("Weir job {}: no savepoint ({}); it resumes from its last complete checkpoint", job.jobName(),
              e.toString());
        }
      }
      SignalHandler previous;
      synchronized (StopSignals.class) {
        previous = PREVIOUS.get(signal.getName());
        restorePrevious();
      }
      if (previous != null && previous != SignalHandler.SIG_DFL && previous != SignalHandler.SIG_IGN) {
        previous.handle(signal); // the JVM's own: exits with 128 + the signal's number
      } else if (previous != SignalHandler.SIG_IGN) {
        Signal.raise(signal);
      }
    }, "weir-stop-on-signal");
    stopper.setDaemon(false);
    stopper.start();
  }
}
