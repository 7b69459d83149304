package dev.weir.runner.stream;

import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.values.WindowedValue;

/**
 * An element sent over a shuffle together with its encoded key, as one message of an in-process
 * stream partition. The consuming task hands the key bytes to its entry operator, which then does
 * not encode the key again.
 *
 * <p>Why not a samza-api {@code IncomingMessageEnvelope}: on Weir's in-process path a polled
 * message is either the element itself (a source split's, or an unkeyed stream's), this record, a
 * {@link ProducerWatermark} or a {@link ProducerEndOfStream}; the consumer knows the partition
 * already (its container polls it), so no envelope is needed. samza-api's envelope constructor
 * reads the wall clock for its arrival time on every element, whichever constructor is used (3–6%
 * of the CPU samples of Nexmark Q2 on Weir). Only hosts that speak samza-api (samza-core's run loop
 * in {@code dev.weir.runner.samza}) wrap messages in envelopes, see {@link #keyOf} and
 * {@link #messageOf}.
 *
 * <p>Immutable; the key array is not copied and must not be changed after sending.
 *
 * @param key the key's bytes in the shuffle's key coder
 * @param element the element, a {@code KV} whose key {@code key} encodes
 */
@Internal
public record KeyedElement(byte[] key, WindowedValue<?> element) {

  /** The key bytes {@code polled} carries: a {@link KeyedElement}'s key, else null. */
  public static byte[] keyOf(Object polled) {
    return polled instanceof KeyedElement keyed ? keyed.key : null;
  }

  /** {@code polled} without its key: a {@link KeyedElement}'s element, else {@code polled} itself. */
  public static Object messageOf(Object polled) {
    return polled instanceof KeyedElement keyed ? keyed.element : polled;
  }

  /**
   * The message to send for {@code message} with {@code key}: {@code message} itself if
   * {@code key} is null.
   *
   * @throws ClassCastException if {@code key} is not null and {@code message} not a {@code WindowedValue}
   */
  public static Object of(byte[] key, Object message) {
    return key == null ? message : new KeyedElement(key, (WindowedValue<?>) message);
  }
}
