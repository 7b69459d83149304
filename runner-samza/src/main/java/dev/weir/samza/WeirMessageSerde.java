package dev.weir.samza;

import dev.weir.runner.stream.ProducerEndOfStream;
import dev.weir.runner.stream.ProducerWatermark;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.samza.serializers.Serde;

/**
 * The one encoding of the messages on a Weir intermediate stream across processes (a Kafka topic):
 * Beam elements as {@code WindowedValue}s, and Weir's per-producer control messages,
 * {@link ProducerWatermark} and {@link ProducerEndOfStream}, which the consuming task aggregates
 * over the producer tasks exactly as the embedded executor does. A samza-api {@link Serde}, so
 * samza-core applies it to the stream ({@code streams.<id>.samza.msg.serde}); serializable, as
 * Samza's descriptors store serde instances in the job config.
 *
 * <p>Format (big-endian), the first byte is the kind (it doubles as the format's version: a new
 * field gets a new kind, and the older kinds stay readable):
 * <ul>
 *   <li>{@value #ELEMENT}: then the element encoded with the stream's full {@code WindowedValue}
 *       coder (value, timestamp, windows, pane). An element without a sequence number: written by
 *       tasks that do not number their output (see {@link SamzaStageTaskFactory}) and by Weir
 *       before sequence numbers existed; decoded to the {@code WindowedValue}, which a consumer
 *       always takes (at-least-once: never dropped as a replay);
 *   <li>{@value #SEQUENCED_ELEMENT}: then the producer task's partition index ({@code int}), the
 *       element's sequence number ({@code long}, from 1) and the element as for
 *       {@value #ELEMENT}; decoded to a {@link SequencedElement}. The consumer drops it if the
 *       number is not above the highest it took from that producer ({@link MessageSequences}).
 *       Exactly once only if a restarted producer sends the same elements in the same order to
 *       each partition as before its restart: true for a source stage re-reading a split from its
 *       checkpointed position (e.g. one Kafka partition) through deterministic DoFns; a stage with
 *       several inputs (a shuffle's many producers, a Flatten, side inputs) interleaves them
 *       differently after a restart, so such stages send {@value #ELEMENT};
 *   <li>{@value #WATERMARK}: then the producer's partition index ({@code int}), the watermark in
 *       epoch ms ({@code long}) and the producer's task name (modified UTF-8);
 *   <li>{@value #END_OF_STREAM}: then the producer's partition index ({@code int}) and task name;
 *   <li>{@value #DRAINED_WATERMARK}: as {@value #WATERMARK}, for a watermark the job's drain moved
 *       ({@link ProducerWatermark#drained()}).
 * </ul>
 *
 * <p>Errors: a message of an unknown kind, truncated, or with bytes left over fails with an
 * {@link IllegalArgumentException} naming the stream and what is wrong; an element the coder
 * cannot encode or decode fails with an {@link IllegalStateException} naming the stream.
 *
 * <p>Threading: immutable; coders are used from any thread (Beam coders are thread-safe).
 */
public final class WeirMessageSerde implements Serde<Object>, Serializable {
  private static final long serialVersionUID = 1L;
  /** Kind byte of an element. */
  public static final byte ELEMENT = 0;
  /** Kind byte of a producer's watermark. */
  public static final byte WATERMARK = 1;
  /** Kind byte of a producer's end of stream. */
  public static final byte END_OF_STREAM = 2;
  /** Kind byte of an element with its producer's sequence number ({@link SequencedElement}). */
  public static final byte SEQUENCED_ELEMENT = 3;
  /** Kind byte of a producer's watermark moved by the job's drain. */
  public static final byte DRAINED_WATERMARK = 4;

  private final String stream;
  private final Coder<WindowedValue<?>> coder;

