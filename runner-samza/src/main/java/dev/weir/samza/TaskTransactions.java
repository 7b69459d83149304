package dev.weir.samza;

import java.util.HashMap;
import java.util.Map;

/**
 * The {@link TaskTransaction}s open in this JVM, by transactional id ({@code <prefix>-<task
 * name>}, the prefix naming the job instance: {@link KafkaSettings#transactionalIdPrefix()}).
 * samza-core creates a container's checkpoint manager and its system producer separately, and
 * both need the same task's producer: the checkpoint manager writes the checkpoint record that
 * commits the transaction, the system producer sends the task's records in it. Each acquires the
 * task's transaction here and releases it when it stops; the checkpoint manager's acquire (the
 * first of a container) creates it and fences the task's earlier owners, the producer's shares it,
 * the last release closes it.
 *
 * <p>Threading: thread-safe (one lock over the map; creating a transaction blocks other acquires
 * for the time {@code initTransactions()} takes).
 */
final class TaskTransactions {
  private static final Map<String, TaskTransaction> OPEN = new HashMap<>();

  private TaskTransactions() {}

  /** The transactional id of task {@code taskName} of the job instance {@code prefix}. */
  static String transactionalId(String prefix, String taskName) {
    return prefix + "-" + taskName;
  }

  /**
   * The task's transaction; the caller must {@link #release} it.
   *
   * @param fresh true for the first holder of a new container (its checkpoint manager): a new
   *     transactional producer, which fences every earlier owner of the task, including a
   *     transaction an earlier container in this JVM left behind (samza-core's ZooKeeper
   *     coordinator restarts the container on every new job model; what the old one sent and did
   *     not commit must not join the new one's first commit); false to share the one open here
   *     (the container's system producer), or create it if there is none
   * @throws IllegalStateException naming the id and the broker if Kafka refuses the transactions
   */
  static TaskTransaction acquire(KafkaSettings settings, String taskName, boolean fresh) {
    String id = transactionalId(settings.transactionalIdPrefix(), taskName);
    TaskTransaction replaced = null;
    TaskTransaction t;
    synchronized (OPEN) {
      t = OPEN.get(id);
      if (t == null || fresh) {
        replaced = t;
        t = new TaskTransaction(id, settings);
        OPEN.put(id, t);
      }
      t.references++;
    }
    if (replaced != null) {
      replaced.close(); // already fenced by the new producer; its holders' next calls fail
    }
    return t;
  }

  /** The task's transaction if one is open in this JVM, else null. */
  static TaskTransaction find(String prefix, String taskName) {
    synchronized (OPEN) {
      return OPEN.get(transactionalId(prefix, taskName));
    }
  }

  /** Gives back one reference; the last closes the producer (and forgets it, unless a fresh one replaced it). */
  static void release(TaskTransaction t) {
    boolean close;
    synchronized (OPEN) {
      close = --t.references == 0;
      if (close) {
        OPEN.remove(t.transactionalId(), t);
      }
    }
    if (close) {
      t.close();
    }
  }
}
