package dev.weir.runner.operators;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.transforms.DoFn;
import org.joda.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bundle finalization for the operators of one container ({@link DoFn.BundleFinalizer}).
 *
 * <p>Life of a callback: a DoFn registers it during a bundle through its operator's
 * {@link Finalizer} (what runners-core hands the DoFn, taken from the operator's
 * {@code StepContext.bundleFinalizer()}); when the operator finishes that bundle it calls
 * {@link Finalizer#bundleFinished()}, which moves the bundle's callbacks here; after the container's
 * next commit (state flushed to its storage, finished bundles' outputs handed downstream) the
 * container calls {@link #runCommitted()}, which runs each of them once, in registration order.
 * Callbacks of a bundle that never finishes (the job failed or was cancelled) never run.
 *
 * <p>Best effort, as Beam's javadoc allows: a callback whose expiry (wall-clock time, as DoFns
 * compute it from {@code Instant.now()}) has passed when it would run is dropped; one that throws
 * is logged and dropped (not retried), and neither fails the job. Each callback runs in its
 * operator's step ({@link StepRunner}, from the operator's context), so metrics it reports belong
 * to its PTransform.
 *
 * <p>Reuse: any operator that runs a DoFn (e.g. a splittable DoFn's) gets its own
 * {@link Finalizer} from {@link OperatorContext#newFinalizer()} and calls
 * {@link Finalizer#bundleFinished()} at the end of each bundle.
 *
 * <p>Threading: confined to the container's thread, like the operators; a DoFn must register
 * callbacks from the thread that calls it.
 */
@Internal
public final class BundleFinalizers {
  private static final Logger LOG = LoggerFactory.getLogger(BundleFinalizers.class);

  /** One registered callback and the operator whose bundle registered it. */
  private record Registered(Finalizer owner, long expiryMs, DoFn.BundleFinalizer.Callback callback) {}

  /** Callbacks of finished bundles, waiting for the next commit. */
  private final List<Registered> finished = new ArrayList<>();
  private final LongSupplier wallClockMs;

  /** Finalizers on the system's wall clock. */
  public BundleFinalizers() {
    this(System::currentTimeMillis);
  }

  /** Finalizers on {@code wallClockMs} (epoch ms), for tests. */
  public BundleFinalizers(LongSupplier wallClockMs) {
    this.wallClockMs = wallClockMs;
  }

  /**
   * A finalizer for one operator instance.
   *
   * @param stepName the operator's PTransform, for log messages
   * @param step runs each callback in the operator's step
   */
  public Finalizer finalizer(String stepName, StepRunner step) {
    return new Finalizer(stepName, step);
  }

  /** Number of callbacks of finished bundles waiting for a commit. */
  public int waiting() {
    return finished.size();
  }

  /**
   * Runs the callbacks of every bundle finished so far; call right after a commit. Expired ones
   * are dropped, failing ones logged.
   *
   * @return the number of callbacks that ran without throwing
   */
  public int runCommitted() {
    if (finished.isEmpty()) {
      return 0;
    }
    List<Registered> batch = new ArrayList<>(finished); // taken out first: each runs at most once
    finished.clear();
    for (Registered r : batch) {
      r.owner().committing = 0;
    }
    long now = wallClockMs.getAsLong();
    int ran = 0;
    for (Registered r : batch) {
      if (now > r.expiryMs()) {
        LOG.debug("Dropping a bundle finalization callback of {}: it expired at {}", r.owner().stepName,
            new Instant(r.expiryMs()));
        continue;
      }
      if (runInStep(r)) {
        ran++;
      }
    }
    return ran;
  }

  /** Runs one callback in its operator's step; returns whether it completed without throwing. */
  private static boolean runInStep(Registered r) {
    boolean[] ok = new boolean[1]; // once per callback, not per element
    r.owner().step.run(() -> {
      try {
        r.callback().onBundleSuccess();
        ok[0] = true;
      } catch (Exception e) {
        LOG.warn("A bundle finalization callback of {} failed; it is not retried", r.owner().stepName, e);
      }
    });
    return ok[0];
  }

  /**
   * The {@link DoFn.BundleFinalizer} of one operator instance: collects the callbacks of the
   * operator's open bundle. Allocates only when a DoFn registers a callback.
   */
  public final class Finalizer implements DoFn.BundleFinalizer {
    private final String stepName;
    private final StepRunner step;
    private final List<Registered> open = new ArrayList<>();
    /** Callbacks of this operator's finished bundles waiting for the commit. */
    private int committing;

    private Finalizer(String stepName, StepRunner step) {
      this.stepName = stepName;
      this.step = step;
    }

    /**
     * Registers {@code callback} to run after the open bundle is committed, unless that happens
     * after {@code callbackExpiry}.
     */
    @Override
    public void afterBundleCommit(Instant callbackExpiry, Callback callback) {
      open.add(new Registered(this, callbackExpiry.getMillis(), callback));
    }

    /** The operator finished its bundle (after {@code @FinishBundle}): its callbacks wait for the commit. */
    public void bundleFinished() {
      if (!open.isEmpty()) {
        finished.addAll(open);
        committing += open.size();
        open.clear();
      }
    }

    /**
     * Whether callbacks this operator registered have not run yet: registered in the open bundle,
     * or in a finished one whose commit has not happened. An operator that lets a DoFn wait for its
     * callbacks (a splittable DoFn resuming until one ran) defers that DoFn's next call meanwhile.
     */
    public boolean hasUncommitted() {
      return !open.isEmpty() || committing > 0;
    }

    /** Number of callbacks registered in the open bundle (for tests). */
    public int pending() {
      return open.size();
    }
  }
}
