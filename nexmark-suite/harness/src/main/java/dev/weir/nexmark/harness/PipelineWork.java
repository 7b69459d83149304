// Role: the per-element work that Beam's Nexmark pipeline does around a query, apart from any
// runner, so that the `bare` limit measures the same work a runner is asked to do.
// Threading: one instance per bare worker thread; not thread-safe.
package dev.weir.nexmark.harness;

import org.apache.beam.sdk.nexmark.model.Event;
import org.apache.beam.sdk.nexmark.model.KnownSize;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Instant;

/**
 * What Nexmark 2.76's pipeline (with its defaults: {@code debug=true}, {@code sinkType=DEVNULL})
 * does per element besides the query itself, step by step as its transforms do it:
 *
 * <ol>
 *   <li>{@code <query>.Monitor} (its {@code Monitor} DoFn on events): an element counter, a bytes
 *       counter fed by {@link KnownSize#sizeInBytes()}, a processing-time distribution fed by
 *       {@link System#currentTimeMillis()} (one clock read per event) and an event-timestamp
 *       distribution;
 *   <li>{@code <query>.Snoop} ({@code NexmarkUtils.snoop}): an event counter and one counter per
 *       event kind;
 *   <li>the query (the caller's part);
 *   <li>{@code <query>.Debug} (the result {@code Monitor}): the same four updates per result;
 *   <li>{@code <query>.Stamp} ({@code NexmarkUtils.stamp}): a {@link TimestampedValue} per result;
 *   <li>{@code <query>.Format} ({@code NexmarkUtils.format}): a records counter and
 *       {@code toString()} of that value, which renders the result as JSON (Nexmark's model
 *       classes format themselves with Jackson) and its timestamp as ISO-8601;
 *   <li>{@code <query>.DevNull} ({@code NexmarkUtils.devNull}): a discarded counter.
 * </ol>
 *
 * Counters and distributions are plain fields here (count, sum, min, max: what Beam's metric
 * cells keep); a runner adds what it costs to find the cell of the running step. Nothing of the
 * runner model (windows, bundles, coders between steps) is done: that is the runner's cost.
 */
final class PipelineWork {
  private long eventElements;
  private long eventBytes;
  private final Dist eventProcessingTime = new Dist();
  private final Dist eventTimestamps = new Dist();
  private long snoopEvents;
  private long snoopPersons;
  private long snoopAuctions;
  private long snoopBids;
  private long resultElements;
  private long resultBytes;
  private final Dist resultProcessingTime = new Dist();
  private final Dist resultTimestamps = new Dist();
  private long formatted;
  private long formattedChars;
  private long discarded;

  /** Count, sum, min and max, as Beam's distribution cells keep them. */
  private static final class Dist {
    long count;
    long sum;
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;

    void update(long v) {
      count++;
      sum += v;
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
  }

  /** Steps 1-2 for one generated event with its event timestamp (ms). */
  void beforeQuery(Event event, long timestampMs) {
    eventElements++;
    eventBytes += event.sizeInBytes();
    eventProcessingTime.update(System.currentTimeMillis());
    eventTimestamps.update(timestampMs);
    snoopEvents++;
    if (event.newPerson != null) {
      snoopPersons++;
    } else if (event.newAuction != null) {
      snoopAuctions++;
    } else if (event.bid != null) {
      snoopBids++;
    }
  }

  /** Steps 4-7 for one query result carrying the event's timestamp (ms). */
  void afterQuery(KnownSize result, long timestampMs) {
    resultElements++;
    resultBytes += result.sizeInBytes();
    resultProcessingTime.update(System.currentTimeMillis());
    resultTimestamps.update(timestampMs);
    TimestampedValue<KnownSize> stamped = TimestampedValue.of(result, new Instant(timestampMs));
    formatted++;
    formattedChars += stamped.toString().length();
    discarded++;
  }

  /**
   * The wall-clock read of this worker's first event, epoch ms (as the event monitor's
   * {@code processingTime} minimum); {@link Long#MAX_VALUE} before any.
   */
  long firstEventMs() {
    return eventProcessingTime.min;
  }

  /**
   * The wall-clock read of this worker's last event or result, whichever is later, epoch ms (as
   * Nexmark's end of a run: the later of the event and the result monitor's {@code processingTime}
   * maxima); {@link Long#MIN_VALUE} before any.
   */
  long lastMs() {
    return Math.max(eventProcessingTime.max, resultProcessingTime.max);
  }

  /** A value depending on every update, so the JIT keeps them. */
  long digest() {
    return eventElements + eventBytes + eventProcessingTime.sum + eventTimestamps.max + snoopEvents
        + snoopPersons + snoopAuctions + snoopBids + resultElements + resultBytes
        + resultProcessingTime.min + resultTimestamps.count + formatted + formattedChars + discarded;
  }
}