  /**
   * @param stream the stream's name, for error messages
   * @param coder the full {@code WindowedValue} coder of the stream's elements
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public WeirMessageSerde(String stream, Coder<?> coder) {
    this.stream = stream;
    this.coder = (Coder) coder;
  }

  /**
   * Encodes an element (a {@code WindowedValue} or a {@link SequencedElement}), watermark or end of stream (see
   * the class comment).
   *
   * @throws IllegalArgumentException for any other message
   * @throws IllegalStateException if the coder cannot encode the element
   */
  @Override
  public byte[] toBytes(Object message) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
    DataOutputStream out = new DataOutputStream(bytes);
    try {
      if (message instanceof WindowedValue<?> element) {
        out.writeByte(ELEMENT);
        try {
          coder.encode(element, out);
        } catch (RuntimeException e) { // e.g. a window the window coder cannot take
          throw new IllegalStateException("cannot encode an element of stream " + stream + " with " + coder, e);
        }
      } else if (message instanceof SequencedElement sequenced) {
        out.writeByte(SEQUENCED_ELEMENT);
        out.writeInt(sequenced.producer());
        out.writeLong(sequenced.sequence());
        try {
          coder.encode(sequenced.element(), out);
        } catch (RuntimeException e) {
          throw new IllegalStateException("cannot encode an element of stream " + stream + " with " + coder, e);
        }
      } else if (message instanceof ProducerWatermark watermark) {
        out.writeByte(watermark.drained() ? DRAINED_WATERMARK : WATERMARK);
        out.writeInt(watermark.producer());
        out.writeLong(watermark.getTimestamp());
        out.writeUTF(watermark.getTaskName());
      } else if (message instanceof ProducerEndOfStream end) {
        out.writeByte(END_OF_STREAM);
        out.writeInt(end.producer());
        out.writeUTF(end.getTaskName());
      } else {
        throw new IllegalArgumentException("stream " + stream + " carries Beam WindowedValues, SequencedElements "
            + "and Weir's ProducerWatermark and ProducerEndOfStream, not " + (message == null ? "null" : message.getClass().getName()));
      }
      out.flush();
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode an element of stream " + stream + " with " + coder, e);
    }
    return bytes.toByteArray();
  }

  /**
   * Decodes what {@link #toBytes} wrote.
   *
   * @throws IllegalArgumentException naming the stream if the bytes are not a Weir message
   * @throws IllegalStateException naming the stream if the coder cannot decode the element
   */
  @Override
  public Object fromBytes(byte[] bytes) {
    if (bytes == null || bytes.length == 0) {
      throw corrupt("it is empty", bytes);
    }
    ByteArrayInputStream buffer = new ByteArrayInputStream(bytes, 1, bytes.length - 1);
    DataInputStream in = new DataInputStream(buffer);
    Object message;
    try {
      switch (bytes[0]) {
        case ELEMENT -> {
          try {
            message = coder.decode(in);
          } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot decode an element of stream " + stream + " with " + coder
                + " (" + bytes.length + " bytes)", e);
          }
        }
        case SEQUENCED_ELEMENT -> {
          int producer = in.readInt();
          long sequence = in.readLong();
          if (producer < 0 || sequence < 1) {
            throw corrupt("its producer is " + producer + " and its sequence " + sequence
                + " (allowed: producer >= 0, sequence >= 1)", bytes);
          }
          WindowedValue<?> element;
          try {
            element = coder.decode(in);
          } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot decode an element of stream " + stream + " with " + coder
                + " (" + bytes.length + " bytes)", e);
          }
          message = new SequencedElement(producer, sequence, element);
        }
        case WATERMARK, DRAINED_WATERMARK -> {
          int producer = in.readInt();
          long timestampMs = in.readLong();
          message = new ProducerWatermark(timestampMs, producer, in.readUTF(), bytes[0] == DRAINED_WATERMARK);
        }
        case END_OF_STREAM -> {
          int producer = in.readInt();
          message = new ProducerEndOfStream(producer, in.readUTF());
        }
        default -> throw corrupt("its kind byte is " + bytes[0] + " (allowed: " + ELEMENT + " element, " + WATERMARK
            + " watermark, " + END_OF_STREAM + " end of stream, " + SEQUENCED_ELEMENT + " sequenced element, "
            + DRAINED_WATERMARK + " drained watermark)", bytes);
      }
    } catch (IOException e) {
      throw corrupt("it is truncated (" + e.getClass().getSimpleName() + ")", bytes);
    }
    if (buffer.available() > 0) {
      throw corrupt(buffer.available() + " byte(s) are left after the message", bytes);
    }
    return message;
  }

  private IllegalArgumentException corrupt(String what, byte[] bytes) {
    return new IllegalArgumentException("corrupt message on Weir stream " + stream + ": " + what + "; length "
        + (bytes == null ? "null" : bytes.length + " bytes"));
  }
}
