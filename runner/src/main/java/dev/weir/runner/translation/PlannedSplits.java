package dev.weir.runner.translation;

import org.apache.beam.sdk.annotations.Internal;

/**
 * Source splits given to a translation from outside it, by the Read transform's full name: an
 * execution environment whose processes share one split plan (the Samza environments'
 * {@code SourceSplitPlan}) translates the pipeline again with the plan's splits, so that a source
 * stage gets exactly the plan's number of partitions and every stage and stream whose partitioning
 * follows it (a FORWARD stage, a Flatten, the producer count of the streams it writes) agrees with
 * the plan. A Read this returns null for is split by the translation as usual ({@code ReadTranslator}).
 *
 * <p>Threading: called on the translating thread only.
 */
@Internal
@FunctionalInterface
public interface PlannedSplits {
  /** No splits given: every source is split by the translation. */
  PlannedSplits NONE = stepName -> null;

  /**
   * The splits of the Read step {@code stepName}: a {@link SourceSpec.Bounded} for a bounded read,
   * a {@link SourceSpec.Unbounded} for an unbounded one; or null to let the translation split it.
   */
  SourceSpec sourceOf(String stepName);
}
