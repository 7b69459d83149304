package dev.weir.samza;

/**
 * Where a job's {@link SourceSplitPlan} lives so that every process of the job reads the same one:
 * an append-only log of plan envelopes of which the first is the job's plan
 * ({@link SourceSplitPlan#resolve}). Implementations: {@link KafkaSplitPlanStore} (a topic of the
 * job) and {@link FileSplitPlanStore} (a file the user names).
 *
 * <p>Threading: used by one thread at a time (the submitting thread at the job's start).
 */
interface SplitPlanStore {
  /**
   * The first envelope in the store, or null if it holds none.
   *
   * @throws IllegalStateException naming the store if it cannot be read in time
   */
  byte[] first();

  /**
   * Appends {@code envelope}; of two concurrent appends, one is first for every later {@link #first}.
   *
   * @throws IllegalStateException naming the store and the size if it refuses the envelope
   */
  void append(byte[] envelope);

  /**
   * When the store holds no plan: a description of the progress the job has made nonetheless (e.g.
   * checkpoints of its tasks), meaning its plan was deleted; null for a job that has not started.
   */
  default String progressWithoutPlan() {
    return null;
  }

  /** The store for messages, e.g. {@code topic weir-job-1-plan on Kafka at 127.0.0.1:9092}. */
  String describe();
}
