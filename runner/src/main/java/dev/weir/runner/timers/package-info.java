/**
 * Beam timers over state-cache: {@link dev.weir.runner.timers.KeyedTimers} (a keyed operator's
 * {@code TimerInternals}: event- and processing-time timers, firing in bounded slices, watermark
 * holds of timer output timestamps) over {@link dev.weir.runner.timers.TimerIndex}, a
 * timestamp-ordered index in the container's store with a bounded in-memory heap.
 *
 * <p>Threading: the owning container's thread.
 */
package dev.weir.runner.timers;
